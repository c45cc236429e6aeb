import { describe, expect, it } from "vitest";
import {
  type DecodeAttentionOptions,
  KVCache,
  LatentCache,
  Matrix,
  NonFiniteError,
  concatRows,
  randomMatrix,
  runAttention,
} from "@randattn/core";

describe("caches are append-only and grow by doubling", () => {
  it("KVCache keeps every appended row, per KV head, in order", () => {
    const cache = new KVCache({ numKvHeads: 2, keyDim: 3, valueDim: 2, initialCapacity: 2 });
    const chunks = [1, 3, 1, 4].map((t, c) => ({
      keys: [0, 1].map((g) => randomMatrix(t, 3, {}, [21, "k", c, g])),
      values: [0, 1].map((g) => randomMatrix(t, 2, {}, [21, "v", c, g])),
    }));
    const capacities: number[] = [];
    for (const { keys, values } of chunks) {
      cache.append(keys, values);
      capacities.push(cache.capacity);
    }
    expect(cache.length).toBe(9);
    // doubling rule: the smallest initialCapacity·2^k holding the running length
    let cap = 2;
    let len = 0;
    const expected = [1, 3, 1, 4].map((t) => {
      len += t;
      while (cap < len) cap *= 2;
      return cap;
    });
    expect(capacities).toEqual(expected);
    for (const g of [0, 1]) {
      expect(Array.from(cache.keys(g).data)).toEqual(Array.from(concatRows(chunks.map((c) => c.keys[g])).data));
      expect(Array.from(cache.values(g).data)).toEqual(Array.from(concatRows(chunks.map((c) => c.values[g])).data));
    }
  });

  it("the cache copies what it is given (later edits of the inputs do not leak in)", () => {
    const cache = new KVCache({ numKvHeads: 1, keyDim: 2, valueDim: 2 });
    const k = Matrix.fromArray([[1, 2]]);
    const v = Matrix.fromArray([[3, 4]]);
    cache.append([k], [v]);
    k.set(0, 0, 99);
    expect(cache.keys(0).toArray()).toEqual([[1, 2]]);
  });

  it("LatentCache stores latent rows and rotary key rows side by side", () => {
    const cache = new LatentCache({ latentDim: 3, ropeDim: 2, initialCapacity: 1 });
    const ls = [2, 1, 5].map((t, c) => randomMatrix(t, 3, {}, [21, "l", c]));
    const rs = [2, 1, 5].map((t, c) => randomMatrix(t, 2, {}, [21, "r", c]));
    for (const [c, l] of ls.entries()) cache.append(l, rs[c]);
    expect(cache.length).toBe(8);
    expect(cache.capacity).toBe(8);
    expect(Array.from(cache.latent().data)).toEqual(Array.from(concatRows(ls).data));
    expect(Array.from(cache.rotaryKeys()!.data)).toEqual(Array.from(concatRows(rs).data));
    expect(new LatentCache({ latentDim: 3 }).rotaryKeys()).toBeUndefined();
  });
});

describe("KVCache.maxAbs: the running max |K_g| and |V_g| (float32 decoding's range decision)", () => {
  const scan = (m: Matrix) => m.data.reduce((a, x) => Math.max(a, Math.abs(x)), 0);
  it("equals a scan of the cached rows after every append, across growth and a rolled-back step", () => {
    const cache = new KVCache({ numKvHeads: 2, keyDim: 3, valueDim: 2, initialCapacity: 2 });
    // magnitudes that rise and fall from chunk to chunk, so a stale or per-chunk max would show
    const scales = [1, 1e3, 1e-2, 7, 1e5, 0.5];
    for (const [c, s] of scales.entries()) {
      const keys = [0, 1].map((g) => randomMatrix(c + 1, 3, { scale: s }, [22, "k", c, g]));
      const values = [0, 1].map((g) => randomMatrix(c + 1, 2, { scale: s * (g + 1) }, [22, "v", c, g]));
      cache.append(keys, values);
      for (const g of [0, 1]) expect(cache.maxAbs(g)).toEqual({ keys: scan(cache.keys(g)), values: scan(cache.values(g)) });
    }
    const before = [0, 1].map((g) => cache.maxAbs(g));
    // A step whose logits overflow: its keys (|k| = 1e300) are appended, attention throws, the
    // append is rolled back — the maxima must be those of the rows left, not 1e300.
    const big = [0, 1].map(() => new Matrix(1, 3, new Float64Array([1e300, -1e300, 1e300])));
    const vals = [0, 1].map(() => new Matrix(1, 2, new Float64Array([1, 2])));
    const queries = [0, 1].map(() => new Matrix(1, 3, new Float64Array([1e300, 1e300, 1e300])));
    expect(() => cache.step({ queries, keys: big, values: vals })).toThrow();
    for (const g of [0, 1]) {
      expect(cache.maxAbs(g)).toEqual({ keys: scan(cache.keys(g)), values: scan(cache.values(g)) });
      expect(cache.maxAbs(g)).toEqual(before[g]);
    }
  });
});

describe("KVCache.step: attention on the cached rows without rescanning them (attentionCachedKeys)", () => {
  // step() no longer runs `attention`'s finiteness scans over all cached rows of K and V (each row
  // was checked by its append); the result must still be `attention` on those rows bit for bit,
  // for float64 and float32 (whose range decision now takes the cache's running max), a non-softmax
  // kernel, and the streaming algorithm (which still goes through runAttention).
  const cases: [string, DecodeAttentionOptions][] = [
    ["softmax float64", {}],
    ["softmax float32", { precision: "float32" }],
    ["dot kernel κ = exp(−|s|)", { kernel: { kind: "dot", f: (s: number) => Math.exp(-Math.abs(s)) } }],
    ["streaming", { algorithm: "streaming", blockSize: 2 }],
  ];
  for (const [name, attentionOptions] of cases) {
    it(name, () => {
      const cache = new KVCache({ numKvHeads: 2, keyDim: 3, valueDim: 2, initialCapacity: 1 });
      for (const [s, t] of [3, 1, 2, 1].entries()) {
        const keys = [0, 1].map((g) => randomMatrix(t, 3, { scale: 10 ** (s - 1) }, [38, "k", s, g]));
        const values = [0, 1].map((g) => randomMatrix(t, 2, { scale: 10 ** s }, [38, "v", s, g]));
        const queries = [0, 1, 2, 3].map((h) => randomMatrix(t, 3, {}, [38, "q", s, h]));
        const prev = cache.length;
        const { outputs } = cache.step({ queries, keys, values, attention: attentionOptions });
        for (let h = 0; h < 4; h++) {
          const g = Math.floor(h / 2);
          const want = runAttention(queries[h], cache.keys(g), cache.values(g), {
            ...attentionOptions,
            mask: { kind: "causal", offset: prev },
          });
          expect(
            Array.from(outputs[h].data).every((x, i) => Object.is(x, want.data[i])),
            `${name} step ${s} head ${h}`,
          ).toBe(true);
        }
      }
    });
  }

  it("a NaN query is still refused before anything is appended", () => {
    const cache = new KVCache({ numKvHeads: 1, keyDim: 2, valueDim: 2 });
    cache.append([randomMatrix(2, 2, {}, [38, "k0"])], [randomMatrix(2, 2, {}, [38, "v0"])]);
    const q = randomMatrix(1, 2, {}, [38, "q0"]);
    q.data[1] = Number.NaN;
    expect(() =>
      cache.step({ queries: [q], keys: [randomMatrix(1, 2, {}, [38, "k1"])], values: [randomMatrix(1, 2, {}, [38, "v1"])] }),
    ).toThrow(NonFiniteError);
    expect(cache.length).toBe(2);
  });
});
