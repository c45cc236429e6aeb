/**
 * CholeskyQR2 (issue 14) and its a-posteriori rule. Accepted samples: Q orthonormal to O(u) (one
 * CholeskyQR pass alone leaves κ(Y)²·u ≈ 1e-8 at κ = 1e4, so a missing second pass fails the bound)
 * and the same projector as the Householder Q (span error ≤ κ(Y)·u·small — a wrong triangular
 * inverse gives O(1)). Rejected samples (null → Householder): a duplicated column, a zero column,
 * κ(Y) = 1e10 (past the u^{-1/2} ≈ 1e8 limit of Yamamoto et al. 2015), too small or too wide.
 */
import { Matrix, matmul, matmulTransA, randomMatrix } from "@randattn/core";
import { describe, expect, it } from "vitest";
import { choleskyQr2, powerStepFactor } from "../../src/lowrank/cholqr.js";
import { householderQr } from "../../src/lowrank/index.js";
import { orthonormalBasis } from "../../src/lowrank/rangefinder.js";
import { orthonormalityDefect } from "./spectra.js";

/** Y = U diag(σ) Vᵀ (m × l) with σ log-spaced from 1 down to 1/κ. */
function conditioned(m: number, l: number, kappa: number, seed: number): Matrix {
  const u = householderQr(randomMatrix(m, l, {}, [seed, "u"])).q;
  const v = householderQr(randomMatrix(l, l, {}, [seed, "v"])).q;
  for (let i = 0; i < m; i++) for (let j = 0; j < l; j++) u.data[i * l + j] *= kappa ** (-j / (l - 1));
  return matmul(u, v);
}

/** max |(Q₁Q₁ᵀ − Q₂Q₂ᵀ) applied to Q₁| via ‖Q₁ − Q₂(Q₂ᵀQ₁)‖_max: zero iff the spans agree. */
function spanGap(q1: Matrix, q2: Matrix): number {
  const proj = matmul(q2, matmulTransA(q2, q1));
  let d = 0;
  for (let i = 0; i < q1.data.length; i++) d = Math.max(d, Math.abs(q1.data[i] - proj.data[i]));
  return d;
}

describe("choleskyQr2", () => {
  it("accepts well-conditioned samples: orthonormal to O(u), the Householder span", () => {
    for (const kappa of [1, 1e2, 1e4]) {
      const y = conditioned(2048, 24, kappa, 7);
      const q = choleskyQr2(y.data, y.rows, y.cols);
      expect(q).not.toBeNull();
      const Q = new Matrix(y.rows, y.cols, q as Float64Array);
      expect(orthonormalityDefect(Q)).toBeLessThan(50 * Number.EPSILON * Math.sqrt(y.cols));
      // span error of a backward-stable QR: ≈ κ·u; 1e3 covers m, l growth constants
      expect(spanGap(Q, householderQr(y).q)).toBeLessThan(1e3 * kappa * Number.EPSILON);
    }
  });

  it("one pass (power steps) only below the certified κ bound; two passes above it", () => {
    const well = conditioned(2048, 24, 1e2, 14);
    const one = new Matrix(2048, 24, choleskyQr2(well.data, 2048, 24, 1e4) as Float64Array);
    const defect = orthonormalityDefect(one);
    // one pass: ≈ κ²u = 1e4·u, well above the two-pass O(u) bound, below 1e-8 (the κ ≤ 1e4 certificate)
    expect(defect).toBeLessThan(1e-8);
    expect(defect).toBeGreaterThan(50 * Number.EPSILON * Math.sqrt(24));
    expect(spanGap(one, householderQr(well).q)).toBeLessThan(1e3 * 1e2 * Number.EPSILON);
    const ill = conditioned(2048, 24, 1e6, 15);
    const two = new Matrix(2048, 24, choleskyQr2(ill.data, 2048, 24, 1e4) as Float64Array);
    expect(orthonormalityDefect(two)).toBeLessThan(50 * Number.EPSILON * Math.sqrt(24));
  });

  it("handles entries at 1e-300 and 1e250 by an exact rescaling", () => {
    for (const scale of [1e-300, 1e250]) {
      const y = conditioned(2048, 16, 10, 8);
      const ref = choleskyQr2(y.data, y.rows, y.cols) as Float64Array;
      const scaled = y.data.map((x) => x * scale);
      const q = choleskyQr2(scaled, y.rows, y.cols);
      expect(q).not.toBeNull();
      let d = 0;
      for (let i = 0; i < ref.length; i++) d = Math.max(d, Math.abs((q as Float64Array)[i] - ref[i]));
      expect(d).toBeLessThan(1e-13);
    }
  });

  it("rejects rank-deficient, ill-conditioned, small and wide samples (Householder takes them)", () => {
    const dup = randomMatrix(2048, 16, {}, [9]);
    for (let i = 0; i < dup.rows; i++) dup.data[i * 16 + 5] = dup.data[i * 16 + 2];
    const zero = randomMatrix(2048, 16, {}, [10]);
    for (let i = 0; i < zero.rows; i++) zero.data[i * 16 + 3] = 0;
    const ill = conditioned(2048, 16, 1e10, 11);
    for (const y of [dup, zero, ill]) expect(choleskyQr2(y.data, y.rows, y.cols)).toBeNull();
    const small = randomMatrix(100, 10, {}, [12]);
    expect(choleskyQr2(small.data, 100, 10)).toBeNull();
    const wide = randomMatrix(300, 100, {}, [13]);
    expect(choleskyQr2(wide.data, 300, 100)).toBeNull();
    // the range finder's basis falls back to Householder there: still orthonormal
    for (const y of [dup, zero, ill]) expect(orthonormalityDefect(orthonormalBasis(y))).toBeLessThan(1e-13);
  });

  it("power steps: R₁⁻¹ alone when certified (Y·R₁⁻¹ is the one-pass basis), an explicit basis otherwise", () => {
    const well = conditioned(2048, 24, 1e2, 16);
    const f = powerStepFactor(well.data, 2048, 24, 1e4);
    expect(f?.rInv).toBeDefined();
    const one = choleskyQr2(well.data, 2048, 24, 1e4) as Float64Array;
    const viaFactor = matmul(well, new Matrix(24, 24, f?.rInv as Float64Array));
    let d = 0;
    for (let i = 0; i < one.length; i++) d = Math.max(d, Math.abs(viaFactor.data[i] - one[i]));
    expect(d).toBeLessThan(1e-13);
    // κ = 1e6 fails the 1e4 certificate: CholeskyQR2's orthonormal basis, returned explicitly
    const ill = conditioned(2048, 24, 1e6, 17);
    const g = powerStepFactor(ill.data, 2048, 24, 1e4);
    expect(g?.rInv).toBeUndefined();
    expect(orthonormalityDefect(new Matrix(2048, 24, g?.q as Float64Array))).toBeLessThan(50 * Number.EPSILON * Math.sqrt(24));
    // a sample far from unit scale is rescaled first, so its basis is explicit too
    const tiny = well.data.map((x) => x * 1e-300);
    expect(powerStepFactor(tiny, 2048, 24, 1e4)?.q).toBeDefined();
    expect(powerStepFactor(randomMatrix(100, 10, {}, [18]).data, 100, 10, 1e4)).toBeNull();
  });
});
