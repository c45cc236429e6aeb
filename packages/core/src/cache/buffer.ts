/**
 * An append-only block of fixed-width rows with amortized O(1) appends: capacity doubles when
 * full, so N appends copy O(N) floats in total. Internal to the caches.
 */
import { maxAbsOf } from "../kernels/range32.js";
import { Matrix } from "../matrix.js";

export class RowBuffer {
  readonly width: number;
  private data: Float64Array;
  private rows = 0;
  /** max |x| over the stored rows (maxAbsOf's value), kept up to date by `append`; undefined: rescan. */
  private max: number | undefined = 0;

  constructor(width: number, initialCapacity: number) {
    this.width = width;
    this.data = new Float64Array(width * initialCapacity);
  }

  get length(): number {
    return this.rows;
  }

  /** Rows the current allocation holds. */
  get capacity(): number {
    return this.width === 0 ? Number.POSITIVE_INFINITY : this.data.length / this.width;
  }

  /** Appends the rows of `m` (m.cols = width, checked by the caller). */
  append(m: Matrix): void {
    const need = (this.rows + m.rows) * this.width;
    if (need > this.data.length) {
      let cap = Math.max(1, this.data.length / this.width);
      while (cap * this.width < need) cap *= 2;
      const grown = new Float64Array(cap * this.width);
      grown.set(this.data.subarray(0, this.rows * this.width));
      this.data = grown;
    }
    this.data.set(m.data, this.rows * this.width);
    this.rows += m.rows;
    // Max is exact and Math.max propagates NaN, so the running value is maxAbsOf of all stored rows.
    if (this.max !== undefined) this.max = Math.max(this.max, maxAbsOf(m.data, m.rows * this.width));
  }

  /** Drops the rows after the first `rows` (the rollback of a rejected step; rows ≤ length). */
  truncate(rows: number): void {
    if (rows < this.rows) {
      this.rows = rows;
      this.max = undefined;
    }
  }

  /**
   * max |x| over the stored rows — `maxAbsOf(view().data)`, without rescanning them: float32
   * attention's range decision on a decoding step (issue 14: the rescan of every cached K and V
   * row was 10–18 % of a float32 decoding step).
   */
  maxAbs(): number {
    this.max ??= maxAbsOf(this.data, this.rows * this.width);
    return this.max;
  }

  /** The stored rows as a Matrix view (no copy); valid until the next append that grows the buffer. */
  view(): Matrix {
    return new Matrix(this.rows, this.width, this.data.subarray(0, this.rows * this.width));
  }
}
