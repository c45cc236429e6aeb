// E[SᵀS] = I (wide, left sketches) and E[S Sᵀ] = I (tall, right sketches), by Monte Carlo with the
// per-entry variance each construction implies (derivations beside each kind below).
import { type Matrix, matmulTransA, matmulTransB } from "@randattn/core";
import { describe, expect, it } from "vitest";
import {
  countSketch,
  createSketch,
  gaussianSketch,
  rademacherSketch,
  type SketchDistribution,
  sparseSignSketch,
  srhtSketch,
  uniformRowSampler,
  weightedRowSampler,
} from "@randattn/sketch";
import { MomentAccumulator, bonferroniZ } from "../helpers/stats.js";

const n = 10; // long dimension
const d = 4; // short dimension
const N = 16; // SRHT padded dimension
const T = 2000;
const ramp = Float64Array.from({ length: n }, (_, j) => j + 1);
const pRamp = Array.from(ramp, (w) => w / ramp.reduce((a, b) => a + b, 0));

// Var[(SᵀS)_{jl}] for a wide d × n S with the default scale; `null` = deterministic (must be exact).
const cases: { name: string; wide: SketchDistribution; tall: SketchDistribution; variance: (j: number, l: number) => number | null }[] = [
  // Σ_r g_rj g_rl / d: diagonal χ²_d/d has variance 2/d, off-diagonal 1/d.
  { name: "gaussian", wide: gaussianSketch(d, n), tall: gaussianSketch(n, d), variance: (j, l) => (j === l ? 2 / d : 1 / d) },
  // ε² = 1 makes the diagonal exactly 1; off-diagonal is a sum of d independent ±1/d.
  { name: "rademacher", wide: rademacherSketch(d, n), tall: rademacherSketch(n, d), variance: (j, l) => (j === l ? null : 1 / d) },
  // (1/d)Σ_{r∈P} H_rj H_rl over d of N rows without replacement: the ±1 population has mean 0 and
  // variance N/(N−1), so the finite-population formula gives (N−d)/(d(N−1)); diagonal exactly 1.
  { name: "srht", wide: srhtSketch(d, n), tall: srhtSketch(n, d), variance: (j, l) => (j === l ? null : (N - d) / (d * (N - 1))) },
  // One ±1 per column: diagonal exactly 1; off-diagonal ±1 iff h(j) = h(l), probability 1/d.
  { name: "countsketch", wide: countSketch(d, n), tall: countSketch(n, d), variance: (j, l) => (j === l ? null : 1 / d) },
  // ζ = 2 distinct rows per column, entries ±1/√ζ: E|R_j ∩ R_l| = ζ²/d, so the variance is (1/ζ²)·ζ²/d = 1/d.
  {
    name: "sparse-sign",
    wide: sparseSignSketch(d, n, { nnzPerColumn: 2 }),
    tall: sparseSignSketch(n, d, { nnzPerColumn: 2 }),
    variance: (j, l) => (j === l ? null : 1 / d),
  },
  // Count_j/(s p_j) with Count_j ~ Bin(s, p_j): variance (1 − p_j)/(s p_j); off-diagonal exactly 0.
  {
    name: "row-sampling (uniform)",
    wide: uniformRowSampler(d, n),
    tall: uniformRowSampler(d, n, { side: "right" }),
    variance: (j, l) => (j === l ? (1 - 1 / n) / (d / n) : null),
  },
  {
    name: "row-sampling (weights)",
    wide: weightedRowSampler(d, ramp),
    tall: weightedRowSampler(d, ramp, { side: "right" }),
    variance: (j, l) => (j === l ? (1 - pRamp[j]) / (d * pRamp[j]) : null),
  },
];

function check(gram: (m: Matrix) => Matrix, dist: SketchDistribution, variance: (j: number, l: number) => number | null, tag: string) {
  const acc = new MomentAccumulator(n * n);
  let exactWorst = 0; // deterministic entries: worst deviation over all trials
  for (let t = 0; t < T; t++) {
    const g = gram(createSketch(dist, [17, tag, t]).toMatrix());
    for (let j = 0; j < n; j++)
      for (let l = 0; l < n; l++) {
        if (variance(j, l) === null) exactWorst = Math.max(exactWorst, Math.abs(g.data[j * n + l] - (j === l ? 1 : 0)));
      }
    acc.add(g.data);
  }
  expect(exactWorst).toBeLessThanOrEqual(1e-12);
  const mean = acc.mean();
  const z = bonferroniZ(1e-3, n * n);
  let worst = 0;
  for (let j = 0; j < n; j++)
    for (let l = 0; l < n; l++) {
      const v = variance(j, l);
      if (v === null) continue;
      const dev = Math.abs(mean[j * n + l] - (j === l ? 1 : 0)) / Math.sqrt(v / T);
      worst = Math.max(worst, dev);
    }
  expect(worst).toBeLessThanOrEqual(z);
  // The known variance is also what the trials show (sample/known ratio near 1 on average): a
  // variance formula off by a factor 2 would make the bound above meaningless.
  const sampleVar = acc.variance();
  let ratio = 0;
  let count = 0;
  for (let j = 0; j < n; j++)
    for (let l = 0; l < n; l++) {
      const v = variance(j, l);
      if (v === null) continue;
      ratio += sampleVar[j * n + l] / v;
      count++;
    }
  expect(Math.abs(ratio / count - 1)).toBeLessThan(0.1);
}

describe.each(cases)("$name: isometry in expectation", ({ name, wide, tall, variance }) => {
  it("wide S: E[SᵀS] = I_n", () => check((s) => matmulTransA(s, s), wide, variance, `${name}-wide`));
  it("tall S: E[S Sᵀ] = I_n", () => check((s) => matmulTransB(s, s), tall, variance, `${name}-tall`));
});
