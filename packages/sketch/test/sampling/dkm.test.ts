// The DKM exact expectation E‖AB − CR‖²_F = (1/s)(Σ_k ‖A⁽ᵏ⁾‖²‖B₍ₖ₎‖²/p_k − ‖AB‖²_F), matched by
// Monte Carlo for every sampling distribution, within z·σ̂/√T where σ̂ is the sample standard
// deviation of the per-trial squared error.
import { Matrix, randomMatrix } from "@randattn/core";
import { describe, expect, it } from "vitest";
import {
  dkmExpectedSquaredError,
  normalizeWeights,
  optimalMatmulProbabilities,
  sampledMatmul,
  sampledValueProduct,
  squaredColumnNorms,
  squaredRowNorms,
  valueSamplingProbabilities,
} from "@randattn/sketch";
import { checkMean } from "../helpers/stats.js";
import { product, squaredFrobeniusDiff, values, weightsP } from "./fixtures.js";

const m = 6;
const n = 20;
const p = 4;
const s = 5;
const T = 3000;
// Mostly positive entries, so the outer products A^(k)B_k add up rather than cancel: ‖AB‖²_F is then
// a large part of the formula and a missing "− ‖AB‖²_F" term would be caught; uneven norms make the
// distributions differ.
const a = randomMatrix(m, n, {}, [12, "A"]);
for (let k = 0; k < n; k++) for (let i = 0; i < m; i++) a.data[i * n + k] = (Math.abs(a.data[i * n + k]) + 0.3) * (1 + (k % 5));
const b = randomMatrix(n, p, {}, [12, "B"]);
for (let k = 0; k < n; k++) for (let c = 0; c < p; c++) b.data[k * p + c] = (b.data[k * p + c] + 0.8) * (0.2 + k / 10);
const ab = product(a, b);

const distributions: [string, Float64Array][] = [
  ["uniform", new Float64Array(n).fill(1 / n)],
  ["∝ ‖B_k‖² (value norm)", normalizeWeights(squaredRowNorms(b))],
  ["∝ ‖A^(k)‖²", normalizeWeights(squaredColumnNorms(a))],
  ["optimal ∝ ‖A^(k)‖‖B_k‖", optimalMatmulProbabilities(a, b)],
  ["arbitrary (ramp)", normalizeWeights(Float64Array.from({ length: n }, (_, k) => n - k))],
];

describe("sampledMatmul: DKM expected squared error", () => {
  it("the closed form equals the exact expectation enumerated for s = 1", () => {
    for (const [, q] of distributions) {
      let enumerated = 0;
      for (let k = 0; k < n; k++) {
        const est = new Matrix(m, p);
        for (let i = 0; i < m; i++) for (let c = 0; c < p; c++) est.data[i * p + c] = (a.data[i * n + k] * b.data[k * p + c]) / q[k];
        enumerated += q[k] * squaredFrobeniusDiff(est, ab);
      }
      expect(Math.abs(dkmExpectedSquaredError(a, b, 1, q) - enumerated)).toBeLessThanOrEqual(1e-10 * enumerated);
    }
  });

  it.each(distributions)("%s: Monte Carlo mean of ‖AB − CR‖²_F matches the formula", (name, q) => {
    const err = new Float64Array(T);
    for (let t = 0; t < T; t++)
      err[t] = squaredFrobeniusDiff(sampledMatmul(a, b, { samples: s, probabilities: q }, [12, "dkm", name, t]).output, ab);
    const check = checkMean(err, dkmExpectedSquaredError(a, b, s, q), { comparisons: distributions.length });
    expect(check.ok, JSON.stringify(check)).toBe(true);
  });

  it("optimal probabilities give the smallest expected error, and the string form matches the vector form", () => {
    const expected = distributions.map(([, q]) => dkmExpectedSquaredError(a, b, s, q));
    const optimal = dkmExpectedSquaredError(a, b, s, optimalMatmulProbabilities(a, b));
    for (const e of expected) expect(optimal).toBeLessThanOrEqual(e * (1 + 1e-12));
    // Lower bound reached: (1/s)((Σ_k ‖A^(k)‖‖B_k‖)² − ‖AB‖²)
    const ca = squaredColumnNorms(a);
    const rb = squaredRowNorms(b);
    const sumNorms = ca.reduce((acc, v, k) => acc + Math.sqrt(v * rb[k]), 0);
    let abF = 0;
    for (const v of ab.data) abF += v * v;
    expect(optimal).toBeCloseTo((sumNorms ** 2 - abF) / s, 8);
    const r1 = sampledMatmul(a, b, { samples: s, probabilities: "optimal" }, [1, "x"]);
    const r2 = sampledMatmul(a, b, { samples: s, probabilities: optimalMatmulProbabilities(a, b) }, [1, "x"]);
    expect(r1.output.data).toEqual(r2.output.data);
  });
});

describe("row sampling of V: DKM expectation for every attention scheme", () => {
  const exact = product(weightsP, values);
  const nQ = weightsP.rows;
  const nKV = weightsP.cols;
  const sV = 6;
  const schemes = ["uniform", "value-norm", "optimal", "attention"] as const;
  it.each(schemes)("%s", (scheme) => {
    const probs =
      scheme === "attention"
        ? new Matrix(nQ, nKV, weightsP.data.slice()) // per query ∝ P[i,j] (rows already sum to 1)
        : valueSamplingProbabilities(scheme, values, weightsP);
    const expectedErr = dkmExpectedSquaredError(weightsP, values, sV, probs);
    const err = new Float64Array(T);
    for (let t = 0; t < T; t++)
      err[t] = squaredFrobeniusDiff(sampledValueProduct(weightsP, values, { samples: sV, scheme }, [13, scheme, t]).output, exact);
    const check = checkMean(err, expectedErr, { comparisons: schemes.length });
    expect(check.ok, JSON.stringify(check)).toBe(true);
  });
});
