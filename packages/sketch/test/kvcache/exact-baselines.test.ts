import {
  KVCache,
  Matrix,
  type ModelConfig,
  Rope,
  ShapeError,
  ValueError,
  createDecoderState,
  decoderOnlyStep,
  greedyGenerate,
  initDecoderOnly,
  initMultiHeadWeights,
  multiHeadDecode,
  randomMatrix,
} from "@randattn/core";
import { describe, expect, it } from "vitest";
import { type KvCacheName, createKvCache, kvCacheFactory, randomFeatureAttention } from "../../src/index.js";

function maxRel(a: Matrix, b: Matrix): number {
  let num = 0;
  let den = 0;
  for (let i = 0; i < a.data.length; i++) {
    num = Math.max(num, Math.abs(a.data[i] - b.data[i]));
    den = Math.max(den, Math.abs(b.data[i]));
  }
  return num / den;
}

const shape = { numKvHeads: 2, keyDim: 8, valueDim: 8 };
const weights = initMultiHeadWeights({ dIn: 12, numHeads: 4, numKvHeads: 2, headDim: 8, dOut: 12 }, [5, "w"]);
const rope = new Rope(8);

/** Prefill 7 tokens then 9 single-token steps through multiHeadDecode; returns the step outputs. */
function run(cache: ConstructorParameters<typeof Object>[0]): Matrix[] {
  const x = randomMatrix(16, 12, {}, [5, "x"]);
  const out: Matrix[] = [];
  const rows = (a: number, b: number) => new Matrix(b - a, 12, x.data.slice(a * 12, b * 12));
  out.push(multiHeadDecode(rows(0, 7), weights, cache, { rope }));
  for (let i = 7; i < 16; i++) out.push(multiHeadDecode(rows(i, i + 1), weights, cache, { rope }));
  return out;
}

// Budgets that cover the 16 tokens: nothing is evicted, so the cache must equal core decoding.
const covering: [KvCacheName, object][] = [
  ["full", {}],
  ["sliding-window", { window: 16 }],
  ["sink-window", { sinks: 4, window: 12 }],
  ["h2o", { heavy: 8, recent: 8 }],
  ["balance-kv", { blockSize: 16 }],
];

describe("exact baselines equal core decoding when the budget covers the sequence", () => {
  const reference = run(new KVCache(shape));
  for (const [name, opts] of covering) {
    it(name, () => {
      const got = run(createKvCache(name, { ...shape, ...opts } as never, [1, name]));
      for (let s = 0; s < got.length; s++) expect(maxRel(got[s], reference[s])).toBeLessThan(1e-12);
    });
  }

  it("a sliding window shorter than the sequence differs (the comparison can fail)", () => {
    const got = run(createKvCache("sliding-window", { ...shape, window: 4 }, [1]));
    expect(maxRel(got[got.length - 1], reference[reference.length - 1])).toBeGreaterThan(1e-3);
  });

  it("greedy generation with a covering window equals the exact cache token for token", () => {
    const config: ModelConfig = { vocabSize: 29, numLayers: 2, dModel: 16, numHeads: 4, numKvHeads: 2, dHidden: 24, positional: "rope" };
    const model = initDecoderOnly(config, [3, "model"]);
    const exact = greedyGenerate(model, [1, 5, 9, 2], { maxNewTokens: 8 });
    const windowed = greedyGenerate(model, [1, 5, 9, 2], {
      maxNewTokens: 8,
      cacheFactory: kvCacheFactory("sliding-window", { window: 12 }, [3]),
    });
    expect(windowed.tokens).toEqual(exact.tokens);
    expect(maxRel(windowed.logits, exact.logits)).toBeLessThan(1e-12);
  });
});

describe("random-feature state = causal random-feature attention", () => {
  it("prefill + steps match randomFeatureAttention's causal prefix-sum form to 1e-12", () => {
    const cache = createKvCache("random-features", { numKvHeads: 1, keyDim: 6, valueDim: 5, numFrequencies: 32 }, [9, "rf"]);
    const q = randomMatrix(20, 6, {}, [9, "q"]);
    const k = randomMatrix(20, 6, {}, [9, "k"]);
    const v = randomMatrix(20, 5, {}, [9, "v"]);
    const slice = (m: Matrix, a: number, b: number) => new Matrix(b - a, m.cols, m.data.slice(a * m.cols, b * m.cols));
    const got: number[] = [];
    for (const [a, b] of [
      [0, 8],
      [8, 9],
      [9, 14],
      [14, 20],
    ]) {
      const r = cache.step({ queries: [slice(q, a, b)], keys: [slice(k, a, b)], values: [slice(v, a, b)] });
      got.push(...r.outputs[0].data);
    }
    const omega = (cache as unknown as { frequencies(g: number): Matrix }).frequencies(0);
    const ref = randomFeatureAttention(q, k, v, { numFrequencies: 32, mask: { kind: "causal" }, omega }, [0]);
    expect(maxRel(new Matrix(20, 5, Float64Array.from(got)), ref.output)).toBeLessThan(1e-12);
  });
});

describe("the contract: mixed rotations, shapes and budgets are refused and leave the cache unchanged", () => {
  const names: [KvCacheName, object][] = [
    ["full", {}],
    ["h2o", { heavy: 2, recent: 2 }],
    ["kivi", { bits: 2, groupSize: 4 }],
    ["qjl", {}],
    ["turbo-quant", { bits: 3 }],
    ["subgen", {}],
    ["balance-kv", { blockSize: 2 }],
    ["random-features", {}],
  ];
  for (const [name, opts] of [["exact", {}] as [string, object], ...names]) {
    it(`${name}: a step without the prefill's rotation throws naming options.rope; the cache equals an untouched twin`, () => {
      const make = () => (name === "exact" ? new KVCache(shape) : createKvCache(name as KvCacheName, { ...shape, ...opts } as never, [2]));
      const cache = make();
      const twin = make();
      const x = randomMatrix(6, 12, {}, [2, "x"]);
      const first = new Matrix(5, 12, x.data.slice(0, 60));
      const next = new Matrix(1, 12, x.data.slice(60));
      multiHeadDecode(first, weights, cache, { rope });
      multiHeadDecode(first, weights, twin, { rope });
      const bits = cache.bitsStored();
      expect(() => multiHeadDecode(next, weights, cache)).toThrow(ValueError);
      expect(() => multiHeadDecode(next, weights, cache)).toThrow(/options\.rope/);
      expect(() => multiHeadDecode(next, weights, cache, { rope, queryPositions: [2] })).toThrow(/options\.queryPositions/);
      const badKeys = [Matrix.zeros(1, 7), Matrix.zeros(1, 8)];
      expect(() => cache.step({ queries: [Matrix.zeros(1, 8), Matrix.zeros(1, 8)], keys: badKeys, values: badKeys })).toThrow(ShapeError);
      expect(cache.length).toBe(5);
      expect(cache.bitsStored()).toBe(bits);
      const a = multiHeadDecode(next, weights, cache, { rope });
      const b = multiHeadDecode(next, weights, twin, { rope });
      expect(Array.from(a.data)).toEqual(Array.from(b.data));
    });
  }

  it("budget 0, a budget beyond maxLength, unsupported bit widths and steps beyond maxLength are typed errors", () => {
    expect(() => createKvCache("sliding-window", { ...shape, window: 0 }, [0])).toThrow(ValueError);
    expect(() => createKvCache("sliding-window", { ...shape, window: 0 }, [0])).toThrow(/options\.window/);
    expect(() => createKvCache("h2o", { ...shape, heavy: 10, recent: 10, maxLength: 16 }, [0])).toThrow(/maxLength/);
    expect(() => createKvCache("kivi", { ...shape, bits: 9 }, [0])).toThrow(/options\.bits/);
    expect(() => createKvCache("kivi", { ...shape, bits: 0 }, [0])).toThrow(ValueError);
    expect(() => createKvCache("turbo-quant", { ...shape, bits: 1 }, [0])).toThrow(/options\.bits/);
    expect(() => createKvCache("qjl", { ...shape, valueBits: 1.5 }, [0])).toThrow(/options\.valueBits/);
    expect(() => createKvCache("nope" as KvCacheName, shape as never, [0])).toThrow(/name/);
    const capped = createKvCache("full", { ...shape, maxLength: 4 }, [0]);
    const x = Matrix.zeros(5, 12);
    expect(() => multiHeadDecode(x, weights, capped)).toThrow(ShapeError);
    expect(capped.length).toBe(0);
    expect(() =>
      createKvCache("full", { ...shape, kernel: 1 } as never, [0]).step({
        queries: [Matrix.zeros(1, 8), Matrix.zeros(1, 8), Matrix.zeros(1, 8), Matrix.zeros(1, 8)],
        keys: [Matrix.zeros(1, 8), Matrix.zeros(1, 8)],
        values: [Matrix.zeros(1, 8), Matrix.zeros(1, 8)],
        attention: { kernel: { kind: "dot", f: (s: number) => s } },
      }),
    ).toThrow(/options\.kernel/);
  });

  it("the decoder stacks take a factory per layer, seeded per layer", () => {
    const config: ModelConfig = { vocabSize: 29, numLayers: 3, dModel: 12, numHeads: 4, numKvHeads: 2, dHidden: 24 };
    const model = initDecoderOnly(config, [3, "model"]);
    const state = createDecoderState(model, { cacheFactory: kvCacheFactory("qjl", { projectionDim: 16 }, [4]) });
    expect(state.caches.map((c) => c.kind)).toEqual(["qjl", "qjl", "qjl"]);
    const p0 = (state.caches[0] as unknown as { projection: Matrix }).projection;
    const p1 = (state.caches[1] as unknown as { projection: Matrix }).projection;
    expect(p0.data[0]).not.toBe(p1.data[0]);
    decoderOnlyStep(model, state, [1, 2, 3]);
    expect(state.length).toBe(3);
    expect(() => createDecoderState(model, { cacheFactory: () => new KVCache({ numKvHeads: 1, keyDim: 3, valueDim: 3 }) })).toThrow(
      ShapeError,
    );
  });
});
