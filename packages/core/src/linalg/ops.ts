/**
 * Elementwise and structural operations on `Matrix`. All return new matrices unless the name
 * ends in `InPlace`. Loops run over the flat `data` array (no per-element get/set).
 */
import { Matrix } from "../matrix.js";
import { assertInteger, assertMatrix, assertMatrixList, assertNumber, assertShape, assertVector } from "../validate.js";
import { NonFiniteError, NumericalError, ShapeError, ValueError } from "../errors.js";
import { transposeInto } from "./transpose.js";

export function transpose(a: Matrix): Matrix {
  assertMatrix(a, "a");
  const { rows, cols, data } = a;
  const out = new Matrix(cols, rows);
  transposeInto(data, out.data, rows, cols);
  return out;
}

function sameShape(a: Matrix, b: Matrix): void {
  assertMatrix(a, "a");
  assertShape(b, "b", a.rows, a.cols, "same shape as a");
}

export function add(a: Matrix, b: Matrix): Matrix {
  sameShape(a, b);
  const out = new Matrix(a.rows, a.cols);
  for (let i = 0; i < a.data.length; i++) out.data[i] = a.data[i] + b.data[i];
  return out;
}

export function sub(a: Matrix, b: Matrix): Matrix {
  sameShape(a, b);
  const out = new Matrix(a.rows, a.cols);
  for (let i = 0; i < a.data.length; i++) out.data[i] = a.data[i] - b.data[i];
  return out;
}

/** a += b (in place). */
export function addInPlace(a: Matrix, b: Matrix): Matrix {
  sameShape(a, b);
  for (let i = 0; i < a.data.length; i++) a.data[i] += b.data[i];
  return a;
}

/** Hadamard (elementwise) product a ⊙ b. */
export function hadamard(a: Matrix, b: Matrix): Matrix {
  sameShape(a, b);
  const out = new Matrix(a.rows, a.cols);
  for (let i = 0; i < a.data.length; i++) out.data[i] = a.data[i] * b.data[i];
  return out;
}

export function scale(a: Matrix, s: number): Matrix {
  assertMatrix(a, "a");
  assertNumber(s, "s");
  const out = new Matrix(a.rows, a.cols);
  for (let i = 0; i < a.data.length; i++) out.data[i] = a.data[i] * s;
  return out;
}

export function map(a: Matrix, f: (x: number, i: number, j: number) => number): Matrix {
  assertMatrix(a, "a");
  const out = new Matrix(a.rows, a.cols);
  for (let i = 0; i < a.rows; i++) for (let j = 0; j < a.cols; j++) out.data[i * a.cols + j] = f(a.data[i * a.cols + j], i, j);
  return out;
}

/** Adds the length-`cols` vector `v` to every row (a bias). */
export function addRowVector(a: Matrix, v: ArrayLike<number>): Matrix {
  assertMatrix(a, "a");
  assertVector(v, "v", a.cols, "a.cols");
  const out = new Matrix(a.rows, a.cols);
  for (let i = 0; i < a.rows; i++) for (let j = 0; j < a.cols; j++) out.data[i * a.cols + j] = a.data[i * a.cols + j] + v[j];
  return out;
}

/** Row sums (A·1). */
export function rowSums(a: Matrix): Float64Array {
  assertMatrix(a, "a");
  const out = new Float64Array(a.rows);
  for (let i = 0; i < a.rows; i++) {
    let s = 0;
    const o = i * a.cols;
    for (let j = 0; j < a.cols; j++) s += a.data[o + j];
    out[i] = s;
  }
  return out;
}

/** diag(d)⁻¹ A: divides row i by d[i]. */
export function divideRows(a: Matrix, d: ArrayLike<number>): Matrix {
  assertMatrix(a, "a");
  assertVector(d, "d", a.rows, "a.rows");
  const out = new Matrix(a.rows, a.cols);
  for (let i = 0; i < a.rows; i++) {
    // d is a diagonal to invert: a zero (or NaN) divisor has no answer, so say which row.
    if (d[i] === 0 || Number.isNaN(d[i])) throw new ValueError(`d[${i}]`, "a non-zero number", String(d[i]));
    const inv = 1 / d[i];
    const o = i * a.cols;
    for (let j = 0; j < a.cols; j++) out.data[o + j] = a.data[o + j] * inv;
  }
  return out;
}

/**
 * Numerically stable row softmax: σ(x)_j = exp(x_j − max x) / Σ exp(x_ℓ − max x).
 * Subtracting the row max keeps logits of ±1e4 finite. −∞ entries are allowed (masked logits get
 * weight exactly 0); NaN or +∞ is a `NonFiniteError`, and a row that is entirely −∞ (no allowed
 * entry: σ is undefined there) is a `NumericalError` naming the row — never a row of NaN.
 */
export function softmaxRows(a: Matrix): Matrix {
  assertMatrix(a, "a");
  const out = new Matrix(a.rows, a.cols);
  const { rows, cols } = a;
  for (let i = 0; i < rows; i++) {
    const o = i * cols;
    let mx = Number.NEGATIVE_INFINITY;
    for (let j = 0; j < cols; j++) {
      const x = a.data[o + j];
      if (Number.isNaN(x) || x === Number.POSITIVE_INFINITY) throw new NonFiniteError("a", "finite or −∞ entries", `${x} at [${i}, ${j}]`);
      if (x > mx) mx = x;
    }
    if (cols > 0 && mx === Number.NEGATIVE_INFINITY)
      throw new NumericalError("a", "at least one entry > −∞ per row", `row ${i} entirely −∞`);
    let s = 0;
    for (let j = 0; j < cols; j++) {
      const e = Math.exp(a.data[o + j] - mx);
      out.data[o + j] = e;
      s += e;
    }
    const inv = 1 / s;
    for (let j = 0; j < cols; j++) out.data[o + j] *= inv;
  }
  return out;
}

/** Rows [start, end). */
export function sliceRows(a: Matrix, start: number, end?: number): Matrix {
  assertMatrix(a, "a");
  // (not a default parameter: it would read a.rows before `a` is checked)
  end ??= a.rows;
  if (!Number.isInteger(start) || !Number.isInteger(end) || start < 0 || end > a.rows || start > end) {
    throw new ValueError("start/end", `0 ≤ start ≤ end ≤ ${a.rows}`, `start=${start}, end=${end}`);
  }
  return new Matrix(end - start, a.cols, a.data.slice(start * a.cols, end * a.cols));
}

/** Columns [start, end). */
export function sliceCols(a: Matrix, start: number, end?: number): Matrix {
  assertMatrix(a, "a");
  end ??= a.cols;
  if (!Number.isInteger(start) || !Number.isInteger(end) || start < 0 || end > a.cols || start > end) {
    throw new ValueError("start/end", `0 ≤ start ≤ end ≤ ${a.cols}`, `start=${start}, end=${end}`);
  }
  const w = end - start;
  const out = new Matrix(a.rows, w);
  for (let i = 0; i < a.rows; i++) out.data.set(a.data.subarray(i * a.cols + start, i * a.cols + end), i * w);
  return out;
}

/** Rows selected by index (gather), e.g. sampled rows of V. */
export function selectRows(a: Matrix, indices: ArrayLike<number>): Matrix {
  assertMatrix(a, "a");
  assertVector(indices, "indices");
  const out = new Matrix(indices.length, a.cols);
  for (let r = 0; r < indices.length; r++) {
    const i = indices[r];
    if (!Number.isInteger(i) || i < 0 || i >= a.rows) throw new ValueError(`indices[${r}]`, `an integer in [0, ${a.rows})`, String(i));
    out.data.set(a.data.subarray(i * a.cols, (i + 1) * a.cols), r * a.cols);
  }
  return out;
}

/** concat_col(M_1, …, M_n): side by side (same number of rows). */
export function concatCols(parts: readonly Matrix[]): Matrix {
  assertMatrixList(parts, "parts");
  const rows = parts[0].rows;
  let cols = 0;
  parts.forEach((p, h) => {
    assertShape(p, `parts[${h}]`, rows, undefined, "same rows as parts[0]");
    cols += p.cols;
  });
  const out = new Matrix(rows, cols);
  let c0 = 0;
  for (const p of parts) {
    for (let i = 0; i < rows; i++) out.data.set(p.data.subarray(i * p.cols, (i + 1) * p.cols), i * cols + c0);
    c0 += p.cols;
  }
  return out;
}

/** Stacked vertically (same number of columns). */
export function concatRows(parts: readonly Matrix[]): Matrix {
  assertMatrixList(parts, "parts");
  const cols = parts[0].cols;
  let rows = 0;
  parts.forEach((p, h) => {
    assertShape(p, `parts[${h}]`, undefined, cols, "same cols as parts[0]");
    rows += p.rows;
  });
  const out = new Matrix(rows, cols);
  let off = 0;
  for (const p of parts) {
    out.data.set(p.data, off);
    off += p.data.length;
  }
  return out;
}

/** Splits columns into `n` equal blocks (the per-head view of a concatenated projection). */
export function splitCols(a: Matrix, n: number): Matrix[] {
  assertMatrix(a, "a");
  assertInteger(n, "n");
  if (a.cols % n !== 0) throw new ShapeError("a", `cols divisible by ${n}`, a.shape);
  const w = a.cols / n;
  return Array.from({ length: n }, (_, h) => sliceCols(a, h * w, (h + 1) * w));
}

/** blockdiag(M_1, …, M_n). */
export function blockDiag(parts: readonly Matrix[]): Matrix {
  assertMatrixList(parts, "parts");
  const rows = parts.reduce((s, p) => s + p.rows, 0);
  const cols = parts.reduce((s, p) => s + p.cols, 0);
  const out = new Matrix(rows, cols);
  let r0 = 0;
  let c0 = 0;
  for (const p of parts) {
    for (let i = 0; i < p.rows; i++) out.data.set(p.data.subarray(i * p.cols, (i + 1) * p.cols), (r0 + i) * cols + c0);
    r0 += p.rows;
    c0 += p.cols;
  }
  return out;
}

export function frobeniusNorm(a: Matrix): number {
  assertMatrix(a, "a");
  // scaled sum of squares: no overflow for entries near 1e200
  let mx = 0;
  for (let i = 0; i < a.data.length; i++) mx = Math.max(mx, Math.abs(a.data[i]));
  if (mx === 0 || !Number.isFinite(mx)) return mx;
  let s = 0;
  for (let i = 0; i < a.data.length; i++) {
    const v = a.data[i] / mx;
    s += v * v;
  }
  return mx * Math.sqrt(s);
}

export function maxAbs(a: Matrix): number {
  assertMatrix(a, "a");
  let m = 0;
  for (let i = 0; i < a.data.length; i++) {
    const v = Math.abs(a.data[i]);
    if (v > m || Number.isNaN(v)) m = v;
  }
  return m;
}

export function maxAbsDiff(a: Matrix, b: Matrix): number {
  sameShape(a, b);
  let m = 0;
  for (let i = 0; i < a.data.length; i++) {
    const v = Math.abs(a.data[i] - b.data[i]);
    if (v > m || Number.isNaN(v)) m = v;
  }
  return m;
}

/** ‖approx − exact‖_F / ‖exact‖_F (0 when both are zero). */
export function relativeFrobeniusError(approx: Matrix, exact: Matrix): number {
  sameShape(exact, approx);
  const den = frobeniusNorm(exact);
  const num = frobeniusNorm(sub(approx, exact));
  if (den === 0) return num === 0 ? 0 : Number.POSITIVE_INFINITY;
  return num / den;
}
