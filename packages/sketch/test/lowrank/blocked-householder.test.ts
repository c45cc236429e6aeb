/**
 * The blocked (recursive, compact-WY) Householder QR of issue 14 against the unblocked one it
 * replaced for large inputs: the same reflectors, so on a full-rank matrix Q and R agree to
 * rounding (a wrong block update or T factor gives O(1) differences); on a matrix with a zero
 * column, a duplicated column and columns at 1e-300 and 1e200 (the range finder's rank-deficient
 * and extreme samples) Q stays orthonormal and QR reproduces A. Sizes are above the blocked
 * path's threshold (m·n ≥ 2^14) with panels of 8 and of 5 (a leaf that is not a multiple of 4).
 */
import { type Matrix, matmul, randomMatrix } from "@randattn/core";
import { describe, expect, it } from "vitest";
import { householderQr } from "../../src/lowrank/index.js";
import { householderQrWith } from "../../src/lowrank/householder.js";
import { orthonormalityDefect } from "./spectra.js";

function maxAbsDiff(x: Matrix, y: Matrix): number {
  let d = 0;
  for (let i = 0; i < x.data.length; i++) d = Math.max(d, Math.abs(x.data[i] - y.data[i]));
  return d;
}

/** max over columns j of ‖(QR − A)[:, j]‖ / ‖A[:, j]‖ (0 for a zero column reproduced exactly). */
function columnResidual(a: Matrix, q: Matrix, r: Matrix): number {
  const qr = matmul(q, r);
  let worst = 0;
  for (let j = 0; j < a.cols; j++) {
    let e = 0;
    let s = 0;
    for (let i = 0; i < a.rows; i++) {
      e += (qr.data[i * a.cols + j] - a.data[i * a.cols + j]) ** 2;
      s += a.data[i * a.cols + j] ** 2;
    }
    worst = Math.max(worst, s === 0 ? Math.sqrt(e) : Math.sqrt(e / s));
  }
  return worst;
}

describe("blocked Householder QR", () => {
  const a = randomMatrix(700, 45, {}, [14, "qr", "full"]);
  const ref = householderQrWith(a, 0);

  for (const block of [8, 5]) {
    it(`panels of ${block}: same Q and R as the unblocked QR to rounding on a full-rank 700 × 45`, () => {
      const { q, r } = householderQrWith(a, block);
      // ‖Q_b − Q_u‖ is of the order of κ(A)·ε·√m (κ ≈ 1.6 here): 1e-13 leaves 100× margin
      expect(maxAbsDiff(q, ref.q)).toBeLessThan(1e-13);
      expect(maxAbsDiff(r, ref.r)).toBeLessThan(1e-13);
      for (let i = 1; i < 45; i++) for (let j = 0; j < i; j++) expect(r.data[i * 45 + j]).toBe(0);
      expect(orthonormalityDefect(q)).toBeLessThan(1e-13);
    });
  }

  it("the default householderQr takes the blocked path and agrees with it bit for bit", () => {
    const b = householderQrWith(a, 8);
    const d = householderQr(a);
    expect(d.q.data).toEqual(b.q.data);
    expect(maxAbsDiff(d.q, ref.q)).toBeGreaterThan(0); // really another summation order than unblocked
  });

  it("rank-deficient and extreme columns: orthonormal Q, QR = A, finite", () => {
    const m = 600;
    const n = 40;
    const x = randomMatrix(m, n, {}, [14, "qr", "odd"]);
    for (let i = 0; i < m; i++) {
      x.data[i * n + 3] = 0; // zero column
      x.data[i * n + 9] = x.data[i * n + 2]; // duplicate of column 2
      x.data[i * n + 17] *= 1e-300; // near underflow
      x.data[i * n + 26] *= 1e150; // ‖x‖² alone would overflow
    }
    for (const block of [8, 0]) {
      const { q, r } = householderQrWith(x, block);
      for (const v of q.data) expect(Number.isFinite(v)).toBe(true);
      expect(orthonormalityDefect(q)).toBeLessThan(1e-13);
      expect(columnResidual(x, q, r)).toBeLessThan(1e-14);
    }
  });
});
