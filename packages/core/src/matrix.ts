/**
 * The dense matrix type every RandAttn kernel works on: flat row-major `Float64Array`
 * (element (i, j) at `data[i * cols + j]`). Plain data, no methods that allocate behind the
 * caller's back; the hot kernels in `matmul.ts` and `ops.ts` read `data` directly.
 */
import { Matrix as MlMatrix } from "ml-matrix";
import { ShapeError, ValueError } from "./errors.js";

export class Matrix {
  readonly rows: number;
  readonly cols: number;
  readonly data: Float64Array;

  /**
   * Wraps (does not copy) `data` as a `rows × cols` row-major matrix.
   * @throws ShapeError when `data.length !== rows * cols`.
   */
  constructor(rows: number, cols: number, data?: Float64Array) {
    if (!Number.isInteger(rows) || rows < 0) throw new ValueError("rows", "a non-negative integer", String(rows));
    if (!Number.isInteger(cols) || cols < 0) throw new ValueError("cols", "a non-negative integer", String(cols));
    if (data !== undefined && !(data instanceof Float64Array)) {
      throw new ShapeError(
        "data",
        "a Float64Array (or undefined)",
        data === null ? "null" : Array.isArray(data) ? "an array" : typeof data,
      );
    }
    if (data !== undefined && data.length !== rows * cols) {
      throw new ShapeError("data", `length ${rows * cols} (${rows}×${cols})`, `length ${data.length}`);
    }
    this.rows = rows;
    this.cols = cols;
    this.data = data ?? allocate(rows, cols);
  }

  /** `"rows×cols"`, used in error messages. */
  get shape(): string {
    return `${this.rows}×${this.cols}`;
  }

  /** Element (i, j). Convenience for tests and small code; hot paths index `data` directly. */
  get(i: number, j: number): number {
    return this.data[i * this.cols + j];
  }

  set(i: number, j: number, value: number): void {
    this.data[i * this.cols + j] = value;
  }

  /** A copy of row i as a new `Float64Array`. */
  row(i: number): Float64Array {
    return this.data.slice(i * this.cols, (i + 1) * this.cols);
  }

  /** A view (no copy) of row i. Writing to it writes to the matrix. */
  rowView(i: number): Float64Array {
    return this.data.subarray(i * this.cols, (i + 1) * this.cols);
  }

  clone(): Matrix {
    return new Matrix(this.rows, this.cols, this.data.slice());
  }

  static zeros(rows: number, cols: number): Matrix {
    return new Matrix(rows, cols);
  }

  static identity(n: number): Matrix {
    const m = new Matrix(n, n);
    for (let i = 0; i < n; i++) m.data[i * n + i] = 1;
    return m;
  }

  /** Matrix filled by `f(i, j)`. */
  static from(rows: number, cols: number, f: (i: number, j: number) => number): Matrix {
    const m = new Matrix(rows, cols);
    for (let i = 0; i < rows; i++) for (let j = 0; j < cols; j++) m.data[i * cols + j] = f(i, j);
    return m;
  }

  /**
   * From nested arrays (`[[1, 2], [3, 4]]`). An empty outer array gives 0×0.
   * @throws ShapeError on ragged rows.
   */
  static fromArray(rows: ArrayLike<ArrayLike<number>>, argument = "rows"): Matrix {
    if (!isArrayLike(rows)) throw new ShapeError(argument, "an array of rows", rows === null ? "null" : typeof rows);
    const r = rows.length;
    if (r > 0 && !isArrayLike(rows[0]))
      throw new ShapeError(`${argument}[0]`, "an array of numbers", rows[0] === null ? "null" : typeof rows[0]);
    const c = r === 0 ? 0 : rows[0].length;
    const m = new Matrix(r, c);
    for (let i = 0; i < r; i++) {
      const row = rows[i];
      if (!isArrayLike(row) || row.length !== c)
        throw new ShapeError(
          `${argument}[${i}]`,
          `length ${c}`,
          isArrayLike(row) ? `length ${row.length}` : row === null ? "null" : typeof row,
        );
      for (let j = 0; j < c; j++) m.data[i * c + j] = row[j];
    }
    return m;
  }

  /** A 1 × n row vector. */
  static rowVector(values: ArrayLike<number>): Matrix {
    return new Matrix(1, values.length, Float64Array.from(values));
  }

  /** Nested arrays, for printing, JSON and tests. */
  toArray(): number[][] {
    const out: number[][] = [];
    for (let i = 0; i < this.rows; i++) out.push(Array.from(this.data.subarray(i * this.cols, (i + 1) * this.cols)));
    return out;
  }

  /** Conversion to ml-matrix (copies), for its factorizations (SVD, QR, EVD, Cholesky). */
  toMlMatrix(): MlMatrix {
    return MlMatrix.from1DArray(this.rows, this.cols, this.data);
  }

  /** Conversion from ml-matrix (copies). */
  static fromMlMatrix(m: { rows: number; columns: number; get(i: number, j: number): number }): Matrix {
    const out = new Matrix(m.rows, m.columns);
    for (let i = 0; i < m.rows; i++) for (let j = 0; j < m.columns; j++) out.data[i * m.columns + j] = m.get(i, j);
    return out;
  }
}

/** A zeroed rows × cols buffer; a size the engine cannot allocate is a ValueError, not a RangeError. */
function allocate(rows: number, cols: number): Float64Array {
  try {
    return new Float64Array(rows * cols);
  } catch (e) {
    if (e instanceof RangeError) throw new ValueError("rows×cols", "a matrix size this engine can allocate", `${rows}×${cols}`);
    throw e;
  }
}

/** An array or typed array (not a string): what `ArrayLike` arguments must be at run time. */
function isArrayLike(v: unknown): v is ArrayLike<unknown> {
  return v !== null && typeof v === "object" && typeof (v as ArrayLike<unknown>).length === "number";
}

/** Anything accepted where a matrix is expected: a `Matrix` or nested arrays. */
export type MatrixLike = Matrix | ArrayLike<ArrayLike<number>>;

/** Normalizes a `MatrixLike` argument to a `Matrix` (no copy for a `Matrix`). */
export function asMatrix(m: MatrixLike, argument = "matrix"): Matrix {
  if (m instanceof Matrix) return m;
  if (m === null || typeof m !== "object" || typeof (m as ArrayLike<unknown>).length !== "number") {
    throw new ShapeError(argument, "a Matrix or an array of rows", m === null ? "null" : typeof m);
  }
  return Matrix.fromArray(m, argument);
}
