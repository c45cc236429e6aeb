/**
 * Shared references for the fast-path tests: the literal triple loop (C[i,j] = Σ_p a(i,p)·b(p,j)),
 * the componentwise error scale (|A||B|)_ij that rounding bounds are stated against, and
 * the literal softmax attention formula Y = Z⁻¹AV (paper §2.1) with row-prefix masks.
 */
import { Matrix, randomMatrix } from "@randattn/core";

/** Float32 unit roundoff u = 2⁻²⁴. */
export const U32 = 2 ** -24;
/** Float64 unit roundoff. */
export const U64 = 2 ** -53;

/** Literal loops: C = A B (A m×k, B k×n), and |A||B| for the componentwise bound. */
export function literalProduct(a: Matrix, b: Matrix): { c: Float64Array; abs: Float64Array } {
  const { rows: m, cols: k } = a;
  const n = b.cols;
  const c = new Float64Array(m * n);
  const abs = new Float64Array(m * n);
  for (let i = 0; i < m; i++) {
    for (let j = 0; j < n; j++) {
      let s = 0;
      let t = 0;
      for (let p = 0; p < k; p++) {
        const x = a.data[i * k + p] * b.data[p * n + j];
        s += x;
        t += Math.abs(x);
      }
      c[i * n + j] = s;
      abs[i * n + j] = t;
    }
  }
  return { c, abs };
}

/** max_ij |x − y| / (|A||B|)_ij (0/0 counts as 0): the componentwise relative error. */
export function componentwiseError(x: ArrayLike<number>, y: ArrayLike<number>, abs: ArrayLike<number>): number {
  let e = 0;
  for (let i = 0; i < x.length; i++) {
    const d = Math.abs(x[i] - y[i]);
    if (d === 0) continue;
    e = Math.max(e, abs[i] === 0 ? Number.POSITIVE_INFINITY : d / abs[i]);
  }
  return e;
}

/** Seeded Gaussian matrix. */
export function rnd(rows: number, cols: number, ...tag: (string | number)[]): Matrix {
  return randomMatrix(rows, cols, {}, [5, "fast-test", ...tag]);
}

/** Shapes [m, k, n]: odd, non-multiples of the 4×4 / 4×8 tiles, one row/column, k = 1, and the KC = 256 / MC = 128 block edges. */
export const SHAPES: [number, number, number][] = [
  [1, 1, 1],
  [1, 9, 13],
  [13, 9, 1],
  [5, 1, 7],
  [4, 4, 4],
  [8, 3, 8],
  [7, 11, 9],
  [17, 33, 23],
  [31, 257, 29],
  [131, 70, 37],
  [64, 64, 64],
];

/** Literal masked softmax attention: A_ij = exp(scale q_i·k_j) for j < limit_i, Y = Z⁻¹ A V (zero row when limit_i = 0). */
export function literalAttention(q: Matrix, k: Matrix, v: Matrix, scale: number, limit?: (i: number) => number): Matrix {
  const y = new Matrix(q.rows, v.cols);
  for (let i = 0; i < q.rows; i++) {
    const lim = limit ? limit(i) : k.rows;
    if (lim === 0) continue; // no allowed key: the documented zero row of onEmptyRow: "zero"
    const logits: number[] = [];
    for (let j = 0; j < lim; j++) {
      let s = 0;
      for (let p = 0; p < q.cols; p++) s += q.data[i * q.cols + p] * k.data[j * k.cols + p];
      logits.push(scale * s);
    }
    const mx = Math.max(...logits);
    let z = 0;
    const a = logits.map((t) => {
      const e = Math.exp(t - mx);
      z += e;
      return e;
    });
    for (let c = 0; c < v.cols; c++) {
      let s = 0;
      for (let j = 0; j < lim; j++) s += a[j] * v.data[j * v.cols + c];
      y.data[i * v.cols + c] = s / z;
    }
  }
  return y;
}

/** max_ij |x − y| / max_ij |y|. */
export function relMaxError(x: Matrix, y: Matrix): number {
  let e = 0;
  let s = 0;
  for (let i = 0; i < x.data.length; i++) {
    e = Math.max(e, Math.abs(x.data[i] - y.data[i]));
    s = Math.max(s, Math.abs(y.data[i]));
  }
  return s === 0 ? e : e / s;
}
