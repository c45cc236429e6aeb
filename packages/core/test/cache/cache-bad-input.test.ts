import { describe, expect, it } from "vitest";
import {
  KVCache,
  LatentCache,
  Matrix,
  NonFiniteError,
  Rope,
  ShapeError,
  ValueError,
  initMlaWeights,
  initMultiHeadWeights,
  mergeMla,
  mlaDecode,
  multiHeadDecode,
  randomMatrix,
} from "@randattn/core";

describe("caches and decoders reject bad input with typed, named errors", () => {
  const w = initMultiHeadWeights({ dIn: 6, numHeads: 4, numKvHeads: 2, headDim: 2 }, [26, "w"]);
  const x = randomMatrix(2, 6, {}, [26, "x"]);

  it("KVCache: bad sizes, wrong head count, wrong widths, NaN — and a rejected append changes nothing", () => {
    expect(() => new KVCache({ numKvHeads: 0, keyDim: 2, valueDim: 2 })).toThrow(/opts.numKvHeads: expected an integer ≥ 1, got 0/);
    const cache = new KVCache({ numKvHeads: 2, keyDim: 2, valueDim: 3 });
    const k = randomMatrix(1, 2, {}, [1]);
    const v = randomMatrix(1, 3, {}, [2]);
    expect(() => cache.append([k], [v])).toThrow(/keys: expected 2 matrices \(one per KV head\), got 1/);
    expect(() => cache.append([k, k], [v, randomMatrix(1, 2, {}, [3])])).toThrow(/values\[1\]: expected 1×3/);
    expect(() => cache.append([k, randomMatrix(2, 2, {}, [4])], [v, v])).toThrow(
      /keys\[1\]: expected 1×2 \(t×keyDim, t = keys\[0\].rows\), got 2×2/,
    );
    const bad = v.clone();
    bad.set(0, 2, Number.NaN);
    expect(() => cache.append([k, k], [v, bad])).toThrow(NonFiniteError);
    expect(cache.length).toBe(0);
    expect(() => cache.keys(2)).toThrow(/g: expected an integer in \[0, 1\], got 2/);
  });

  it("LatentCache: missing or unexpected rotary block, wrong width", () => {
    const withRope = new LatentCache({ latentDim: 3, ropeDim: 2 });
    expect(() => withRope.append(randomMatrix(1, 3, {}, [1]))).toThrow(/rotaryKeys: expected 1×2 \(cache has ropeDim 2\), got undefined/);
    expect(() => new LatentCache({ latentDim: 3 }).append(randomMatrix(1, 3, {}, [1]), randomMatrix(1, 2, {}, [1]))).toThrow(
      /rotaryKeys: expected undefined \(cache has ropeDim 0\)/,
    );
    expect(() => withRope.append(randomMatrix(1, 4, {}, [1]), randomMatrix(1, 2, {}, [1]))).toThrow(
      /latent: expected \*×3 \(cols = latentDim\), got 1×4/,
    );
    expect(() => new LatentCache({ latentDim: 3, ropeDim: -1 })).toThrow(/opts.ropeDim: expected an integer ≥ 0, got -1/);
  });

  it("multiHeadDecode: cache/weights mismatch, wrong input width, NaN, refused options, non-divisible heads", () => {
    expect(() => multiHeadDecode(x, w, new KVCache({ numKvHeads: 4, keyDim: 2, valueDim: 2 }))).toThrow(
      /cache: expected numKvHeads 2, keyDim 2, valueDim 2 \(from weights\), got numKvHeads 4/,
    );
    const cache = new KVCache({ numKvHeads: 2, keyDim: 2, valueDim: 2 });
    expect(() => multiHeadDecode(randomMatrix(1, 5, {}, [1]), w, cache)).toThrow(/xNew: expected \*×6/);
    expect(() => multiHeadDecode(new Matrix(0, 6), w, cache)).toThrow(ShapeError);
    const xn = x.clone();
    xn.set(1, 0, Number.POSITIVE_INFINITY);
    expect(() => multiHeadDecode(xn, w, cache)).toThrow(/xNew: expected finite entries, got Infinity at \[1, 0\]/);
    expect(() => multiHeadDecode(x, w, cache, { mask: { kind: "causal" } })).toThrow(/options.mask: expected undefined/);
    expect(() => multiHeadDecode(x, w, cache, { rope: new Rope(2), keyPositions: [0, 1] })).toThrow(/options.keyPositions/);
    expect(() => multiHeadDecode(x, w, cache, { rope: new Rope(4) })).toThrow(/options.rope: expected a Rope of dim 2 \(d_QK\), got dim 4/);
    const w3 = { ...w, keys: [...w.keys, w.keys[0]], values: [...w.values, w.values[0]] };
    expect(() => multiHeadDecode(x, w3, new KVCache({ numKvHeads: 3, keyDim: 2, valueDim: 2 }))).toThrow(ValueError);
    expect(cache.length).toBe(0);
  });

  it("multiHeadDecode: a NaN/±Inf weight is named by its first bad entry and leaves the cache unchanged", () => {
    const cache = new KVCache({ numKvHeads: 2, keyDim: 2, valueDim: 2 });
    for (const [name, i] of [
      ["queries", 3],
      ["keys", 1],
      ["values", 0],
    ] as const) {
      const bad = w[name][i].clone();
      bad.set(4, 1, name === "keys" ? Number.NEGATIVE_INFINITY : Number.NaN);
      const list = w[name].slice();
      list[i] = bad;
      const wb = { ...w, [name]: list };
      expect(() => multiHeadDecode(x, wb, cache)).toThrow(NonFiniteError);
      expect(() => multiHeadDecode(x, wb, cache)).toThrow(
        new RegExp(`weights\\.${name}\\[${i}\\]: expected finite entries, got ${name === "keys" ? "-Infinity" : "NaN"} at \\[4, 1\\]`),
      );
    }
    const out = w.output.clone();
    out.set(0, 0, Number.NaN);
    expect(() => multiHeadDecode(x, { ...w, output: out }, cache)).toThrow(/weights\.output: expected finite entries, got NaN at \[0, 0\]/);
    expect(cache.length).toBe(0);
  });

  it("mlaDecode: cache mismatch, naive RoPE, wrong width", () => {
    const m = mergeMla(initMlaWeights({ dIn: 6, numHeads: 2, latentDim: 3, queryLatentDim: 4, headDim: 2 }, [26, "mla"]));
    expect(() => mlaDecode(x, m, new LatentCache({ latentDim: 4 }))).toThrow(
      /cache: expected latentDim 3, ropeDim 0 \(from merged weights\), got latentDim 4/,
    );
    const cache = new LatentCache({ latentDim: 3 });
    expect(() => mlaDecode(x, m, cache, { rope: new Rope(2) })).toThrow(
      /options.rope: expected merged weights with a decoupled rotary part/,
    );
    expect(() => mlaDecode(randomMatrix(1, 7, {}, [1]), m, cache)).toThrow(
      /xNew: expected \*×6 \(cols = d_in = merged.queryDown.rows\), got 1×7/,
    );
    expect(cache.length).toBe(0);
  });
});
