// Issue #6: one rule for every public options bag of core. `undefined` means the defaults; `null`,
// a number, a string or an array is a ValueError naming `options` (validate.ts `assertOptions`) —
// never a TypeError from reading `options.x` (randomMatrix(r, c, key, null) used to be one) and
// never a silent "no options" (attention32(q, k, v, null) used to spread null into {}).
import {
  type AttentionSpec,
  BpeTokenizer,
  Embedding,
  Matrix,
  Rope,
  ValueError,
  Vocabulary,
  WordTokenizer,
  attention32,
  attentionWeightBreakdown,
  createDecoderState,
  createLayerCache,
  decodeFlops,
  decodeTarget,
  decoderLayer,
  decoderLayerStep,
  dotKernel,
  embedTokens,
  encodeNpy,
  encodeSource,
  encoderDecoderStep,
  encoderLayer,
  encoderOnlyHidden,
  initDecoderLayer,
  initEmbedding,
  initLearnedPositionalEmbedding,
  initWeight,
  initEncoderDecoder,
  initEncoderLayer,
  initEncoderOnly,
  initLayerNorm,
  initMlaWeights,
  initRMSNorm,
  kvCacheFloatsPerToken,
  mergeMla,
  mergedMlaAttention,
  mlaAttention,
  modelKvCacheFloats,
  parseNpy,
  randomMatrix,
  sinusoidalPositionalEncoding,
  streamingAttention32,
  table3Rows,
  addPositional,
} from "@randattn/core";
import { assertOptions, optionsObject } from "@randattn/core/internal";
import { encodeNpz, parallelMultiHeadAttention, parseNpz } from "@randattn/core/node";
import { describe, expect, it } from "vitest";

const spec: AttentionSpec = { form: "gqa", dIn: 16, numHeads: 4, numKvHeads: 2, headDim: 4 };
const q = randomMatrix(3, 4, {}, [1, "q"]);
const k = randomMatrix(5, 4, {}, [1, "k"]);
const v = randomMatrix(5, 2, {}, [1, "v"]);
const layerConfig = { dModel: 8, numHeads: 2 };
const encLayer = initEncoderLayer(layerConfig, [2]);
const decLayer = initDecoderLayer({ ...layerConfig, crossAttention: false }, [3]);
const x = randomMatrix(3, 8, {}, [4]);
const modelConfig = { vocabSize: 11, numLayers: 1, dModel: 8, numHeads: 2, dHidden: 16, maxPositions: 16 };
const encoderOnly = initEncoderOnly(modelConfig, [5]);
const encDec = initEncoderDecoder(modelConfig, [6]);
const mla = initMlaWeights({ dIn: 6, numHeads: 2, latentDim: 3, queryLatentDim: 4, headDim: 2 }, [7]);
const vocab = new Vocabulary(["<pad>", "<unk>", "<bos>", "<eos>", "a", "b"]);
const word = new WordTokenizer(vocab);
const emb = initEmbedding(6, 4, {}, [8]);
const npy = encodeNpy(q);
const npz = encodeNpz({ q });
const bpeApi = {
  encode: (s: string) => Array.from(s, (c) => c.charCodeAt(0) % 7),
  decode: (ids: number[]) => ids.join(" "),
  vocabularySize: 7,
};

/** Each public function with an options bag, called with valid arguments and the given options. */
const CALLS: [string, (o: unknown) => unknown][] = [
  ["decodeFlops", (o) => decodeFlops(spec, 4, o as never)],
  ["attentionWeightBreakdown", (o) => attentionWeightBreakdown(spec, o as never)],
  ["kvCacheFloatsPerToken", (o) => kvCacheFloatsPerToken(spec, o as never)],
  ["modelKvCacheFloats", (o) => modelKvCacheFloats(spec, 8, 2, o as never)],
  ["table3Rows", (o) => table3Rows(undefined, o as never)],
  ["dotKernel", (o) => dotKernel((s) => Math.max(s, 0) + 1, o as never)],
  ["mlaAttention", (o) => mlaAttention(randomMatrix(3, 6, {}, [9]), randomMatrix(4, 6, {}, [10]), mla, o as never)],
  ["mergedMlaAttention", (o) => mergedMlaAttention(randomMatrix(3, 6, {}, [9]), randomMatrix(4, 6, {}, [10]), mergeMla(mla), o as never)],
  ["encoderLayer", (o) => encoderLayer(x, encLayer, o as never)],
  ["decoderLayer", (o) => decoderLayer(x, decLayer, undefined, o as never)],
  ["decoderLayerStep", (o) => decoderLayerStep(x, decLayer, createLayerCache(decLayer), undefined, o as never)],
  ["initLayerNorm", (o) => initLayerNorm(4, o as never)],
  ["initRMSNorm", (o) => initRMSNorm(4, o as never)],
  ["encoderOnlyHidden", (o) => encoderOnlyHidden(encoderOnly, [1, 2, 3], o as never)],
  ["encodeSource", (o) => encodeSource(encDec, [1, 2, 3], o as never)],
  ["decodeTarget", (o) => decodeTarget(encDec, encodeSource(encDec, [1, 2]), [3, 4], o as never)],
  ["encoderDecoderStep", (o) => encoderDecoderStep(encDec, createDecoderState(encDec), encodeSource(encDec, [1, 2]), [3], o as never)],
  ["new Rope", (o) => new Rope(4, o as never)],
  ["new BpeTokenizer", (o) => new BpeTokenizer("cl100k_base", bpeApi as never, o as never)],
  ["new Embedding", (o) => new Embedding(randomMatrix(5, 4, {}, [12]), o as never)],
  ["sinusoidalPositionalEncoding", (o) => sinusoidalPositionalEncoding(3, 4, o as never)],
  ["addPositional", (o) => addPositional(randomMatrix(3, 4, {}, [14]), sinusoidalPositionalEncoding(5, 4), o as never)],
  ["embedTokens", (o) => embedTokens([1, 2], emb, o as never)],
  ["new Vocabulary", (o) => new Vocabulary(["a", "b"], o as never)],
  ["Vocabulary.fromSequences", (o) => Vocabulary.fromSequences([["a", "b"]], o as never)],
  ["new WordTokenizer", (o) => new WordTokenizer(vocab, o as never)],
  ["WordTokenizer.fromCorpus", (o) => WordTokenizer.fromCorpus(["a b"], o as never)],
  ["WordTokenizer.decode", (o) => word.decode([4, 5], o as never)],
  ["parseNpy", (o) => parseNpy(npy, o as never)],
  ["encodeNpy", (o) => encodeNpy(q, o as never)],
  ["parseNpz", (o) => parseNpz(npz, o as never)],
  ["encodeNpz", (o) => encodeNpz({ q }, o as never)],
  ["attention32", (o) => attention32(q, k, v, o as never)],
  ["streamingAttention32", (o) => streamingAttention32(q, k, v, o as never)],
];

// Seeded functions take a REQUIRED options object before the seed (issue 9, docs/MIGRATION.md):
// undefined is refused too, so a call in the old `(…, seed, options?)` order cannot slip through.
const REQUIRED: [string, (o: unknown) => unknown][] = [
  ["randomMatrix", (o) => randomMatrix(2, 3, o as never, [11])],
  ["initWeight", (o) => initWeight(2, 3, o as never, [11])],
  ["initEmbedding", (o) => initEmbedding(5, 4, o as never, [13])],
  ["initLearnedPositionalEmbedding", (o) => initLearnedPositionalEmbedding(5, 4, o as never, [13])],
];

describe("required options objects: {} = defaults, undefined / null / non-objects = ValueError naming options", () => {
  for (const [name, call] of REQUIRED) {
    it(name, () => {
      expect(() => call({})).not.toThrow();
      for (const bad of [undefined, null, 3, "options", [1]]) {
        try {
          call(bad);
          expect.unreachable(`${name}(${JSON.stringify(bad)}) returned`);
        } catch (e) {
          expect(e, `${name}(${JSON.stringify(bad)})`).toBeInstanceOf(ValueError);
          expect((e as ValueError).argument).toBe("options");
          expect((e as ValueError).expected).toContain("an options object");
        }
      }
    });
  }
});

describe("options bags: undefined = defaults, null / non-objects = ValueError naming options", () => {
  for (const [name, call] of CALLS) {
    it(name, () => {
      expect(() => call(undefined)).not.toThrow();
      expect(() => call({})).not.toThrow();
      for (const bad of [null, 3, "options", [1]]) {
        try {
          call(bad);
          expect.unreachable(`${name}(${JSON.stringify(bad)}) returned`);
        } catch (e) {
          expect(e, `${name}(${JSON.stringify(bad)})`).toBeInstanceOf(ValueError);
          expect((e as ValueError).argument).toBe("options");
          expect((e as ValueError).message).toContain("options");
          expect((e as ValueError).expected).toContain("an options object");
        }
      }
    });
  }

  it("parallelMultiHeadAttention rejects (async) with the same ValueError", async () => {
    const w = {
      queries: [randomMatrix(4, 2, {}, [15])],
      keys: [randomMatrix(4, 2, {}, [16])],
      values: [randomMatrix(4, 2, {}, [17])],
      output: randomMatrix(2, 4, {}, [18]),
    };
    await expect(parallelMultiHeadAttention(q, q, w, null as never)).rejects.toThrow(ValueError);
    await expect(parallelMultiHeadAttention(q, q, w, null as never)).rejects.toThrow("options: expected an options object");
  });

  it("assertOptions / optionsObject: the shared helper", () => {
    expect(optionsObject(undefined, "opts")).toEqual({});
    const o = { a: 1 };
    expect(optionsObject(o, "opts")).toBe(o);
    expect(() => assertOptions(null, "opts")).toThrow("opts: expected an options object (or undefined), got null");
    expect(() => assertOptions([], "opts")).toThrow("got array of length 0");
    expect(() => assertOptions(new Matrix(1, 1))).not.toThrow(); // any object is a bag (classes too)
  });
});
