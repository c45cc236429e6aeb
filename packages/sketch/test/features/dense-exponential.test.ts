// DERF variants of FAVOR# (Likhosherstov et al., ICML 2023): ADERF (= "derf"), SADERF and the
// symmetric SDERF with a matrix A. Closed forms against Monte Carlo (means within z·σ̂/√T, variances
// within z times the standard error of the sample variance, √((μ̂₄ − s⁴)/T)), the paper's dense form
// (Thm 4.1) against the per-coordinate form used for the features, optimality of the closed-form
// parameters, the variance ordering against FAVOR+, and the attention driver's exact limit.
import { Matrix, ValueError, attention, attentionScores, randomMatrix } from "@randattn/core";
import {
  type ExponentialFeatureParameters,
  denseExponentialForm,
  denseExponentialLogMoments,
  derfLogSecondMoment,
  drawProjection,
  evaluateExponentialFeatures,
  exponentialFeatureParameters,
  exponentialFeatureVariance,
  meanPairSecondMoment,
  randomFeatureAttention,
  transformForFeatures,
} from "@randattn/sketch";
import { EigenvalueDecomposition, Matrix as MlMatrix, inverse } from "ml-matrix";
import { describe, expect, it } from "vitest";
import { MomentAccumulator, bonferroniZ, mean, sampleVariance, standardError } from "../helpers/stats.js";

const d = 4;
/** Anisotropic, correlated data (coordinates scaled 1.2 … 0.2, mixed, shifted): Ψ, Q₃ ≠ I matter. */
function data(rows: number, key: number, shift: number): Matrix {
  const x = randomMatrix(rows, d, {}, [key]);
  const s = [1.2, 0.9, 0.5, 0.2];
  const out = new Matrix(rows, d);
  for (let i = 0; i < rows; i++)
    for (let t = 0; t < d; t++) {
      // a fixed mixing of coordinates t and t+1, so the second moments are not diagonal
      const v = s[t] * x.data[i * d + t] + 0.4 * s[(t + 1) % d] * x.data[i * d + ((t + 1) % d)];
      out.data[i * d + t] = v + (t === 0 ? shift : 0);
    }
  return out;
}
const xs = data(32, 1, 0.3);
const ys = data(32, 2, -0.2);
const rowOf = (m: Matrix, i: number) => m.data.slice(i * m.cols, (i + 1) * m.cols);
const dot = (x: ArrayLike<number>, y: ArrayLike<number>) => {
  let s = 0;
  for (let t = 0; t < x.length; t++) s += x[t] * y[t];
  return s;
};

/** Per-frequency values f(ω_l, x') of the library's map (shift "none": features·√m). */
function perFrequency(params: ExponentialFeatureParameters, x: Float64Array, side: "query" | "key", omega: Matrix): Float64Array {
  const xt = transformForFeatures(params, new Matrix(1, d, x), side);
  const f = evaluateExponentialFeatures(xt, omega, params.aDiagonal ?? params.a, "none").features.data;
  return Float64Array.from(f, (v) => v * Math.sqrt(omega.rows));
}
/** log second moment of the pair in the family's own frame. */
function logMoment(params: ExponentialFeatureParameters, x: Float64Array, y: Float64Array): number {
  const xt = transformForFeatures(params, new Matrix(1, d, x), "query").data;
  const yt = transformForFeatures(params, new Matrix(1, d, y), "key").data;
  return derfLogSecondMoment(params.aDiagonal ?? new Float64Array(d).fill(params.a), xt, yt);
}
/** mean over all pairs of the data of the log second moment: FAVOR#'s objective. */
function objective(params: ExponentialFeatureParameters): number {
  let s = 0;
  for (let i = 0; i < xs.rows; i++) for (let j = 0; j < ys.rows; j++) s += logMoment(params, rowOf(xs, i), rowOf(ys, j));
  return s / (xs.rows * ys.rows);
}
/** mean over pairs of log(Var/K²) at m frequencies. */
function meanLogRelVar(params: ExponentialFeatureParameters, m: number): number {
  let s = 0;
  for (let i = 0; i < xs.rows; i++)
    for (let j = 0; j < ys.rows; j++) {
      const x = rowOf(xs, i);
      const y = rowOf(ys, j);
      s += Math.log(exponentialFeatureVariance(params, x, y, m) / Math.exp(2 * dot(x, y)));
    }
  return s / (xs.rows * ys.rows);
}

const kinds = ["aderf", "saderf", "sderf"] as const;
const params = Object.fromEntries(kinds.map((k) => [k, exponentialFeatureParameters(k, xs, ys)])) as Record<
  (typeof kinds)[number],
  ExponentialFeatureParameters
>;

describe("closed forms vs Monte Carlo (T = 20,000 frequencies)", () => {
  const T = 20000;
  const omega = drawProjection(T, d, { projection: "iid" }, [50, "omega"]);
  // A pair of moderate norm, so that the 4th and 8th moments the tolerances rest on are small.
  const x = Float64Array.from(rowOf(xs, 0), (v) => 0.5 * v);
  const y = Float64Array.from(rowOf(ys, 1), (v) => 0.5 * v);
  const K = Math.exp(dot(x, y));
  const z = bonferroniZ(1e-3, 2 * kinds.length);
  it.each(kinds)("%s: E[f⁽¹⁾f⁽²⁾] = exp(xᵀy) and Var = the closed form", (kind) => {
    const p = params[kind];
    const fx = perFrequency(p, x, "query", omega);
    const fy = perFrequency(p, y, "key", omega);
    const prod = Float64Array.from(fx, (v, l) => v * fy[l]);
    expect(Math.abs(mean(prod) - K)).toBeLessThanOrEqual(z * standardError(prod));
    // Var(s²) ≈ (μ₄ − σ⁴)/T: the tolerance of a sample variance (variance of the variance).
    const s2 = sampleVariance(prod);
    const mu = mean(prod);
    const m4 = mean(Float64Array.from(prod, (v) => (v - mu) ** 4));
    const theory = exponentialFeatureVariance(p, x, y, 1);
    expect(Math.abs(s2 - theory)).toBeLessThanOrEqual(z * Math.sqrt((m4 - s2 * s2) / T));
  });
});

describe("the paper's dense form (FAVOR# Thm 4.1) against the per-coordinate form", () => {
  const cases: [string, ExponentialFeatureParameters][] = [
    ["gerf A = −0.1", exponentialFeatureParameters("gerf", xs, ys, -0.1)],
    ["oprf", exponentialFeatureParameters("oprf", xs, ys)],
    ...kinds.map((k) => [k, params[k]] as [string, ExponentialFeatureParameters]),
  ];
  it.each(cases)("%s: B⁽¹⁾ᵀ(I−4A)⁻¹B⁽²⁾ = I, log E = xᵀy and the second moments agree (1e-10)", (_, p) => {
    const form = denseExponentialForm(p, d);
    for (const [i, j] of [
      [0, 0],
      [3, 7],
      [11, 2],
    ]) {
      const x = rowOf(xs, i);
      const y = rowOf(ys, j);
      const { logMean, logSecondMoment } = denseExponentialLogMoments(form, x, y);
      expect(Math.abs(logMean - dot(x, y))).toBeLessThan(1e-10 * (1 + Math.abs(dot(x, y))));
      const ref = logMoment(p, x, y);
      expect(Math.abs(logSecondMoment - ref)).toBeLessThan(1e-10 * (1 + Math.abs(ref)));
    }
    // The validity identity B⁽¹⁾ᵀ(I − 4A)⁻¹B⁽²⁾ = I, literally (ml-matrix), and 8A ≺ I (finite variance).
    const ml = (m: Matrix) => new MlMatrix(Array.from({ length: d }, (_, r) => Array.from(m.data.subarray(r * d, (r + 1) * d))));
    const w = MlMatrix.sub(MlMatrix.eye(d, d), MlMatrix.mul(ml(form.a), 4));
    const id = ml(form.b1).transpose().mmul(inverse(w)).mmul(ml(form.b2));
    for (let r = 0; r < d; r++) for (let t = 0; t < d; t++) expect(Math.abs(id.get(r, t) - (r === t ? 1 : 0))).toBeLessThan(1e-12);
    const eig = new EigenvalueDecomposition(ml(form.a), { assumeSymmetric: true }).realEigenvalues;
    for (const e of eig) expect(8 * e).toBeLessThan(1);
  });
  it("SDERF's literal dense features exp(log D + ωᵀAω + ωᵀBx + xᵀCx) are unbiased (T = 20,000)", () => {
    const form = denseExponentialForm(params.sderf, d);
    const omega = drawProjection(20000, d, { projection: "iid" }, [51]);
    const x = Float64Array.from(rowOf(xs, 2), (v) => 0.5 * v);
    const y = Float64Array.from(rowOf(ys, 3), (v) => 0.5 * v);
    const f = (w: ArrayLike<number>, v: Float64Array, b: Matrix, c: Matrix) => {
      let e = form.logD;
      for (let r = 0; r < d; r++)
        for (let t = 0; t < d; t++)
          e += w[r] * form.a.data[r * d + t] * w[t] + w[r] * b.data[r * d + t] * v[t] + v[r] * c.data[r * d + t] * v[t];
      return Math.exp(e);
    };
    const prod = new Float64Array(omega.rows);
    for (let l = 0; l < omega.rows; l++) {
      const w = omega.data.subarray(l * d, (l + 1) * d);
      prod[l] = f(w, x, form.b1, form.c1) * f(w, y, form.b2, form.c2);
    }
    expect(Math.abs(mean(prod) - Math.exp(dot(x, y)))).toBeLessThanOrEqual(bonferroniZ(1e-3) * standardError(prod));
  });
});

describe("closed-form optimality", () => {
  it("SDERF: a_l solve the one-dimensional OPRF problem on M₃'s eigenvalues, and rotating Q₃ raises the objective", () => {
    const p = params.sderf;
    const m3 = meanPairSecondMoment(xs, ys);
    // Q₃ᵀ M₃ Q₃ is diagonal: the frame is M₃'s eigenbasis.
    const q = p.psi as Matrix;
    for (let a = 0; a < d; a++)
      for (let b = 0; b < d; b++) {
        if (a === b) continue;
        let s = 0;
        for (let r = 0; r < d; r++) for (let t = 0; t < d; t++) s += q.data[a * d + r] * m3.data[r * d + t] * q.data[b * d + t];
        expect(Math.abs(s)).toBeLessThan(1e-12 * 10);
      }
    const base = objective(p);
    // Givens rotations of the frame by ±0.05 rad in every coordinate plane: each raises the objective.
    for (let a = 0; a < d; a++)
      for (let b = a + 1; b < d; b++)
        for (const th of [-0.05, 0.05]) {
          const r = new Matrix(d, d, Float64Array.from(q.data));
          for (let t = 0; t < d; t++) {
            const ua = q.data[a * d + t];
            const ub = q.data[b * d + t];
            r.data[a * d + t] = Math.cos(th) * ua - Math.sin(th) * ub;
            r.data[b * d + t] = Math.sin(th) * ua + Math.cos(th) * ub;
          }
          expect(objective({ ...p, psi: r, psiInverseTranspose: r })).toBeGreaterThan(base);
        }
    // and moving any a_l by ±0.01 raises it too
    for (let l = 0; l < d; l++)
      for (const h of [-0.01, 0.01]) {
        const a = Float64Array.from(p.aDiagonal as Float64Array);
        a[l] += h;
        expect(objective({ ...p, aDiagonal: a })).toBeGreaterThan(base);
      }
  });
  it("SADERF: scaling any Ψ_ll by e^{±0.05} raises the objective", () => {
    const p = params.saderf;
    const base = objective(p);
    for (let l = 0; l < d; l++)
      for (const h of [-0.05, 0.05]) {
        const psi = new Matrix(d, d, Float64Array.from((p.psi as Matrix).data));
        const inv = new Matrix(d, d, Float64Array.from((p.psiInverseTranspose as Matrix).data));
        psi.data[l * d + l] *= Math.exp(h);
        inv.data[l * d + l] /= Math.exp(h);
        expect(objective({ ...p, psi, psiInverseTranspose: inv })).toBeGreaterThan(base);
      }
  });
});

describe("variance against FAVOR+ (m = 64 frequencies = 64 features for every family here)", () => {
  const favor = exponentialFeatureParameters("gerf", xs, ys, 0);
  const oprf = exponentialFeatureParameters("oprf", xs, ys);
  const L = Object.fromEntries(
    (
      [
        ["favor+", favor],
        ["oprf", oprf],
        ["aderf", params.aderf],
        ["saderf", params.saderf],
        ["sderf", params.sderf],
      ] as const
    ).map(([k, p]) => [k, { objective: objective(p), logRelVar: meanLogRelVar(p, 64) }]),
  );
  it("the minimized objective follows the nesting: ADERF ≤ SADERF ≤ OPRF ≤ FAVOR+, SDERF ≤ OPRF", () => {
    expect(L.aderf.objective).toBeLessThanOrEqual(L.saderf.objective + 1e-12);
    expect(L.saderf.objective).toBeLessThanOrEqual(L.oprf.objective + 1e-12);
    expect(L.oprf.objective).toBeLessThanOrEqual(L["favor+"].objective);
    expect(L.sderf.objective).toBeLessThanOrEqual(L.oprf.objective + 1e-12);
  });
  it("and so does the mean log relative variance log(Var/K²) at m = 64 on these anisotropic data", () => {
    // Not implied by the objective (log E[Z²] vs log(E[Z²] − K²)), but the regime the papers report.
    // Measured: FAVOR+ 2.30, OPRF −1.81, SADERF −1.83, ADERF −1.84, SDERF −2.38 (SDERF e^0.57 = 1.8×
    // below OPRF, OPRF e^4.1 = 60× below FAVOR+).
    expect(L.oprf.logRelVar).toBeLessThan(L["favor+"].logRelVar - 3);
    expect(L.sderf.logRelVar).toBeLessThan(L.oprf.logRelVar - 0.3);
    expect(L.aderf.logRelVar).toBeLessThan(L.oprf.logRelVar);
    expect(L.saderf.logRelVar).toBeLessThan(L.oprf.logRelVar);
  });
});

describe("in the attention driver", () => {
  const q = data(12, 60, 0.1);
  const k = data(20, 61, 0);
  const v = randomMatrix(20, 3, {}, [62, "v"]);
  it('"derf" and "aderf" are the same map (identical outputs)', () => {
    const a = randomFeatureAttention(q, k, v, { numFrequencies: 16, features: "derf" }, [63]).output.data;
    const b = randomFeatureAttention(q, k, v, { numFrequencies: 16, features: "aderf" }, [63]).output.data;
    expect(Array.from(b)).toEqual(Array.from(a));
  });
  it.each(kinds)("%s: identical keys give exact attention (every weight of a row equal), 1e-12", (features) => {
    const same = new Matrix(
      20,
      d,
      new Float64Array(20 * d).map((_, i) => [0.3, -0.2, 0.5, 0.1][i % d]),
    );
    const exact = attention(q, same, v);
    const r = randomFeatureAttention(q, same, v, { numFrequencies: 8, features }, [64]);
    for (let t = 0; t < exact.data.length; t++) expect(Math.abs(r.output.data[t] - exact.data[t])).toBeLessThan(1e-12);
  });
  it.each(["saderf", "sderf"] as const)("%s: the normalizer D·e^{logScale} is unbiased for Z (z·σ̂/√T, T = 300)", (features) => {
    const { normalizer, rowShift } = attentionScores(q, k);
    const T = 300;
    const acc = new MomentAccumulator(q.rows);
    for (let t = 0; t < T; t++) {
      const r = randomFeatureAttention(q, k, v, { numFrequencies: 8, features, projection: "iid" }, [65, features, t]);
      acc.add(Float64Array.from(r.normalizer, (x, i) => (x * Math.exp(r.normalizerLogScale[i] - rowShift[i])) / normalizer[i]));
    }
    const m = acc.mean();
    const s = acc.variance();
    const z = bonferroniZ(1e-3, 2 * q.rows);
    for (let i = 0; i < q.rows; i++) expect(Math.abs(m[i] - 1)).toBeLessThanOrEqual(z * Math.sqrt(s[i] / T));
  });
  it("typed errors", () => {
    expect(() =>
      randomFeatureAttention(q, k, v, { numFrequencies: 4, features: "sderf", kernel: { kind: "gaussian", bandwidth: 1 } }, [1]),
    ).toThrow(ValueError);
    const huge = new Matrix(2, d, new Float64Array(2 * d).fill(1e200));
    expect(() => exponentialFeatureParameters("sderf", huge, huge)).toThrow(ValueError);
  });
});
