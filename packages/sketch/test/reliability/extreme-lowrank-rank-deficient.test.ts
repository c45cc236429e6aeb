// Issue #6, numerical extremes: the range finder, QB, blocked QB and randomized SVD on exactly
// low-rank and rank-deficient matrices, the zero matrix, and tiny / huge scales. Re-orthonormalizing
// a sample matrix with (numerically) dependent columns must never divide by zero: Q stays
// orthonormal and finite, A = QB to rounding, the singular values are the exact ones (zeros included).
import { describe, expect, it } from "vitest";
import { Matrix, frobeniusNorm, matmul, randomMatrix, sub } from "@randattn/core";
import { blockedQb, qb, randomizedSvd, rangeFinder } from "@randattn/sketch";
import { SingularValueDecomposition } from "ml-matrix";

const m = 30;
const n = 12;

/** A = U diag(σ) Vᵀ with exactly `rank` non-zero singular values σ_i = scale·2^{−i}. */
function lowRank(rank: number, scale: number, key: string): { a: Matrix; sigma: number[] } {
  const sigma = Array.from({ length: rank }, (_, i) => scale * 2 ** -i);
  let a = new Matrix(m, n);
  for (let i = 0; i < rank; i++) {
    const u = randomMatrix(m, 1, {}, [11, key, "u", i]);
    const v = randomMatrix(1, n, {}, [11, key, "v", i]);
    // Gram–Schmidt against the previous directions is not needed: exact rank is what matters;
    // the exact singular values come from the reference SVD below.
    a = new Matrix(
      m,
      n,
      a.data.map((x, p) => x + sigma[i] * u.data[Math.floor(p / n)] * v.data[p % n]),
    );
  }
  return { a, sigma };
}

function orthonormalDefect(q: Matrix): number {
  let worst = 0;
  for (let a = 0; a < q.cols; a++)
    for (let b = a; b < q.cols; b++) {
      let s = 0;
      for (let i = 0; i < q.rows; i++) s += q.data[i * q.cols + a] * q.data[i * q.cols + b];
      worst = Math.max(worst, Math.abs(s - (a === b ? 1 : 0)));
    }
  return worst;
}

const finite = (x: Matrix) => x.data.every(Number.isFinite);

// `unit` is the same matrix at scale 1 (the extreme-scale cases are `scale` times it, to rounding):
// the reference singular values come from ml-matrix on `unit`, which it handles (on 1e-300 entries
// its iteration does not terminate).
const CASES: { name: string; a: Matrix; unit: Matrix; scale: number; trueRank: number }[] = [
  { name: "zero matrix", a: new Matrix(m, n), unit: new Matrix(m, n), scale: 1, trueRank: 0 },
  { name: "exactly rank 1", a: lowRank(1, 1, "r1").a, unit: lowRank(1, 1, "r1").a, scale: 1, trueRank: 1 },
  { name: "exactly rank 3 (k = 6 > rank)", a: lowRank(3, 1, "r3").a, unit: lowRank(3, 1, "r3").a, scale: 1, trueRank: 3 },
  {
    name: "repeated columns (rank 2)",
    a: Matrix.from(m, n, (i, j) => (j % 2 === 0 ? Math.sin(i + 1) : Math.cos(2 * i))),
    unit: Matrix.from(m, n, (i, j) => (j % 2 === 0 ? Math.sin(i + 1) : Math.cos(2 * i))),
    scale: 1,
    trueRank: 2,
  },
  { name: "rank 3 at scale 1e-300", a: lowRank(3, 1e-300, "tiny").a, unit: lowRank(3, 1, "tiny").a, scale: 1e-300, trueRank: 3 },
  { name: "rank 3 at scale 1e150", a: lowRank(3, 1e150, "huge").a, unit: lowRank(3, 1, "huge").a, scale: 1e150, trueRank: 3 },
];

describe("rangeFinder / qb / randomizedSvd, k = 6 on rank-deficient inputs", () => {
  for (const c of CASES) {
    for (const orthonormalization of ["qr", "lu", "none"] as const) {
      for (const testMatrix of ["gaussian", "srht", "sparse-sign"] as const) {
        it(`${c.name}, ${orthonormalization}, ${testMatrix}: orthonormal finite Q, A = QB, exact singular values`, () => {
          const opts = { rank: 6, oversampling: 2, powerIterations: 2, orthonormalization, testMatrix };
          const { Q } = rangeFinder(c.a, opts, [11, "rf"]);
          expect(finite(Q)).toBe(true);
          expect(orthonormalDefect(Q)).toBeLessThanOrEqual(1e-12);
          const f = qb(c.a, opts, [11, "rf"]);
          expect(finite(f.B)).toBe(true);
          // rank(A) ≤ ℓ: the range is captured exactly, so ‖A − QB‖ is rounding only
          const normA = frobeniusNorm(c.a);
          expect(frobeniusNorm(sub(c.a, matmul(f.Q, f.B)))).toBeLessThanOrEqual(1e-12 * normA);
          const svd = randomizedSvd(c.a, opts, [11, "rf"]);
          expect(finite(svd.U) && finite(svd.Vt) && svd.S.every(Number.isFinite)).toBe(true);
          const sv = new SingularValueDecomposition(c.unit.toMlMatrix(), { autoTranspose: true }).diagonal.map((x) => x * c.scale);
          const top = Math.max(...sv);
          for (let i = 0; i < 6; i++) {
            // σ_i to rounding relative to σ_max; beyond the true rank they are 0 (to rounding)
            expect(Math.abs(svd.S[i] - (sv[i] ?? 0))).toBeLessThanOrEqual(1e-10 * top);
            if (i >= c.trueRank) expect(svd.S[i]).toBeLessThanOrEqual(1e-10 * top);
          }
        });
      }
    }
  }
});

describe("blockedQb (fixed accuracy) on rank-deficient inputs", () => {
  for (const c of CASES) {
    it(`${c.name}: stops at the true rank with an exact residual, Q orthonormal and finite`, () => {
      const r = blockedQb(c.a, { tolerance: 1e-10, blockSize: 2 }, [11, "bqb"]);
      expect(finite(r.Q) && finite(r.B)).toBe(true);
      expect(Number.isFinite(r.relativeError)).toBe(true);
      expect(r.rank).toBe(c.trueRank);
      expect(r.converged).toBe(true);
      expect(orthonormalDefect(r.Q)).toBeLessThanOrEqual(1e-12);
      expect(frobeniusNorm(sub(c.a, matmul(r.Q, r.B)))).toBeLessThanOrEqual(1e-10 * frobeniusNorm(c.a));
    });
  }
});
