/**
 * SRHT operator, wide form T = scale·P·H·D·E (d × n): E zero-pads n → n' = 2^⌈log₂ n⌉, D random
 * signs, H the unnormalized Walsh–Hadamard transform (fwht.ts), P keeps d distinct rows of n'
 * chosen uniformly. Applied in O(p·n' log n') without ever forming T.
 */
import { Matrix, type SeedKey, derive } from "@randattn/core";
import { rademacherArray, uniformSubset } from "../random/samplers.js";
import { BaseSketchOperator } from "./base.js";
import { fwhtInPlace, fwhtRowsInPlace } from "./fwht.js";
import type { Cost, SrhtSketchDistribution } from "./types.js";

export class SrhtSketchOperator extends BaseSketchOperator {
  declare readonly distribution: SrhtSketchDistribution;
  private state: { signs: Float64Array; selected: Int32Array } | null = null;

  constructor(distribution: SrhtSketchDistribution, seed: SeedKey) {
    super(distribution, seed, distribution.rows > distribution.cols);
  }

  private get drawn(): { signs: Float64Array; selected: Int32Array } {
    if (this.state === null) {
      this.state = {
        signs: rademacherArray(this.tCols, {}, derive(this.seed, "srht", "signs")),
        selected: uniformSubset(this.distribution.paddedDim, { count: this.tRows }, derive(this.seed, "srht", "rows")),
      };
    }
    return this.state;
  }

  /** T·X: sign-flip the n rows of X, zero-pad to n', FWHT along rows, keep the selected rows. */
  protected tLeft(x: Matrix): Matrix {
    const { signs, selected } = this.drawn;
    const N = this.distribution.paddedDim;
    const p = x.cols;
    const buf = new Float64Array(N * p);
    for (let j = 0; j < this.tCols; j++) {
      const s = signs[j];
      for (let c = 0; c < p; c++) buf[j * p + c] = s * x.data[j * p + c];
    }
    fwhtRowsInPlace(buf, N, p);
    const out = new Matrix(this.tRows, p);
    const scale = this.distribution.scale;
    for (let t = 0; t < this.tRows; t++) {
      const r = selected[t] * p;
      for (let c = 0; c < p; c++) out.data[t * p + c] = scale * buf[r + c];
    }
    return out;
  }

  /** Tᵀ·X = scale·Eᵀ·D·H·Pᵀ·X (H is symmetric): scatter rows to the selected positions, FWHT, sign, truncate. */
  protected tTransLeft(x: Matrix): Matrix {
    const { signs, selected } = this.drawn;
    const N = this.distribution.paddedDim;
    const p = x.cols;
    const buf = new Float64Array(N * p);
    for (let t = 0; t < this.tRows; t++) buf.set(x.data.subarray(t * p, (t + 1) * p), selected[t] * p);
    fwhtRowsInPlace(buf, N, p);
    const out = new Matrix(this.tCols, p);
    const scale = this.distribution.scale;
    for (let j = 0; j < this.tCols; j++) {
      const s = scale * signs[j];
      for (let c = 0; c < p; c++) out.data[j * p + c] = s * buf[j * p + c];
    }
    return out;
  }

  /** X·T = (Tᵀ Xᵀ)ᵀ, row by row: each row of X (length d) scattered, transformed, signed. */
  protected rightT(x: Matrix): Matrix {
    const { signs, selected } = this.drawn;
    const N = this.distribution.paddedDim;
    const d = this.tRows;
    const n = this.tCols;
    const scale = this.distribution.scale;
    const out = new Matrix(x.rows, n);
    const buf = new Float64Array(N);
    for (let i = 0; i < x.rows; i++) {
      buf.fill(0);
      for (let t = 0; t < d; t++) buf[selected[t]] = x.data[i * d + t];
      fwhtInPlace(buf, N);
      for (let j = 0; j < n; j++) out.data[i * n + j] = scale * signs[j] * buf[j];
    }
    return out;
  }

  /** X·Tᵀ = (T Xᵀ)ᵀ, row by row: each row of X (length n) signed, padded, transformed, subsampled. */
  protected rightTTrans(x: Matrix): Matrix {
    const { signs, selected } = this.drawn;
    const N = this.distribution.paddedDim;
    const d = this.tRows;
    const n = this.tCols;
    const scale = this.distribution.scale;
    const out = new Matrix(x.rows, d);
    const buf = new Float64Array(N);
    for (let i = 0; i < x.rows; i++) {
      buf.fill(0);
      for (let j = 0; j < n; j++) buf[j] = signs[j] * x.data[i * n + j];
      fwhtInPlace(buf, N);
      for (let t = 0; t < d; t++) out.data[i * d + t] = scale * buf[selected[t]];
    }
    return out;
  }

  /** T[t, j] = scale·H[P_t, j]·D_j with H[a, b] = (−1)^{popcount(a & b)} — written from the definition, not the FWHT. */
  protected denseT(): Matrix {
    const { signs, selected } = this.drawn;
    const out = new Matrix(this.tRows, this.tCols);
    const scale = this.distribution.scale;
    for (let t = 0; t < this.tRows; t++) {
      for (let j = 0; j < this.tCols; j++) {
        let bits = selected[t] & j;
        let parity = 0;
        while (bits) {
          parity ^= 1;
          bits &= bits - 1;
        }
        out.data[t * this.tCols + j] = (parity ? -scale : scale) * signs[j];
      }
    }
    return out;
  }

  /** p·(n sign flips + n'·log₂ n' butterflies + d rescalings); stores n signs and d row indices. */
  protected applyCost(otherDim: number): Cost {
    const N = this.distribution.paddedDim;
    const log2N = Math.round(Math.log2(N));
    return { flops: otherDim * (this.tCols + N * log2N + this.tRows), floatsStored: this.tCols + this.tRows };
  }
}
