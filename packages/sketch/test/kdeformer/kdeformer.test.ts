// KDEformer (Zandieh et al. 2023): exact limits, unbiasedness of the output (exact normalizer), of
// the KDE normalizer D̃ and of the KDE column norms c̃, the defensive sampling distribution,
// refused masks and bad options.
import { Matrix, ValueError, attention } from "@randattn/core";
import { drawHyperplanes, kdeformerAttention, sortLsh } from "@randattn/sketch";
import { describe, expect, it } from "vitest";
import { d, keys, maxAbs, n, queries, values } from "../lsh/fixtures.js";
import { worstStandardizedDeviation } from "../lsh/unbiased.js";

const exact = attention(queries, keys, values);
const planes = drawHyperplanes(3, d, [78, "planes"]);
const scale = 1 / Math.sqrt(d);
const lsh = sortLsh(queries, keys, { blockSize: 8, planes }, [0]);
const logit = (i: number, j: number) => {
  let s = 0;
  for (let t = 0; t < d; t++) s += queries.data[i * d + t] * keys.data[j * d + t];
  return scale * s;
};
/** Exact Dᵢ and the exact residual column norms c_j = Σ_{i off block(j)} A²_ij / Dᵢ² of this mask. */
const exactD = Float64Array.from({ length: n }, (_, i) => {
  let s = 0;
  for (let j = 0; j < n; j++) s += Math.exp(logit(i, j));
  return s;
});
const exactColumns = Float64Array.from({ length: n }, (_, j) => {
  let s = 0;
  for (let i = 0; i < n; i++) if (lsh.queryBlock[i] !== lsh.keyBlock[j]) s += Math.exp(2 * logit(i, j)) / exactD[i] ** 2;
  return s;
});
const column = (a: Float64Array) => new Matrix(a.length, 1, Float64Array.from(a, Math.exp));

describe("KDEformer", () => {
  it("one block is exact (1e-12), every estimator and normalizer", () => {
    for (const estimator of ["kde", "block-uniform"] as const)
      for (const normalizer of ["approximate", "exact", "shared"] as const)
        expect(
          maxAbs(kdeformerAttention(queries, keys, values, { blockSize: n, estimator, normalizer }, [1]).output, exact),
        ).toBeLessThanOrEqual(1e-12);
  });
  it("one KDE bucket holding all keys, enumerated, with m ≥ N_KV is exact (1e-12) with 6 blocks", () => {
    const r = kdeformerAttention(queries, keys, values, { blockSize: 8, kdeBits: 0, bucketSamples: n, sampleSize: n }, [1]);
    expect(maxAbs(r.output, exact)).toBeLessThanOrEqual(1e-12);
    for (let i = 0; i < n; i++) expect(Math.abs(r.logNormalizer[i] - Math.log(exactD[i]))).toBeLessThanOrEqual(1e-12);
  });
  it("unbiased with the exact normalizer (KDE column-norm importance sampling, z·σ̂/√T)", () => {
    const { worst, z } = worstStandardizedDeviation(
      (t) =>
        kdeformerAttention(queries, keys, values, { blockSize: 8, sampleSize: 6, kdeTables: 2, normalizer: "exact", planes }, [20, t])
          .output,
      exact,
      400,
      exact.data.length,
    );
    expect(worst).toBeLessThanOrEqual(z);
  });
  it("the KDE normalizer D̃ᵢ (block sum + LSH KDE of the residual) is unbiased for Dᵢ", () => {
    const { worst, z } = worstStandardizedDeviation(
      (t) =>
        column(
          kdeformerAttention(queries, keys, values, { blockSize: 8, kdeTables: 2, kdeBits: 2, bucketSamples: 2, planes }, [21, t])
            .logNormalizer,
        ),
      new Matrix(n, 1, exactD),
      400,
      n,
    );
    expect(worst).toBeLessThanOrEqual(z);
  });
  it("the KDE column norms c̃_j are unbiased for ‖(D⁻¹(1 − M^H) ⊙ A)_{:,j}‖² (exact D)", () => {
    const { worst, z } = worstStandardizedDeviation(
      (t) =>
        column(
          kdeformerAttention(
            queries,
            keys,
            values,
            { blockSize: 8, sampleSize: 16, kdeTables: 2, kdeBits: 2, bucketSamples: 2, normalizer: "exact", planes },
            [22, t],
          ).logColumnNorms,
        ),
      new Matrix(n, 1, exactColumns),
      400,
      n,
    );
    expect(worst).toBeLessThanOrEqual(z);
  });
  it('normalizer "shared": each row is a convex combination of rows of V, normalized by its own sampled row sums', () => {
    const r = kdeformerAttention(queries, keys, values, { blockSize: 8, sampleSize: 16, normalizer: "shared", planes }, [5]);
    const a = kdeformerAttention(queries, keys, values, { blockSize: 8, sampleSize: 16, planes }, [5]);
    const dV = values.cols;
    for (let c = 0; c < dV; c++) {
      let lo = Number.POSITIVE_INFINITY;
      let hi = Number.NEGATIVE_INFINITY;
      for (let j = 0; j < n; j++) {
        lo = Math.min(lo, values.data[j * dV + c]);
        hi = Math.max(hi, values.data[j * dV + c]);
      }
      for (let i = 0; i < n; i++) {
        expect(r.output.data[i * dV + c]).toBeGreaterThanOrEqual(lo - 1e-12);
        expect(r.output.data[i * dV + c]).toBeLessThanOrEqual(hi + 1e-12);
        // Ŷ_shared = Ŷ_approximate · D̃ / D̂ (same draws, only the denominator differs).
        const ratio = Math.exp(a.logNormalizer[i] - r.logNormalizer[i]);
        expect(Math.abs(r.output.data[i * dV + c] - a.output.data[i * dV + c] * ratio)).toBeLessThanOrEqual(1e-12 * (1 + Math.abs(hi)));
      }
    }
  });
  it("p = (1 − ε)ĉ/Σĉ + ε/N: a distribution with every p_j ≥ ε/N, for both estimators", () => {
    for (const estimator of ["kde", "block-uniform"] as const) {
      const r = kdeformerAttention(queries, keys, values, { blockSize: 8, sampleSize: 16, uniformShare: 0.25, planes, estimator }, [2]);
      let s = 0;
      for (const p of r.probabilities) {
        expect(p).toBeGreaterThanOrEqual(0.25 / n - 1e-15);
        s += p;
      }
      expect(s).toBeCloseTo(1, 12);
      expect(r.logColumnNorms.length).toBe(n);
    }
  });
  it("cost includes the KDE's hashes (2 KDEs × L tables × 2N vectors) and kernel evaluations", () => {
    const r = kdeformerAttention(queries, keys, values, { blockSize: 8, sampleSize: 16, kdeTables: 3, kdeBits: 2, planes }, [4]);
    const u = kdeformerAttention(queries, keys, values, { blockSize: 8, estimator: "block-uniform", planes }, [4]);
    expect(r.cost.hashes).toBe(2 * n + 2 * 3 * 2 * n);
    expect(u.cost.hashes).toBe(2 * n);
    expect(r.cost.kernelEvaluations).toBeGreaterThan(0);
  });
  it("refuses masks and bad options with ValueError", () => {
    expect(() => kdeformerAttention(queries, keys, values, { mask: { kind: "causal" } } as never, [1])).toThrow(ValueError);
    expect(() => kdeformerAttention(queries, keys, values, { uniformShare: 0 }, [1])).toThrow(ValueError);
    expect(() => kdeformerAttention(queries, keys, values, { uniformShare: 1.5 }, [1])).toThrow(ValueError);
    expect(() => kdeformerAttention(queries, keys, values, { kernel: { kind: "dot" } as never }, [1])).toThrow(ValueError);
    expect(() => kdeformerAttention(queries, keys, values, { estimator: "kme" as never }, [1])).toThrow(/options.estimator/);
    expect(() => kdeformerAttention(queries, keys, values, { kdeTables: 0 }, [1])).toThrow(/options.kdeTables/);
    expect(() => kdeformerAttention(queries, keys, values, { kdeBits: 99 }, [1])).toThrow(/options.kdeBits/);
    expect(() => kdeformerAttention(queries, keys, values, { bucketSamples: -1 }, [1])).toThrow(/options.bucketSamples/);
  });
});
