// Unbiasedness of every design and scheme: the per-entry mean of the estimate over T seeded trials
// lies within z·σ̂/√T of the exact product (Bonferroni over all entries), σ̂ the per-entry sample
// standard deviation.
import { Matrix } from "@randattn/core";
import { describe, expect, it } from "vitest";
import { SAMPLING_DESIGNS, VALUE_SAMPLING_SCHEMES, sampledMatmul, sampledValueProduct } from "@randattn/sketch";
import { MomentAccumulator, bonferroniZ } from "../helpers/stats.js";
import { product, values, weightsP } from "./fixtures.js";

const T = 1500;

function worstDeviation(estimate: (t: number) => Matrix, exact: Matrix): { worst: number; z: number } {
  const acc = new MomentAccumulator(exact.data.length);
  for (let t = 0; t < T; t++) acc.add(estimate(t).data);
  const mean = acc.mean();
  const variance = acc.variance();
  let worst = 0;
  for (let q = 0; q < exact.data.length; q++) {
    const se = Math.sqrt(variance[q] / T);
    const dev = Math.abs(mean[q] - exact.data[q]);
    worst = Math.max(worst, se === 0 ? (dev <= 1e-12 * (1 + Math.abs(exact.data[q])) ? 0 : Number.POSITIVE_INFINITY) : dev / se);
  }
  return { worst, z: bonferroniZ(1e-3, exact.data.length * SAMPLING_DESIGNS.length * VALUE_SAMPLING_SCHEMES.length) };
}

const exact = product(weightsP, values);

describe.each(SAMPLING_DESIGNS)("design %s: E[estimate of P V] = P V", (design) => {
  it.each(VALUE_SAMPLING_SCHEMES)("scheme %s", (scheme) => {
    const { worst, z } = worstDeviation(
      (t) => sampledValueProduct(weightsP, values, { samples: 6, scheme, design }, [21, design, scheme, t]).output,
      exact,
    );
    expect(worst).toBeLessThanOrEqual(z);
  });
});

// (Des Raj's mean of t_1…t_s is NOT exact at s = N — only its last term t_N is — so only HT here.)
describe("Horvitz–Thompson at s = N uses every key once (π_j = 1) and is exact", () => {
  it.each(["horvitz-thompson"] as const)("%s", (design) => {
    const r = sampledValueProduct(weightsP, values, { samples: weightsP.cols, design, scheme: "value-norm" }, [1, design]);
    expect(new Set(r.indices).size).toBe(weightsP.cols);
    let err = 0;
    for (let q = 0; q < exact.data.length; q++) err = Math.max(err, Math.abs(r.output.data[q] - exact.data[q]));
    expect(err).toBeLessThanOrEqual(1e-12);
  });
});

describe("a biased estimator fails the same test (the check has power)", () => {
  it("dropping the 1/(s p_j) reweighting under value-norm sampling is detected", () => {
    const { worst, z } = worstDeviation((t) => {
      const r = sampledValueProduct(weightsP, values, { samples: 6, scheme: "value-norm" }, [21, "biased", t]);
      // Re-estimate with uniform weights 1/(s·(1/N)) instead of 1/(s p_j): biased toward large-norm rows.
      const out = new Matrix(exact.rows, exact.cols);
      const n = weightsP.cols;
      for (let i = 0; i < exact.rows; i++)
        for (let k = 0; k < 6; k++) {
          const j = r.indices[k];
          for (let c = 0; c < exact.cols; c++)
            out.data[i * exact.cols + c] += (n / 6) * weightsP.data[i * n + j] * values.data[j * exact.cols + c];
        }
      return out;
    }, exact);
    expect(worst).toBeGreaterThan(z);
  });
});

describe("sampledMatmul is unbiased for every design", () => {
  it.each(SAMPLING_DESIGNS)("%s", (design) => {
    const { worst, z } = worstDeviation(
      (t) => sampledMatmul(weightsP, values, { samples: 5, probabilities: "optimal", design }, [22, design, t]).output,
      exact,
    );
    expect(worst).toBeLessThanOrEqual(z);
  });
});
