/**
 * Literal reference formulas of Serret (2026) written as plain loops over nested arrays — the
 * oracle the attention module is checked against. No kernels, no shifts, no cleverness:
 *   A[i,j] = 1_{j∈S_i} κ(Q[i,:], K[j,:]),  Z = diag(A·1),  Y = Z⁻¹ A V.
 */
import { Matrix } from "@randattn/core";

export type Rows = number[][];
export type Kappa = (q: number[], k: number[]) => number;

export function rows(m: Matrix): Rows {
  return m.toArray();
}

export function dot(a: ArrayLike<number>, b: ArrayLike<number>): number {
  let s = 0;
  for (let p = 0; p < a.length; p++) s += a[p] * b[p];
  return s;
}

/** κ(v,w) = exp(scale·⟨v,w⟩), literally (no max-shift). */
export const expKappa =
  (scale: number): Kappa =>
  (q, k) =>
    Math.exp(scale * dot(q, k));

/** X W by the triple loop. */
export function literalMatmul(x: Rows, w: Rows): Rows {
  const out: Rows = [];
  for (let i = 0; i < x.length; i++) {
    const row: number[] = [];
    for (let j = 0; j < w[0].length; j++) {
      let s = 0;
      for (let p = 0; p < w.length; p++) s += x[i][p] * w[p][j];
      row.push(s);
    }
    out.push(row);
  }
  return out;
}

/** A, Z and Y = Z⁻¹AV by the paper's formula. `allowed(i, j)` is 1_{j∈S_i} (default: all). */
export function literalAttention(
  q: Rows,
  k: Rows,
  v: Rows,
  kappa: Kappa,
  allowed: (i: number, j: number) => boolean = () => true,
): { a: Rows; z: number[]; y: Rows; p: Rows } {
  const a: Rows = [];
  const z: number[] = [];
  for (let i = 0; i < q.length; i++) {
    const row: number[] = [];
    let s = 0;
    for (let j = 0; j < k.length; j++) {
      const val = allowed(i, j) ? kappa(q[i], k[j]) : 0;
      row.push(val);
      s += val;
    }
    a.push(row);
    z.push(s);
  }
  const p = a.map((row, i) => row.map((x) => x / z[i]));
  const y: Rows = [];
  for (let i = 0; i < q.length; i++) {
    const row: number[] = [];
    for (let c = 0; c < v[0].length; c++) {
      let s = 0;
      for (let j = 0; j < k.length; j++) s += a[i][j] * v[j][c];
      row.push(s / z[i]);
    }
    y.push(row);
  }
  return { a, z, y, p };
}

/** Concatenation by columns of nested arrays. */
export function literalConcatCols(parts: Rows[]): Rows {
  return parts[0].map((_, i) => parts.flatMap((p) => p[i]));
}

/** ‖x − y‖_F / ‖y‖_F. */
export function relErr(x: Matrix | Rows, y: Matrix | Rows): number {
  const xr = x instanceof Matrix ? rows(x) : x;
  const yr = y instanceof Matrix ? rows(y) : y;
  if (xr.length !== yr.length) throw new Error(`row count ${xr.length} vs ${yr.length}`);
  let num = 0;
  let den = 0;
  for (let i = 0; i < yr.length; i++) {
    if (xr[i].length !== yr[i].length) throw new Error(`row ${i} length ${xr[i].length} vs ${yr[i].length}`);
    for (let j = 0; j < yr[i].length; j++) {
      num += (xr[i][j] - yr[i][j]) ** 2;
      den += yr[i][j] ** 2;
    }
  }
  return Math.sqrt(num / (den || 1));
}

/** True when every entry is a finite number. */
export function allFinite(m: Matrix): boolean {
  return m.data.every((x) => Number.isFinite(x));
}
