import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { Matrix, randomMatrix, ShapeError } from "@randattn/core";
import {
  maxAbsError,
  meanKlDivergence,
  relativeFrobenius,
  relativeSpectral,
  spectralNorm,
  symmetricMaxEigenvalue,
} from "@randattn/experiments/internal";
import { catchError } from "../helpers.js";

/** ‖M‖₂ by plain power iteration on MᵀM with many steps (independent oracle). */
function powerNorm(m: Matrix): number {
  let v = new Float64Array(m.cols).fill(1);
  let lambda = 0;
  for (let it = 0; it < 5000; it++) {
    const mv = new Float64Array(m.rows);
    for (let i = 0; i < m.rows; i++) for (let j = 0; j < m.cols; j++) mv[i] += m.get(i, j) * v[j];
    const w = new Float64Array(m.cols);
    for (let j = 0; j < m.cols; j++) for (let i = 0; i < m.rows; i++) w[j] += m.get(i, j) * mv[i];
    lambda = Math.hypot(...w);
    v = w.map((x) => x / lambda);
  }
  return Math.sqrt(lambda);
}

describe("error metrics", () => {
  const exact = randomMatrix(7, 4, {}, [1, "exact"]);
  const approx = randomMatrix(7, 4, {}, [1, "approx"]);

  it("relative Frobenius and max-abs match the plain formulas", () => {
    let num = 0;
    let den = 0;
    let mx = 0;
    for (let i = 0; i < 7; i++)
      for (let j = 0; j < 4; j++) {
        const d = approx.get(i, j) - exact.get(i, j);
        num += d * d;
        den += exact.get(i, j) ** 2;
        mx = Math.max(mx, Math.abs(d));
      }
    expect(Math.abs(relativeFrobenius(approx, exact) - Math.sqrt(num / den))).toBeLessThanOrEqual(1e-12 * Math.sqrt(num / den));
    expect(maxAbsError(approx, exact)).toBe(mx);
    expect(relativeFrobenius(exact, exact)).toBe(0);
  });

  it("spectral norm: exact on a rank-one u vᵀ (‖u‖‖v‖) and equal to power iteration on random matrices", () => {
    const u = [1, -2, 3, 0.5];
    const v = [2, 1, -1];
    const r1 = Matrix.from(4, 3, (i, j) => u[i] * v[j]);
    expect(spectralNorm(r1)).toBeCloseTo(Math.hypot(...u) * Math.hypot(...v), 12);
    for (const m of [exact, randomMatrix(3, 9, {}, [2, "wide"])]) {
      const p = powerNorm(m);
      expect(Math.abs(spectralNorm(m) - p)).toBeLessThanOrEqual(1e-9 * p);
    }
    const diff = Matrix.from(7, 4, (i, j) => approx.get(i, j) - exact.get(i, j));
    expect(relativeSpectral(approx, exact)).toBeCloseTo(powerNorm(diff) / powerNorm(exact), 9);
    // The runner passes ‖Y‖₂ kept with its cached reference: the same bits as computing it here.
    expect(Object.is(relativeSpectral(approx, exact, spectralNorm(exact)), relativeSpectral(approx, exact))).toBe(true);
    expect(relativeSpectral(approx, exact, 2 * spectralNorm(exact))).toBeCloseTo(relativeSpectral(approx, exact) / 2, 14);
  });

  it("Jacobi max eigenvalue of a diagonal-plus-rotation matrix", () => {
    const c = Math.cos(0.3);
    const s = Math.sin(0.3);
    // R diag(5, 2) Rᵀ has eigenvalues 5 and 2.
    const a = Float64Array.from([5 * c * c + 2 * s * s, (5 - 2) * c * s, (5 - 2) * c * s, 5 * s * s + 2 * c * c]);
    expect(symmetricMaxEigenvalue(a, 2)).toBeCloseTo(5, 13);
  });

  it("mean KL divergence of rows, 0 for identical rows, ∞ when the approximation drops support", () => {
    const p = Matrix.fromArray([
      [0.5, 0.5, 0],
      [0.2, 0.3, 0.5],
    ]);
    const q = Matrix.fromArray([
      [0.25, 0.75, 0],
      [0.2, 0.3, 0.5],
    ]);
    const kl0 = 0.5 * Math.log(0.5 / 0.25) + 0.5 * Math.log(0.5 / 0.75);
    expect(meanKlDivergence([q], [p])).toBeCloseTo(kl0 / 2, 15);
    expect(meanKlDivergence([p], [p])).toBe(0);
    expect(
      meanKlDivergence(
        [
          Matrix.fromArray([
            [1, 0, 0],
            [0.2, 0.3, 0.5],
          ]),
        ],
        [p],
      ),
    ).toBe(Infinity);
  });

  it("mean KL divergence: the same bits as the literal sum over every entry with P_exact > 0", () => {
    // meanKlDivergence skips the logarithm where both weights are equal (a contribution of +0);
    // this is the formula written out with every logarithm taken. The rows mix entries equal in
    // both, one ulp apart (must not be skipped), zero in either, and unrelated; a whole-matrix copy
    // (the exact method against its reference) must give exactly 0.
    const literal = (approx: Matrix[], exact: Matrix[]) => {
      let total = 0;
      let rows = 0;
      for (let h = 0; h < exact.length; h++) {
        for (let i = 0; i < exact[h].rows; i++) {
          let kl = 0;
          for (let j = 0; j < exact[h].cols; j++) {
            const pj = exact[h].get(i, j);
            if (pj > 0) kl += pj * Math.log(pj / approx[h].get(i, j));
          }
          total += kl;
          rows++;
        }
      }
      return rows === 0 ? 0 : total / rows;
    };
    const entry = fc.tuple(
      fc.double({ min: 0, max: 1, noNaN: true }),
      fc.integer({ min: 0, max: 4 }),
      fc.double({ min: 1e-6, max: 1, noNaN: true }),
    );
    const heads = fc.array(fc.array(fc.array(entry, { minLength: 1, maxLength: 6 }), { minLength: 1, maxLength: 4 }), {
      minLength: 1,
      maxLength: 3,
    });
    fc.assert(
      fc.property(heads, (hs) => {
        const exact: Matrix[] = [];
        const approx: Matrix[] = [];
        for (const rows of hs) {
          const cols = Math.min(...rows.map((r) => r.length));
          const p = new Matrix(rows.length, cols);
          const q = new Matrix(rows.length, cols);
          rows.forEach((r, i) => {
            for (let j = 0; j < cols; j++) {
              const [x, how, other] = r[j];
              p.data[i * cols + j] = x;
              // 0: equal, 1: one ulp above, 2: zero, 3: unrelated, 4: P zero, Q not.
              q.data[i * cols + j] = how === 0 ? x : how === 1 ? x * (1 + Number.EPSILON) : how === 2 ? 0 : other;
              if (how === 4) p.data[i * cols + j] = 0;
            }
          });
          exact.push(p);
          approx.push(q);
        }
        expect(Object.is(meanKlDivergence(approx, exact), literal(approx, exact))).toBe(true);
        expect(meanKlDivergence(exact, exact)).toBe(0);
      }),
      { seed: 38, numRuns: 300 },
    );
    // An infinite weight is not skipped as "equal": ∞·log(∞/∞) is NaN, as in the written-out sum.
    const inf = Matrix.fromArray([[Number.POSITIVE_INFINITY, 0.5]]);
    expect(meanKlDivergence([inf], [inf])).toBeNaN();
    expect(Object.is(meanKlDivergence([inf], [inf]), literal([inf], [inf]))).toBe(true);
  });

  it("shape mismatches are ShapeErrors naming the argument", () => {
    const e = catchError(() => relativeFrobenius(randomMatrix(2, 2, {}, [1]), exact));
    expect(e).toBeInstanceOf(ShapeError);
    expect(e.message).toBe("approx: expected 7×4 (the exact output's shape), got 2×2");
  });
});
