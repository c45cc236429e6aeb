// Subspace embedding quality. For an orthonormal U (n × k) with leverage scores ℓ_j and
// L₂ = Σ ℓ_j², M = (SU)ᵀSU − I has, by a fourth-moment computation for each construction,
//   Gaussian:                          E‖M‖²_F = (k² + k)/d
//   Rademacher, CountSketch, sparse sign: E‖M‖²_F = (k² + k − 2L₂)/d
//   SRHT (n' = padded size):           E‖M‖²_F = (n' − d)/(d(n' − 1)) · (k² + k − 2L₂)
//   row sampling from p (s samples):   E‖M‖²_F = (Σ_j ℓ_j²/p_j − k)/s
// (derivations in docs/operators.md). Monte Carlo must match each; then the distortion
// max_i |σ_i(SU)² − 1| = ‖M‖₂ is checked against a theoretical bound on one draw.
import { EigenvalueDecomposition } from "ml-matrix";
import { describe, expect, it } from "vitest";
import {
  countSketch,
  createSketch,
  gaussianSketch,
  leverageScoreRowSampler,
  rademacherSketch,
  type SketchDistribution,
  sparseSignSketch,
  squaredNormRowSampler,
  srhtSketch,
  uniformRowSampler,
} from "@randattn/sketch";
import { checkMean } from "../helpers/stats.js";
import { frobeniusSquared, gramDeviation, rowLeverage, testSubspace } from "./subspace.js";

const n = 48;
const k = 3;
const d = 12;
const nPad = 64;
const u = testSubspace(n, k, "embedding");
const lev = rowLeverage(u);
const L2 = lev.reduce((s, v) => s + v * v, 0);
const base = k * k + k - 2 * L2;
const sumLev2Over = (p: ArrayLike<number>) => lev.reduce((s, l, j) => s + (l * l) / p[j], 0);

const squaredNorm = squaredNormRowSampler(d, u);
const leverage = leverageScoreRowSampler(d, u);
const cases: { name: string; dist: SketchDistribution; expected: number }[] = [
  { name: "gaussian", dist: gaussianSketch(d, n), expected: (k * k + k) / d },
  { name: "rademacher", dist: rademacherSketch(d, n), expected: base / d },
  { name: "srht", dist: srhtSketch(d, n), expected: ((nPad - d) / (d * (nPad - 1))) * base },
  { name: "countsketch", dist: countSketch(d, n), expected: base / d },
  { name: "sparse-sign ζ=3", dist: sparseSignSketch(d, n, { nnzPerColumn: 3 }), expected: base / d },
  { name: "uniform rows", dist: uniformRowSampler(d, n), expected: (n * L2 - k) / d },
  { name: "squared-norm rows", dist: squaredNorm, expected: (sumLev2Over(squaredNorm.probabilities) - k) / d },
  // p = ℓ/k gives Σ ℓ²/p = k·Σℓ = k²: the smallest value any p can reach (Cauchy–Schwarz).
  { name: "leverage rows", dist: leverage, expected: (k * k - k) / d },
];

describe("E‖(SU)ᵀSU − I‖²_F matches theory for every kind", () => {
  it.each(cases)("$name", ({ name, dist, expected }) => {
    const T = 800;
    const err = new Float64Array(T);
    for (let t = 0; t < T; t++) err[t] = frobeniusSquared(gramDeviation(createSketch(dist, [31, name, t]).sketchLeft(u)));
    const check = checkMean(err, expected, { comparisons: cases.length });
    expect(check.ok, JSON.stringify(check)).toBe(true);
  });

  it("the leverage sampler's expectation is the smallest of the row samplers (optimality of p = ℓ/k)", () => {
    const rowCases = cases.filter((c) => c.name.endsWith("rows"));
    const best = Math.min(...rowCases.map((c) => c.expected));
    expect(cases.find((c) => c.name === "leverage rows")!.expected).toBe(best);
  });
});

function distortion(su: ReturnType<typeof gramDeviation>): number {
  const eig = new EigenvalueDecomposition(su.toMlMatrix(), { assumeSymmetric: true });
  return Math.max(...eig.realEigenvalues.map(Math.abs));
}

describe("subspace embedding distortion within theory (one draw, moderate sizes)", () => {
  it("gaussian: σ_i(SU) ∈ 1 ± (√(k/d) + t/√d) (Davidson–Szarek, failure prob. 2e^{−t²/2} ≈ 4e-3)", () => {
    const U = testSubspace(512, 4, "ds");
    const dd = 256;
    const t = 3.5;
    const eps = Math.sqrt(4 / dd) + t / Math.sqrt(dd);
    const M = gramDeviation(createSketch(gaussianSketch(dd, 512), [5, "ds"]).sketchLeft(U));
    // σ² − 1 ∈ [(1−ε)² − 1, (1+ε)² − 1]
    expect(distortion(M)).toBeLessThanOrEqual((1 + eps) ** 2 - 1);
  });

  it.each([
    ["rademacher", rademacherSketch(256, 1024), 1],
    ["srht", srhtSketch(256, 1024), (1024 - 256) / (1024 - 1)],
    ["countsketch", countSketch(256, 1024), 1],
    ["sparse-sign", sparseSignSketch(256, 1024, { nnzPerColumn: 4 }), 1],
  ] as const)("%s: ‖M‖₂ ≤ √(E‖M‖²_F/δ) with δ = 0.05 (Markov)", (name, dist, factor) => {
    const U = testSubspace(1024, 2, "markov");
    const l = rowLeverage(U);
    const expected = (factor * (2 * 2 + 2 - 2 * l.reduce((s, v) => s + v * v, 0))) / 256;
    const bound = Math.sqrt(expected / 0.05);
    expect(bound).toBeLessThan(1); // the bound certifies an embedding
    expect(distortion(gramDeviation(createSketch(dist, [5, name]).sketchLeft(U)))).toBeLessThanOrEqual(bound);
  });
});
