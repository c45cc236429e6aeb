// layers/, model/, tokens/ and accounting/ entries: norms, activations, FFN, residual blocks,
// encoder / decoder layers (full and cached), the three model stacks and greedy generation,
// vocabularies, tokenizers, embeddings, positional encodings, floats/FLOPs accounting.
import fc from "fast-check";
import {
  ACTIVATIONS,
  Embedding,
  FFN_KINDS,
  NORM_PLACEMENTS,
  Vocabulary,
  WordTokenizer,
  addPositional,
  applyActivation,
  applyNorm,
  attentionFlops,
  attentionWeightFloats,
  createLayerCache,
  decodeFlops,
  decoderLayer,
  decoderLayerStep,
  decoderOnlyForward,
  embedTokens,
  encoderDecoderForward,
  encoderLayer,
  encoderOnlyForward,
  feedForward,
  greedyGenerate,
  greedyToken,
  initDecoderLayer,
  initDecoderOnly,
  initEmbedding,
  initEncoderDecoder,
  initEncoderLayer,
  initEncoderOnly,
  initFfn,
  initLearnedPositionalEmbedding,
  initNorm,
  initSublayerNorms,
  kvCacheFloatsPerToken,
  modelKvCacheBytes,
  outputProbabilities,
  residualBlock,
  sinusoidalPositionalEncoding,
} from "@randattn/core";
import { type Entry, shapeIs } from "../harness.js";
import { dimArb, intArg, matArg, modeArg, numArg, posDimArb, seedArb } from "../gen.js";

/** Token id sequences for a vocabulary of size v: valid, empty, out of range, non-integer, not an array. */
function idsArb(v: number, maxLength = 4): fc.Arbitrary<unknown> {
  return fc.oneof(
    { weight: 8, arbitrary: fc.array(fc.integer({ min: 0, max: Math.max(0, v - 1) }), { minLength: 1, maxLength }) },
    {
      weight: 2,
      arbitrary: fc.constantFrom<unknown>([], [v], [-1], [0.5], [Number.NaN], null, "0 1", undefined, [0, Number.POSITIVE_INFINITY]),
    },
  );
}

/** A small layer config: valid (heads dividing the width), or broken in one field. */
const layerConfigArb: fc.Arbitrary<unknown> = fc.oneof(
  {
    weight: 8,
    arbitrary: fc.record(
      {
        dModel: fc.constantFrom(4, 6, 8),
        numHeads: fc.constantFrom(1, 2),
        numKvHeads: fc.constantFrom<unknown>(undefined, 1),
        dHidden: fc.oneof(fc.constant(undefined), intArg(1, 8)),
        ffn: modeArg(FFN_KINDS),
        norm: modeArg(["layer", "rms"]),
        placement: modeArg(NORM_PLACEMENTS),
        epsilon: fc.oneof(fc.constant(undefined), numArg(fc.constantFrom(1e-5, 1e-12, 1))),
      },
      { requiredKeys: ["dModel", "numHeads"] },
    ),
  },
  {
    weight: 1,
    arbitrary: fc.constantFrom<unknown>(
      null,
      {},
      { dModel: 5, numHeads: 2 },
      { dModel: 4, numHeads: 0 },
      { dModel: 4, numHeads: 2, numKvHeads: 3 },
      "layer",
    ),
  },
);

const modelConfigArb: fc.Arbitrary<unknown> = fc.oneof(
  {
    weight: 8,
    arbitrary: fc.record(
      {
        vocabSize: intArg(1, 12),
        numLayers: intArg(1, 2),
        dModel: fc.constantFrom(4, 8),
        numHeads: fc.constantFrom(1, 2),
        positional: modeArg(["sinusoidal", "learned", "rope", "none"]),
        placement: modeArg(NORM_PLACEMENTS),
        ffn: modeArg(["relu", "swiglu"]),
        maxPositions: fc.oneof(fc.constant(undefined), intArg(1, 8)),
        tieEmbeddings: fc.constantFrom<unknown>(undefined, true, false, "yes"),
      },
      { requiredKeys: ["vocabSize", "numLayers", "dModel", "numHeads"] },
    ),
  },
  { weight: 1, arbitrary: fc.constantFrom<unknown>(null, {}, { vocabSize: 0, numLayers: 1, dModel: 4, numHeads: 1 }, "gpt") },
);

const normArb = () =>
  fc.oneof(
    {
      weight: 8,
      arbitrary: fc
        .tuple(fc.constantFrom("layer" as const, "rms" as const), fc.oneof(fc.constant(undefined), fc.constantFrom(1e-5, 1e-12, 0)))
        .map(([k, epsilon]) => ({ kind: k, epsilon })),
    },
    { weight: 1, arbitrary: fc.constant({ kind: "bogus", epsilon: undefined }) },
  );

export const modelEntries: Entry[] = [
  {
    family: "layers",
    name: "layerNorm / rmsNorm / applyNorm(x, params) (initNorm)",
    args: fc
      .tuple(dimArb(4), posDimArb(5))
      .chain(([n, d]) => fc.tuple(matArg(n, d), fc.constant(d), normArb(), fc.oneof(fc.constant(d), intArg(0, 6)))),
    call: (x, _d, { kind, epsilon }, dimForNorm) => applyNorm(x, initNorm(kind, dimForNorm, epsilon === undefined ? {} : { epsilon })),
    check: (out, [x]) => shapeIs(out, x.rows, x.cols),
  },
  {
    family: "layers",
    name: "applyActivation(x, name)",
    args: fc.tuple(dimArb(4), dimArb(4)).chain(([n, d]) => fc.tuple(matArg(n, d), modeArg(ACTIVATIONS, 1, false))),
    call: applyActivation,
    check: (out, [x]) => shapeIs(out, x.rows, x.cols),
  },
  {
    family: "layers",
    name: "feedForward(x, initFfn(config, key))",
    args: fc.tuple(dimArb(4), posDimArb(5), posDimArb(6)).chain(([n, d, h]) =>
      fc.tuple(
        matArg(n, d),
        fc.record(
          {
            kind: modeArg(FFN_KINDS),
            dModel: fc.oneof(fc.constant(d), intArg(0, 6)),
            dHidden: intArg(1, h),
            bias: fc.constantFrom<unknown>(undefined, true, false),
          },
          { requiredKeys: ["dModel"] },
        ),
        seedArb,
      ),
    ),
    call: (x, config, key) => feedForward(x, initFfn(config, key)),
    check: (out, [x]) => shapeIs(out, x.rows, x.cols),
  },
  {
    family: "layers",
    name: "residualBlock(x, sublayer, placement, norms)",
    args: fc.tuple(dimArb(4), posDimArb(5)).chain(([n, d]) =>
      fc.tuple(
        matArg(n, d),
        fc.constantFrom<unknown>(
          (h: unknown) => h,
          () => null,
          "fn",
        ),
        modeArg(NORM_PLACEMENTS, 1, false),
        fc.oneof(fc.constant(d), intArg(0, 6)),
      ),
    ),
    call: (x, sub, placement, dim) => residualBlock(x, sub, placement, initSublayerNorms(placement, "rms", dim)),
    check: (out, [x]) => shapeIs(out, x.rows, x.cols),
  },
  {
    family: "layers",
    name: "encoderLayer / decoderLayer / decoderLayerStep(x, layer, …)",
    args: fc.tuple(layerConfigArb, seedArb, posDimArb(4), posDimArb(3), fc.constantFrom(0, 1, 2, 3)).chain(([config, key, n, m, which]) => {
      const d = (config as { dModel?: number } | null)?.dModel ?? 4;
      return fc.tuple(
        fc.constant(config),
        fc.constant(key),
        matArg(n, Number.isInteger(d) && d > 0 && d < 10 ? d : 4),
        matArg(m, Number.isInteger(d) && d > 0 && d < 10 ? d : 4),
        fc.constant(which),
      );
    }),
    call: (config, key, x, memory, which) => {
      if (which === 0) return encoderLayer(x, initEncoderLayer(config, key));
      const cross = which === 3;
      const layer = initDecoderLayer({ ...config, crossAttention: cross }, key);
      if (which === 1 || which === 3) return decoderLayer(x, layer, cross ? memory : undefined);
      const cache = createLayerCache(layer);
      decoderLayerStep(x, layer, cache);
      return decoderLayerStep(x, layer, cache);
    },
    check: (out, [config, , x]) => shapeIs(out, x.rows, config.dModel),
  },
  {
    family: "model",
    name: "decoderOnlyForward / encoderOnlyForward / encoderDecoderForward(model, ids)",
    args: fc.tuple(modelConfigArb, seedArb, fc.constantFrom(0, 1, 2)).chain(([config, key, which]) => {
      const v = (config as { vocabSize?: number } | null)?.vocabSize;
      const vs = typeof v === "number" && Number.isInteger(v) && v > 0 && v < 100 ? v : 4;
      return fc.tuple(fc.constant(config), fc.constant(key), idsArb(vs), idsArb(vs), fc.constant(which));
    }),
    call: (config, key, ids, tgt, which) => {
      if (which === 0) return decoderOnlyForward(initDecoderOnly(config, key), ids);
      if (which === 1) return encoderOnlyForward(initEncoderOnly(config, key), ids);
      return encoderDecoderForward(initEncoderDecoder(config, key), ids, tgt);
    },
    check: (out, [config, , ids, tgt, which]) => shapeIs(out, which === 2 ? tgt.length : ids.length, config.vocabSize),
  },
  {
    family: "model",
    name: "greedyGenerate(model, prompt, options)",
    numRuns: 60,
    args: fc.tuple(
      intArg(2, 9, 0),
      idsArb(6, 3),
      fc.record(
        {
          maxNewTokens: intArg(0, 3),
          stopToken: fc.constantFrom<unknown>(undefined, 1, -1, 0.5),
          cache: fc.constantFrom<unknown>(undefined, true, false, "no"),
        },
        { requiredKeys: [] },
      ),
    ),
    call: (vocabSize, prompt, options) =>
      greedyGenerate(initDecoderOnly({ vocabSize, numLayers: 1, dModel: 4, numHeads: 2, positional: "rope" }, [1, "gen"]), prompt, options),
    check: (out, [, , o]) => (Array.isArray(out.tokens) && out.tokens.length <= o.maxNewTokens ? undefined : `tokens ${out.tokens}`),
  },
  {
    family: "model",
    name: "outputProbabilities(logits) / greedyToken(logits, row)",
    args: fc
      .tuple(dimArb(4), dimArb(5))
      .chain(([n, v]) => fc.tuple(matArg(n, v), fc.oneof(fc.constant(undefined), intArg(0, 4)), fc.boolean())),
    call: (logits, row, greedy) => (greedy ? greedyToken(logits, row) : outputProbabilities(logits)),
    check: (out, [logits, , greedy]) =>
      greedy
        ? Number.isInteger(out) && out >= 0 && out < logits.cols
          ? undefined
          : `token ${out}`
        : shapeIs(out, logits.rows, logits.cols),
  },
  {
    family: "tokens",
    name: "Vocabulary / WordTokenizer.encode / decode",
    args: fc.tuple(
      fc.oneof(
        { weight: 6, arbitrary: fc.array(fc.string({ maxLength: 12 }), { maxLength: 3 }) },
        { weight: 1, arbitrary: fc.constantFrom<unknown>(null, "text", [null], [3]) },
      ),
      fc.oneof(
        { weight: 6, arbitrary: fc.string({ maxLength: 20 }) },
        { weight: 1, arbitrary: fc.constantFrom<unknown>(null, 3, undefined) },
      ),
      idsArb(8),
    ),
    call: (corpus, text, ids) => {
      const tok = WordTokenizer.fromCorpus(corpus);
      tok.encode(text);
      const v = new Vocabulary(["a", "b"]);
      v.idOf("a");
      return tok.decode(Array.isArray(ids) ? ids.filter((i: unknown) => typeof i !== "number" || i < tok.vocabulary.size) : ids);
    },
  },
  {
    family: "tokens",
    name: "initEmbedding / Embedding.lookup / embedTokens(ids, embedding)",
    args: fc
      .tuple(intArg(1, 6), intArg(1, 5), seedArb)
      .chain(([v, d, key]) =>
        fc.tuple(
          fc.constant(v),
          fc.constant(d),
          fc.constant(key),
          idsArb(typeof v === "number" && Number.isInteger(v) && v > 0 && v < 10 ? v : 3),
          fc.boolean(),
        ),
      ),
    call: (v, d, key, ids, viaEmbed) => {
      const e = initEmbedding(v, d, {}, key);
      return viaEmbed ? embedTokens(ids, e) : e.lookup(ids);
    },
    check: (out, [, d, , ids]) => shapeIs(out, ids.length, d),
  },
  {
    family: "tokens",
    name: "new Embedding(table) / sinusoidalPositionalEncoding / addPositional / initLearnedPositionalEmbedding",
    args: fc
      .tuple(dimArb(5), posDimArb(4))
      .chain(([n, d]) => fc.tuple(matArg(n, d), intArg(0, 6), fc.oneof(fc.constant(d), intArg(1, 6)), seedArb, fc.constantFrom(0, 1, 2))),
    call: (x, numPositions, dim, key, which) => {
      if (which === 0) return new Embedding(x).lookup([0]);
      if (which === 1) return addPositional(x, sinusoidalPositionalEncoding(numPositions, dim));
      return addPositional(x, initLearnedPositionalEmbedding(numPositions, dim, {}, key));
    },
    check: (out, [x, , , , which]) => (which === 0 ? shapeIs(out, 1, x.cols) : shapeIs(out, x.rows, x.cols)),
  },
  {
    family: "accounting",
    name: "attentionFlops / decodeFlops / kvCacheFloatsPerToken / attentionWeightFloats / modelKvCacheBytes(spec, …)",
    args: fc.tuple(
      fc.oneof(
        {
          weight: 8,
          arbitrary: fc.record(
            {
              form: modeArg(["mha", "gqa", "mqa", "mla"], 1, false),
              dIn: intArg(1, 64),
              numHeads: intArg(1, 8),
              numKvHeads: fc.oneof(fc.constant(undefined), intArg(1, 8)),
              headDim: intArg(1, 16),
              latentDim: intArg(1, 16),
              ropeDim: fc.oneof(fc.constant(undefined), intArg(0, 8)),
            },
            { requiredKeys: ["form", "dIn", "numHeads", "headDim", "latentDim"] },
          ),
        },
        { weight: 1, arbitrary: fc.constantFrom<unknown>(null, {}, "mha") },
      ),
      intArg(0, 1e6),
      // token counts up to 1e9: a step-by-step sum over tokens would hang (harness HANG_MS)
      intArg(0, 1e9),
      fc.constantFrom(0, 1, 2, 3, 4),
    ),
    call: (spec, nQ, nKV, which) => {
      if (which === 0) return attentionFlops(spec, { numQueries: nQ, numKeys: nKV });
      if (which === 1) return decodeFlops(spec, nKV);
      if (which === 2) return kvCacheFloatsPerToken(spec);
      if (which === 3) return attentionWeightFloats(spec);
      return modelKvCacheBytes(spec, nKV, nQ);
    },
  },
];
