/**
 * BalanceKV's and SubGen's guarantees on inputs where their assumptions hold, the memory
 * accounting against closed forms, and the online latent SVD.
 */
import { Matrix, RandomStream, randomMatrix } from "@randattn/core";
import { describe, expect, it } from "vitest";
import {
  BalanceKvCache,
  type CompressedKvCache,
  OnlineLatentCache,
  SubGenCache,
  compressLatent,
  createKvCache,
  exactSvd,
  softmaxBalance,
} from "../../src/index.js";

const rowsOf = (m: Matrix) => Array.from({ length: m.rows }, (_, i) => m.data.slice(i * m.cols, (i + 1) * m.cols));
const dot = (a: ArrayLike<number>, b: ArrayLike<number>) => {
  let s = 0;
  for (let i = 0; i < a.length; i++) s += a[i] * b[i];
  return s;
};

/** Exact unnormalized sums Z = Σ e^{s⟨q,k⟩}, N = Σ e^{s⟨q,k⟩} v. */
function exactSums(q: Float64Array, keys: Float64Array[], values: Float64Array[], s: number) {
  let z = 0;
  const num = new Float64Array(values[0].length);
  keys.forEach((k, j) => {
    const a = Math.exp(s * dot(q, k));
    z += a;
    for (let c = 0; c < num.length; c++) num[c] += a * values[j][c];
  });
  return { z, num };
}

/** Feeds keys/values one token at a time (queries = keys) and returns the cache. */
function feed<C extends CompressedKvCache>(cache: C, keys: Matrix, values: Matrix): C {
  for (let i = 0; i < keys.rows; i++) {
    const k = new Matrix(1, keys.cols, keys.data.slice(i * keys.cols, (i + 1) * keys.cols));
    const v = new Matrix(1, values.cols, values.data.slice(i * values.cols, (i + 1) * values.cols));
    cache.step({ queries: [k], keys: [k], values: [v] });
  }
  return cache;
}

describe("BalanceKV (SoftmaxBalance + merge-and-reduce)", () => {
  // Assumptions (paper §2): keys in a ball of radius r (here r ≈ 1, so e^{s‖k‖²} = O(1)), values bounded.
  const d = 8;
  const s = 1 / Math.sqrt(d);
  const keys = randomMatrix(256, d, { scale: 0.35 }, [21, "k"]);
  const values = randomMatrix(256, 4, {}, [21, "v"]);

  it("one halving: the error in every value coordinate and the normalizer is ≤ ‖w‖·e^{s‖q‖²/2} (Cauchy–Schwarz), for any q", () => {
    const K = rowsOf(keys).slice(0, 64);
    const V = rowsOf(values).slice(0, 64);
    const r = softmaxBalance(K, V, { scale: s }, [21, "walk"]);
    const queries = rowsOf(randomMatrix(50, d, {}, [21, "q"]));
    for (const q of queries) {
      const bound = r.discrepancy * Math.exp((s * dot(q, q)) / 2);
      const full = exactSums(q, K, V, s);
      const half = exactSums(
        q,
        r.keep.map((j) => K[j]),
        r.keep.map((j) => V[j]),
        s,
      );
      expect(Math.abs(2 * half.z - full.z)).toBeLessThanOrEqual(bound * (1 + 1e-9));
      for (let c = 0; c < 4; c++) expect(Math.abs(2 * half.num[c] - full.num[c])).toBeLessThanOrEqual(bound * (1 + 1e-9));
    }
  });

  it("the walk balances at least 2× better than independent random signs (E‖w‖² = tr G for random signs)", () => {
    const K = rowsOf(keys).slice(0, 64);
    const V = rowsOf(values).slice(0, 64);
    let trace = 0;
    for (let j = 0; j < 64; j++) trace += Math.exp(s * dot(K[j], K[j])) * (dot(V[j], V[j]) + 1);
    let walk = 0;
    for (let r = 0; r < 20; r++) walk += softmaxBalance(K, V, { scale: s }, [21, "walk", r]).discrepancy ** 2 / 20;
    console.log(`BalanceKV: walk E‖w‖² = ${walk.toFixed(2)} vs random signs tr G = ${trace.toFixed(2)}`);
    expect(walk).toBeLessThan(0.5 * trace);
  });

  it("streaming: stored sums are within C·e^{s‖q‖²/2} of the exact sums (a valid, loose certificate); output error < 0.05 (values ≈ 0.25) at 1/8 of the memory", () => {
    // Stronger assumptions for a non-vacuous ε: small keys (‖k‖ ≈ 0.5) and values (‖v‖ ≈ 0.5).
    const keys = randomMatrix(256, d, { scale: 0.18 }, [22, "k"]);
    const values = randomMatrix(256, 4, { scale: 0.25 }, [22, "v"]);
    const cache = feed(new BalanceKvCache({ numKvHeads: 1, keyDim: d, valueDim: 4, blockSize: 32 }, [22]), keys, values);
    console.log(`BalanceKV streaming: ${cache.floatsStored()} floats of ${256 * (d + 4)}`);
    expect(cache.floatsStored()).toBeLessThan(0.75 * 256 * (d + 4));
    const C = cache.errorCertificate(0);
    const K = rowsOf(keys);
    const V = rowsOf(values);
    let worst = 0;
    let worstBound = 0;
    for (const q of rowsOf(randomMatrix(30, d, {}, [22, "q"]))) {
      const exact = exactSums(q, K, V, s);
      const part = cache.storedSums(0, new Matrix(1, d, q), s);
      const f = Math.exp(part.shift[0]);
      const e = C * Math.exp((s * dot(q, q)) / 2);
      expect(Math.abs(part.den[0] * f - exact.z)).toBeLessThanOrEqual(e * (1 + 1e-9));
      for (let c = 0; c < 4; c++) {
        expect(Math.abs(part.num[c] * f - exact.num[c])).toBeLessThanOrEqual(e * (1 + 1e-9));
        const o = exact.num[c] / exact.z;
        const oh = part.num[c] / part.den[0];
        worst = Math.max(worst, Math.abs(oh - o));
        // ε for the output, |ô_c − o_c| ≤ (E + |o_c| E)/(Z − E), when the certificate E is below Z.
        if (e < exact.z) expect(Math.abs(oh - o)).toBeLessThanOrEqual((e + Math.abs(o) * e) / (exact.z - e));
      }
      worstBound = Math.max(worstBound, e / exact.z);
    }
    console.log(
      `BalanceKV streaming: worst output error ${worst.toFixed(4)}; certificate/Z up to ${worstBound.toFixed(2)} (Cauchy–Schwarz is loose)`,
    );
    expect(worst).toBeLessThan(0.05);
  });
});

describe("SubGen", () => {
  // Assumption ((m, δ)-clusterability, paper Def. 1): 4 clusters of radius ≤ 0.1 around centers at
  // mutual distance ≥ 2; the cache's δ = radius × mean key norm is set between the two.
  const d = 6;
  const s = 1 / Math.sqrt(d);
  const st = new RandomStream([23]);
  const centers = Array.from({ length: 4 }, (_, c) => Float64Array.from({ length: d }, (_, i) => (i === c ? 3 : 0)));
  const keys = new Matrix(200, d);
  for (let j = 0; j < 200; j++) {
    const u = Float64Array.from({ length: d }, () => st.gaussian());
    const n = Math.hypot(...u);
    for (let i = 0; i < d; i++) keys.data[j * d + i] = centers[j % 4][i] + (0.1 * st.uniform() * u[i]) / n;
  }
  const values = randomMatrix(200, 3, {}, [23, "v"]);

  it("normalizer: Ẑ/Z ∈ [e^{−2sδ‖q‖}, e^{2sδ‖q‖}] for every query (deterministic under the assumption)", () => {
    const cache = feed(
      new SubGenCache({ numKvHeads: 1, keyDim: d, valueDim: 3, clusters: 8, samplesPerCluster: 3, radius: 0.2 }, [24]),
      keys,
      values,
    );
    const delta = cache.clusterRadius(0);
    expect(delta).toBeGreaterThan(0.2);
    expect(delta).toBeLessThan(1);
    expect(cache.clusterCounts(0)).toEqual([50, 50, 50, 50]);
    const K = rowsOf(keys);
    const V = rowsOf(values);
    for (const q of rowsOf(randomMatrix(40, d, {}, [24, "q"]))) {
      const exact = exactSums(q, K, V, s);
      const part = cache.storedSums(0, new Matrix(1, d, q), s);
      const ratio = (part.den[0] * Math.exp(part.shift[0])) / exact.z;
      const b = Math.exp(2 * s * delta * Math.hypot(...q));
      expect(ratio).toBeGreaterThanOrEqual(1 / b);
      expect(ratio).toBeLessThanOrEqual(b);
    }
  });

  it("ℓ2 sampling of values: E‖N̂ − N‖² = (W Σ a_j² − ‖N‖²)/s (Monte Carlo over seeds, 4 standard errors)", () => {
    const K = rowsOf(keys);
    const V = rowsOf(values);
    const q = Float64Array.from(randomMatrix(1, d, {}, [25, "q"]).data);
    const exact = exactSums(q, K, V, s);
    let W = 0;
    let sumA2 = 0;
    K.forEach((k, j) => {
      W += dot(V[j], V[j]);
      sumA2 += Math.exp(2 * s * dot(q, k));
    });
    const samples = 8;
    const theory = (W * sumA2 - dot(exact.num, exact.num)) / samples;
    const errs: number[] = [];
    for (let r = 0; r < 150; r++) {
      const cache = feed(new SubGenCache({ numKvHeads: 1, keyDim: d, valueDim: 3, valueSamples: samples }, [25, r]), keys, values);
      const part = cache.storedSums(0, new Matrix(1, d, q), s);
      const f = Math.exp(part.shift[0]);
      let e = 0;
      for (let c = 0; c < 3; c++) e += (part.num[c] * f - exact.num[c]) ** 2;
      errs.push(e);
    }
    const mean = errs.reduce((a, b) => a + b, 0) / errs.length;
    const sd = Math.sqrt(errs.reduce((a, b) => a + (b - mean) ** 2, 0) / (errs.length - 1));
    console.log(`SubGen ℓ2 sampling: E‖N̂ − N‖² ${mean.toFixed(1)} vs theory ${theory.toFixed(1)}`);
    expect(Math.abs(mean - theory)).toBeLessThan(4 * (sd / Math.sqrt(errs.length)));
  });
});

describe("bits and floats are those of the stored buffers (closed forms)", () => {
  const shape = { numKvHeads: 2, keyDim: 8, valueDim: 6 };
  const n = 37;
  const run = (cache: CompressedKvCache) => {
    const k = randomMatrix(n, 8, {}, [26, "k"]);
    const v = randomMatrix(n, 6, {}, [26, "v"]);
    const q = randomMatrix(n, 8, {}, [26, "q"]);
    const sl = (m: Matrix, a: number, b: number) => new Matrix(b - a, m.cols, m.data.slice(a * m.cols, b * m.cols));
    cache.step({ queries: [sl(q, 0, 20), sl(q, 0, 20)], keys: [sl(k, 0, 20), sl(k, 0, 20)], values: [sl(v, 0, 20), sl(v, 0, 20)] });
    for (let i = 20; i < n; i++) {
      const r = cache.step({
        queries: [sl(q, i, i + 1), sl(q, i, i + 1)],
        keys: [sl(k, i, i + 1), sl(k, i, i + 1)],
        values: [sl(v, i, i + 1), sl(v, i, i + 1)],
      });
      // The step's cost reports the memory held after it (issue 9's Cost shape).
      expect(r.cost.bitsStored).toBe(cache.bitsStored());
      expect(r.cost.floatsStored).toBe(cache.floatsStored());
      expect(r.cost.flops).toBe(r.flops);
    }
    return cache;
  };
  const bytes = (bits: number) => 8 * Math.ceil(bits / 8);
  const cases: [string, CompressedKvCache, number][] = [
    ["full", createKvCache("full", shape, [0]), 64 * 2 * n * 14],
    ["sliding-window 10", createKvCache("sliding-window", { ...shape, window: 10 }, [0]), 64 * 2 * 10 * 14],
    // groups of 8 → 4 full groups + 5 residual tokens per head.
    [
      "kivi 2-bit",
      createKvCache("kivi", { ...shape, bits: 2, groupSize: 8 }, [0]),
      2 * (4 * (64 * 2 * 8 + bytes(8 * 8 * 2) + 64 * 2 * 8 + bytes(8 * 6 * 2)) + 5 * 64 * 14),
    ],
    ["qjl m=20", createKvCache("qjl", { ...shape, projectionDim: 20 }, [0]), 64 * 20 * 8 + 2 * n * (bytes(20) + 64 + 64 * 6)],
    [
      "qjl m=20, 4-bit values",
      createKvCache("qjl", { ...shape, projectionDim: 20, valueBits: 4 }, [0]),
      64 * 20 * 8 + 2 * n * (bytes(20) + 64 + bytes(24) + 128),
    ],
    [
      "turbo-quant 3-bit haar",
      createKvCache("turbo-quant", { ...shape, bits: 3 }, [0]),
      64 * (64 + 36 + 64) + 2 * n * (bytes(8 * 2) + 128 + bytes(8) + bytes(6 * 3) + 64),
    ],
    [
      "turbo-quant 3-bit srht",
      createKvCache("turbo-quant", { ...shape, bits: 3, rotation: "srht" }, [0]),
      bytes(8) + bytes(8) + 64 * 64 + 2 * n * (bytes(8 * 2) + 128 + bytes(8) + bytes(8 * 3) + 64),
    ],
    ["random-features m=16", createKvCache("random-features", { ...shape, numFrequencies: 16 }, [0]), 64 * 2 * (16 * 8 + 16 * 6 + 16 + 1)],
  ];
  for (const [name, cache, expected] of cases) {
    it(name, () => {
      run(cache);
      const fromBuffers = cache.buffers().reduce((a, b) => a + b.byteLength * 8, 0);
      expect(cache.bitsStored()).toBe(fromBuffers);
      expect(cache.bitsStored()).toBe(expected);
    });
  }
});

describe("online latent compression (incremental SVD)", () => {
  const dL = 12;
  // Low rank 4 plus small noise: L = A B + 0.01 E.
  const L = (() => {
    const a = randomMatrix(60, 4, {}, [27, "a"]);
    const b = randomMatrix(4, dL, {}, [27, "b"]);
    const e = randomMatrix(60, dL, {}, [27, "e"]);
    const out = new Matrix(60, dL);
    for (let i = 0; i < 60; i++)
      for (let j = 0; j < dL; j++) {
        let s = 0.01 * e.data[i * dL + j];
        for (let r = 0; r < 4; r++) s += a.data[i * 4 + r] * b.data[r * dL + j];
        out.data[i * dL + j] = s;
      }
    return out;
  })();
  const feedLatent = (cache: OnlineLatentCache) => {
    cache.append(new Matrix(10, dL, L.data.slice(0, 10 * dL)));
    for (let i = 10; i < 60; i++) cache.append(new Matrix(1, dL, L.data.slice(i * dL, (i + 1) * dL)));
    return cache;
  };
  const rel = (a: Matrix, b: Matrix) => {
    let n = 0;
    let d = 0;
    for (let i = 0; i < a.data.length; i++) {
      n += (a.data[i] - b.data[i]) ** 2;
      d += b.data[i] ** 2;
    }
    return Math.sqrt(n / d);
  };

  it("full rank reproduces the latent to 1e-10", () => {
    expect(rel(feedLatent(new OnlineLatentCache({ latentDim: dL, rank: dL })).latent(), L)).toBeLessThan(1e-10);
  });

  it("rank 4: within 1 % of the Eckart–Young optimum, next to the one-shot randomized SVD", () => {
    const cache = feedLatent(new OnlineLatentCache({ latentDim: dL, rank: 4 }));
    const online = rel(cache.latent(), L);
    const { U, S, Vt } = exactSvd(L);
    let tail = 0;
    let all = 0;
    S.forEach((x, i) => {
      all += x * x;
      if (i >= 4) tail += x * x;
    });
    const optimum = Math.sqrt(tail / all);
    const oneShot = compressLatent(L, { rank: 4 }, [27]).relativeError;
    console.log(
      `online latent rank 4: ${online.toExponential(3)}, one-shot RSVD ${oneShot.toExponential(3)}, optimum ${optimum.toExponential(3)}`,
    );
    expect(online).toBeGreaterThanOrEqual(optimum * (1 - 1e-9));
    expect(online).toBeLessThan(1.01 * optimum);
    expect(cache.floatsStored()).toBe(60 * 4 + 4 + dL * 4);
    void U;
    void Vt;
  });
});
