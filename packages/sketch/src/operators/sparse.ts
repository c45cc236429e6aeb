/**
 * CountSketch and sparse sign embeddings: the wide form T (d × n) has ζ nonzeros per column
 * (ζ = 1 for CountSketch), stored as ζ (row, value) pairs per column. Every application touches
 * each entry of the input once per nonzero — O(ζ·nnz(A)) — and never forms T.
 */
import { Matrix, RandomStream, type SeedKey, derive } from "@randattn/core";
import { BaseSketchOperator } from "./base.js";
import type { CountSketchDistribution, Cost, SparseSignSketchDistribution } from "./types.js";

export class SparseSketchOperator extends BaseSketchOperator {
  declare readonly distribution: CountSketchDistribution | SparseSignSketchDistribution;
  /** ζ, nonzeros per column of T. */
  readonly nnzPerColumn: number;
  private state: { rowIndex: Int32Array; values: Float64Array } | null = null;

  constructor(distribution: CountSketchDistribution | SparseSignSketchDistribution, seed: SeedKey) {
    super(distribution, seed, distribution.rows > distribution.cols);
    this.nnzPerColumn = distribution.kind === "sparse-sign" ? distribution.nnzPerColumn : 1;
  }

  /** Column j's nonzeros sit at rowIndex[jζ .. jζ+ζ) with values[…]. */
  private get drawn(): { rowIndex: Int32Array; values: Float64Array } {
    if (this.state === null) {
      const z = this.nnzPerColumn;
      const d = this.tRows;
      const n = this.tCols;
      const scale = this.distribution.scale;
      const rng = new RandomStream(derive(this.seed, this.distribution.kind));
      const rowIndex = new Int32Array(n * z);
      const values = new Float64Array(n * z);
      // ζ distinct rows per column: a partial Fisher–Yates shuffle of [0, d) undone after each
      // column, O(ζ) per column whatever d is. For CountSketch (ζ = 1) this is a uniform hash.
      const perm = new Int32Array(d);
      for (let r = 0; r < d; r++) perm[r] = r;
      const swaps = new Int32Array(z);
      for (let j = 0; j < n; j++) {
        for (let k = 0; k < z; k++) {
          const pick = k + rng.int(d - k);
          swaps[k] = pick;
          const tmp = perm[k];
          perm[k] = perm[pick];
          perm[pick] = tmp;
          rowIndex[j * z + k] = perm[k];
          values[j * z + k] = scale * rng.sign();
        }
        for (let k = z - 1; k >= 0; k--) {
          const pick = swaps[k];
          const tmp = perm[k];
          perm[k] = perm[pick];
          perm[pick] = tmp;
        }
      }
      this.state = { rowIndex, values };
    }
    return this.state;
  }

  /** T·X: row j of X is added, signed, into the ζ output rows of column j. */
  protected tLeft(x: Matrix): Matrix {
    const { rowIndex, values } = this.drawn;
    const z = this.nnzPerColumn;
    const p = x.cols;
    const out = new Matrix(this.tRows, p);
    for (let j = 0; j < this.tCols; j++) {
      const src = j * p;
      for (let k = 0; k < z; k++) {
        const dst = rowIndex[j * z + k] * p;
        const v = values[j * z + k];
        for (let c = 0; c < p; c++) out.data[dst + c] += v * x.data[src + c];
      }
    }
    return out;
  }

  /** Tᵀ·X: output row j gathers its ζ signed rows of X. */
  protected tTransLeft(x: Matrix): Matrix {
    const { rowIndex, values } = this.drawn;
    const z = this.nnzPerColumn;
    const p = x.cols;
    const out = new Matrix(this.tCols, p);
    for (let j = 0; j < this.tCols; j++) {
      const dst = j * p;
      for (let k = 0; k < z; k++) {
        const src = rowIndex[j * z + k] * p;
        const v = values[j * z + k];
        for (let c = 0; c < p; c++) out.data[dst + c] += v * x.data[src + c];
      }
    }
    return out;
  }

  /** X·T: out[i, j] = Σ_k v_{jk}·X[i, r_{jk}]. */
  protected rightT(x: Matrix): Matrix {
    const { rowIndex, values } = this.drawn;
    const z = this.nnzPerColumn;
    const d = this.tRows;
    const n = this.tCols;
    const out = new Matrix(x.rows, n);
    for (let i = 0; i < x.rows; i++) {
      const xo = i * d;
      const oo = i * n;
      for (let j = 0; j < n; j++) {
        let s = 0;
        for (let k = 0; k < z; k++) s += values[j * z + k] * x.data[xo + rowIndex[j * z + k]];
        out.data[oo + j] = s;
      }
    }
    return out;
  }

  /** X·Tᵀ: out[i, r_{jk}] += v_{jk}·X[i, j] — one pass over X (the CountSketch of each row). */
  protected rightTTrans(x: Matrix): Matrix {
    const { rowIndex, values } = this.drawn;
    const z = this.nnzPerColumn;
    const d = this.tRows;
    const n = this.tCols;
    const out = new Matrix(x.rows, d);
    for (let i = 0; i < x.rows; i++) {
      const xo = i * n;
      const oo = i * d;
      for (let j = 0; j < n; j++) {
        const xv = x.data[xo + j];
        if (xv === 0) continue; // O(nnz(A)): zero entries cost nothing
        for (let k = 0; k < z; k++) out.data[oo + rowIndex[j * z + k]] += values[j * z + k] * xv;
      }
    }
    return out;
  }

  protected denseT(): Matrix {
    const { rowIndex, values } = this.drawn;
    const z = this.nnzPerColumn;
    const out = new Matrix(this.tRows, this.tCols);
    for (let j = 0; j < this.tCols; j++) {
      for (let k = 0; k < z; k++) out.data[rowIndex[j * z + k] * this.tCols + j] += values[j * z + k];
    }
    return out;
  }

  /** One multiply and one add per (input entry, nonzero): 2ζ·n·p; stores ζ·n row indices and ζ·n values. */
  protected applyCost(otherDim: number): Cost {
    const nnz = this.nnzPerColumn * this.tCols;
    return { flops: 2 * nnz * otherDim, floatsStored: 2 * nnz };
  }
}
