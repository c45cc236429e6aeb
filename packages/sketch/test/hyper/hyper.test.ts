// HyperAttention (Han et al. 2024): exact limits against core `attention`, unbiasedness with the
// exact normalizer (bidirectional and causal), the fixed-mask error law of the residual sampling,
// α and κ against their literal definitions, typed errors.
import { Matrix, NonFiniteError, ValueError, attention, attentionScores, attentionWeights, randomMatrix } from "@randattn/core";
import { drawHyperplanes, hyperAttention, hyperAttentionParameters, sortLsh } from "@randattn/sketch";
import { describe, expect, it } from "vitest";
import { MomentAccumulator, bonferroniZ, mean, standardError } from "../helpers/stats.js";
import { d, keys, maxAbs, n, queries, values } from "../lsh/fixtures.js";

const exact = attention(queries, keys, values);
const exactCausal = attention(queries, keys, values, { mask: { kind: "causal" } });

describe("exact limits (1e-12)", () => {
  it("one block (blockSize ≥ N) leaves no residual: Ŷ = Y for both normalizers", () => {
    for (const normalizer of ["approximate", "exact", "shared"] as const) {
      const r = hyperAttention(queries, keys, values, { blockSize: n, normalizer }, [1]);
      expect(maxAbs(r.output, exact)).toBeLessThanOrEqual(1e-12);
    }
  });
  it("causal: minCausalLength ≥ N is exact; so is the recursion when every off-diagonal block is one block", () => {
    expect(
      maxAbs(hyperAttention(queries, keys, values, { mask: { kind: "causal" }, minCausalLength: n }, [2]).output, exactCausal),
    ).toBeLessThanOrEqual(1e-12);
    const rec = hyperAttention(queries, keys, values, { mask: { kind: "causal" }, blockSize: n, minCausalLength: 5 }, [2]);
    expect(maxAbs(rec.output, exactCausal)).toBeLessThanOrEqual(1e-12);
  });
  it("causal with N_KV > N_Q (offset N_KV − N_Q): the shared prefix is one more block", () => {
    const q = new Matrix(30, d, queries.data.slice(18 * d));
    const ref = attention(q, keys, values, { mask: { kind: "causal" } });
    const r = hyperAttention(q, keys, values, { mask: { kind: "causal" }, blockSize: n, minCausalLength: 4 }, [3]);
    expect(maxAbs(r.output, ref)).toBeLessThanOrEqual(1e-12);
  });
});

const planes = drawHyperplanes(3, d, [77, "planes"]);
const T = 400;

function unbiasedWorst(run: (t: number) => Matrix, ref: Matrix, comparisons: number): { worst: number; z: number } {
  const acc = new MomentAccumulator(ref.data.length);
  for (let t = 0; t < T; t++) acc.add(run(t).data);
  const m = acc.mean();
  const v = acc.variance();
  let worst = 0;
  for (let q = 0; q < ref.data.length; q++) {
    const se = Math.sqrt(v[q] / T);
    const dev = Math.abs(m[q] - ref.data[q]);
    worst = Math.max(worst, se === 0 ? (dev <= 1e-12 ? 0 : Number.POSITIVE_INFINITY) : dev / se);
  }
  return { worst, z: bonferroniZ(1e-3, comparisons) };
}

describe("unbiased with the exact normalizer (z·σ̂/√T, Bonferroni over entries)", () => {
  it("bidirectional", () => {
    const { worst, z } = unbiasedWorst(
      (t) => hyperAttention(queries, keys, values, { blockSize: 8, sampleSize: 6, normalizer: "exact", planes }, [10, t]).output,
      exact,
      2 * exact.data.length,
    );
    expect(worst).toBeLessThanOrEqual(z);
  });
  it("causal (Algorithm 4 recursion)", () => {
    const { worst, z } = unbiasedWorst(
      (t) =>
        hyperAttention(
          queries,
          keys,
          values,
          { blockSize: 6, sampleSize: 4, normalizer: "exact", mask: { kind: "causal" }, minCausalLength: 6, planes },
          [11, t],
        ).output,
      exactCausal,
      2 * exact.data.length,
    );
    expect(worst).toBeLessThanOrEqual(z);
  });
});

describe("error law for a fixed mask: E‖Ŷ−Y‖²_F = (Σ_j ‖R_:j‖²‖V_j‖²/p_j − ‖RV‖²_F)/m ≤ α‖V‖²_F/m", () => {
  it.each([4, 16] as const)("m = %i", (m) => {
    const opts = { blockSize: 8, sampleSize: m, normalizer: "exact" as const, planes };
    const law = hyperAttentionParameters(queries, keys, values, opts, [0]);
    const errs: number[] = [];
    for (let t = 0; t < T; t++) {
      const y = hyperAttention(queries, keys, values, opts, [12, m, t]).output;
      let e = 0;
      for (let q = 0; q < y.data.length; q++) e += (y.data[q] - exact.data[q]) ** 2;
      errs.push(e);
    }
    expect(Math.abs(mean(errs) - law.expectedSquaredError)).toBeLessThanOrEqual(bonferroniZ(1e-3, 2) * standardError(errs));
    expect(law.expectedSquaredError).toBeLessThanOrEqual(law.errorBound);
    expect(law.expectedSquaredError).toBeGreaterThan(0);
  });
});

describe("the error law's ‖RV‖²_F: the literal loop's bits", () => {
  // expectedSquaredError = (Σ_j ‖R_:j‖²‖V_j‖²/p_j − ‖RV‖²_F)/m with (RV)_i summed over the keys
  // outside query i's block in order from 0, as the loop below forms it; the implementation runs
  // RV as one sequential product per block of query rows (zeros in the masked places). N = 300 at
  // d = 16 takes two row blocks of the logits (218 + 82), so a partial block is covered too. It
  // fails when masked keys enter RV or a block's rows are dropped from ‖RV‖²; a change of RV's sum
  // order alone moves ‖RV‖² by an ulp that Σ_j ‖R_:j‖²‖V_j‖²/p_j (hundreds of times larger) absorbs, so
  // that is sequentialMatmulInto's own test (core) and the frontier sweep's committed CSV.
  function literal(q: Matrix, k: Matrix, v: Matrix, blockSize: number, m: number): number {
    const nQ = q.rows;
    const nK = k.rows;
    const dd = q.cols;
    const dV = v.cols;
    const lsh = sortLsh(q, k, { blockSize, planes: planesFor(dd) }, [0, "sample"]);
    const scale = 1 / Math.sqrt(dd);
    const colR = new Float64Array(nK);
    let rvNorm2 = 0;
    for (let i = 0; i < nQ; i++) {
      const row = new Float64Array(nK);
      let mx = Number.NEGATIVE_INFINITY;
      for (let j = 0; j < nK; j++) {
        let s = 0;
        for (let t = 0; t < dd; t++) s += q.data[i * dd + t] * k.data[j * dd + t];
        row[j] = s * scale;
        if (row[j] > mx) mx = row[j];
      }
      let z = 0;
      for (let j = 0; j < nK; j++) z += Math.exp(row[j] - mx);
      const logZ = mx + Math.log(z);
      const rv = new Float64Array(dV);
      for (let j = 0; j < nK; j++) {
        const p = Math.exp(row[j] - logZ);
        if (lsh.keyBlock[j] === lsh.queryBlock[i]) continue;
        colR[j] += p * p;
        for (let c = 0; c < dV; c++) rv[c] += p * v.data[j * dV + c];
      }
      for (let c = 0; c < dV; c++) rvNorm2 += rv[c] * rv[c];
    }
    const vRow2 = new Float64Array(nK);
    let vFro2 = 0;
    for (let j = 0; j < nK; j++) {
      let s = 0;
      for (let c = 0; c < dV; c++) s += v.data[j * dV + c] ** 2;
      vRow2[j] = s;
      vFro2 += s;
    }
    let amm = 0;
    for (let j = 0; j < nK; j++) {
      if (colR[j] === 0 || vRow2[j] === 0) continue;
      amm += (colR[j] * vRow2[j]) / (vRow2[j] / vFro2);
    }
    return Math.max(0, amm - rvNorm2) / m;
  }
  const planesFor = (dd: number) => drawHyperplanes(3, dd, [77, "planes", dd]);
  it.each([
    ["fixture N = 48", queries, keys, values],
    [
      "N = 300, d = 16, d_V = 8",
      randomMatrix(300, 16, {}, [5, "q"]),
      randomMatrix(300, 16, {}, [5, "k"]),
      randomMatrix(300, 8, {}, [5, "v"]),
    ],
  ] as const)("%s", (_, q, k, v) => {
    const got = hyperAttentionParameters(q, k, v, { blockSize: 8, sampleSize: 4, planes: planesFor(q.cols) }, [0]);
    expect(got.numBlocks).toBeGreaterThan(1);
    expect(Object.is(got.expectedSquaredError, literal(q, k, v, 8, 4))).toBe(true);
  });
});

describe("α and κ against their definitions", () => {
  it("α = N·max_j ‖R_:j‖², κ = max rᵢ/min rᵢ from P, Z and the sortLSH mask", () => {
    const opts = { blockSize: 8, planes };
    const got = hyperAttentionParameters(queries, keys, values, opts, [0]);
    const lsh = sortLsh(queries, keys, { blockSize: 8, planes }, [0]);
    const p = attentionWeights(queries, keys);
    const scale = 1 / Math.sqrt(d);
    const col = new Float64Array(n);
    const colFull = new Float64Array(n);
    const r: number[] = [];
    for (let i = 0; i < n; i++) {
      let z = 0;
      for (let j = 0; j < n; j++) {
        let s = 0;
        for (let t = 0; t < d; t++) s += queries.data[i * d + t] * keys.data[j * d + t];
        z += Math.exp(scale * s);
      }
      let res = 0;
      for (let j = 0; j < n; j++) {
        const pij = p.data[i * n + j];
        colFull[j] += pij * pij;
        if (lsh.keyBlock[j] !== lsh.queryBlock[i]) {
          col[j] += pij * pij;
          res += pij * z;
        }
      }
      if (res > 0) r.push(res);
    }
    expect(got.alpha).toBeCloseTo(n * Math.max(...col), 10);
    expect(got.alphaFull).toBeCloseTo(n * Math.max(...colFull), 10);
    expect(got.kappa / (Math.max(...r) / Math.min(...r))).toBeCloseTo(1, 10);
    expect(got.alpha).toBeLessThanOrEqual(got.alphaFull);
  });
});

describe("ApproxD (Algorithm 2)", () => {
  it("without a floor D̃ᵢ is unbiased for Dᵢ (z·σ̂/√T, Bonferroni over rows)", () => {
    const { normalizer, rowShift } = attentionScores(queries, keys);
    const acc = new MomentAccumulator(n);
    for (let t = 0; t < T; t++) {
      const r = hyperAttention(queries, keys, values, { blockSize: 8, sampleSize: 1, normalizerSamples: 6, planes }, [14, t]);
      acc.add(Float64Array.from(r.logNormalizer, (l, i) => Math.exp(l - rowShift[i]) / normalizer[i]));
    }
    const m = acc.mean();
    const v = acc.variance();
    const z = bonferroniZ(1e-3, n);
    for (let i = 0; i < n; i++) expect(Math.abs(m[i] - 1)).toBeLessThanOrEqual(z * Math.sqrt(v[i] / T) + 1e-12);
  });
  it("the floor τ/κ only raises D̃ (same draw)", () => {
    const plain = hyperAttention(queries, keys, values, { blockSize: 8, sampleSize: 4, planes }, [15]);
    const floored = hyperAttention(queries, keys, values, { blockSize: 8, sampleSize: 4, rowRatio: 2, planes }, [15]);
    let raised = 0;
    for (let i = 0; i < n; i++) {
      expect(floored.logNormalizer[i]).toBeGreaterThanOrEqual(plain.logNormalizer[i] - 1e-12);
      if (floored.logNormalizer[i] > plain.logNormalizer[i] + 1e-9) raised++;
    }
    expect(raised).toBeGreaterThan(0);
  });
});

describe('normalizer "shared" (self-normalized with the defensive mixture)', () => {
  it("every output row is a convex combination of rows of V, however small the sample", () => {
    const lo = new Float64Array(3).fill(Number.POSITIVE_INFINITY);
    const hi = new Float64Array(3).fill(Number.NEGATIVE_INFINITY);
    for (let j = 0; j < n; j++)
      for (let c = 0; c < 3; c++) {
        lo[c] = Math.min(lo[c], values.data[j * 3 + c]);
        hi[c] = Math.max(hi[c], values.data[j * 3 + c]);
      }
    for (const m of [1, 3, 17]) {
      const y = hyperAttention(queries, keys, values, { blockSize: 8, sampleSize: m, normalizer: "shared", planes }, [16, m]).output;
      for (let i = 0; i < n; i++)
        for (let c = 0; c < 3; c++) {
          expect(y.data[i * 3 + c]).toBeGreaterThanOrEqual(lo[c] - 1e-12);
          expect(y.data[i * 3 + c]).toBeLessThanOrEqual(hi[c] + 1e-12);
        }
    }
  });
  it("is consistent: the MSE falls by about 16× from m = 64 to m = 1024 (O(1/m))", () => {
    const mse = (m: number) => {
      let e = 0;
      for (let t = 0; t < 40; t++) {
        const y = hyperAttention(queries, keys, values, { blockSize: 8, sampleSize: m, normalizer: "shared", planes }, [17, m, t]).output;
        for (let q = 0; q < y.data.length; q++) e += (y.data[q] - exact.data[q]) ** 2;
      }
      return e / 40;
    };
    // Each MSE is a mean of 40 squared errors (relative SE ≈ √(2/40) ≈ 0.22 for χ²-like spread), so
    // the ratio of two lies within a factor 2 of its expectation 16 at about 3σ.
    const ratio = mse(64) / mse(1024);
    expect(ratio).toBeGreaterThan(8);
    expect(ratio).toBeLessThan(32);
  });
});

describe("cost and typed errors", () => {
  it("counts hashes, random bits and kernel entries", () => {
    const r = hyperAttention(queries, keys, values, { blockSize: 8, numBits: 3, sampleSize: 5 }, [1]);
    expect(r.cost.hashes).toBe(2 * n);
    expect(r.cost.randomBits).toBe(64 * (3 * d + 2 * 5 + 5));
    expect(r.cost.kernelEvaluations).toBe(n * 8 + n * (5 + 5));
  });
  it("rejects bad options and inputs", () => {
    expect(() => hyperAttention(queries, keys, values, { sampleSize: 0 }, [1])).toThrow(ValueError);
    expect(() => hyperAttention(queries, keys, values, { mask: { kind: "padding" } as never }, [1])).toThrow(ValueError);
    expect(() => hyperAttention(queries, keys, values, { mask: { kind: "causal", offset: 3 } }, [1])).toThrow(ValueError);
    expect(() => hyperAttention(queries, keys, values, { rowRatio: 0.5 }, [1])).toThrow(ValueError);
    const bad = values.clone();
    bad.data[0] = Number.NaN;
    expect(() => hyperAttention(queries, keys, bad, {}, [1])).toThrow(NonFiniteError);
    expect(() => hyperAttention(queries, randomMatrix(3, d + 1, {}, [1]), values, {}, [1])).toThrow();
  });
});
