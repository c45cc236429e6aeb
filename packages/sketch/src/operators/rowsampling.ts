/**
 * Row-sampling operator: T (s × n) has a single nonzero per row, T[t, i_t] = scale/√p_{i_t}, with
 * i_t drawn i.i.d. from p by the alias method. With scale = 1/√s, E[TᵀT] = Σ_j s·p_j·1/(s p_j)·e_j e_jᵀ = I.
 */
import { Matrix, type SeedKey, derive } from "@randattn/core";
import { AliasTable } from "../random/categorical.js";
import { BaseSketchOperator } from "./base.js";
import type { Cost, RowSamplingOperator, RowSamplingSketchDistribution } from "./types.js";

export class RowSamplingSketchOperator extends BaseSketchOperator implements RowSamplingOperator {
  declare readonly distribution: RowSamplingSketchDistribution;
  private state: { indices: Int32Array; weights: Float64Array } | null = null;

  constructor(distribution: RowSamplingSketchDistribution, seed: SeedKey) {
    super(distribution, seed, distribution.side === "right");
  }

  private get drawn(): { indices: Int32Array; weights: Float64Array } {
    if (this.state === null) {
      const { probabilities, samples, scale } = this.distribution;
      const indices = AliasTable.fromProbabilities(probabilities, "distribution.probabilities").sample(
        { count: samples },
        derive(this.seed, "row-sampling"),
      );
      const weights = new Float64Array(samples);
      for (let t = 0; t < samples; t++) weights[t] = scale / Math.sqrt(probabilities[indices[t]]);
      this.state = { indices, weights };
    }
    return this.state;
  }

  /** The s sampled indices (a copy). */
  get indices(): Int32Array {
    return this.drawn.indices.slice();
  }

  /** The s weights scale/√p_{i_t} (a copy). */
  get weights(): Float64Array {
    return this.drawn.weights.slice();
  }

  protected tLeft(x: Matrix): Matrix {
    const { indices, weights } = this.drawn;
    const p = x.cols;
    const out = new Matrix(this.tRows, p);
    for (let t = 0; t < this.tRows; t++) {
      const w = weights[t];
      const src = indices[t] * p;
      for (let c = 0; c < p; c++) out.data[t * p + c] = w * x.data[src + c];
    }
    return out;
  }

  protected tTransLeft(x: Matrix): Matrix {
    const { indices, weights } = this.drawn;
    const p = x.cols;
    const out = new Matrix(this.tCols, p);
    for (let t = 0; t < this.tRows; t++) {
      const w = weights[t];
      const dst = indices[t] * p;
      for (let c = 0; c < p; c++) out.data[dst + c] += w * x.data[t * p + c];
    }
    return out;
  }

  protected rightT(x: Matrix): Matrix {
    const { indices, weights } = this.drawn;
    const s = this.tRows;
    const n = this.tCols;
    const out = new Matrix(x.rows, n);
    for (let i = 0; i < x.rows; i++) {
      for (let t = 0; t < s; t++) out.data[i * n + indices[t]] += weights[t] * x.data[i * s + t];
    }
    return out;
  }

  protected rightTTrans(x: Matrix): Matrix {
    const { indices, weights } = this.drawn;
    const s = this.tRows;
    const n = this.tCols;
    const out = new Matrix(x.rows, s);
    for (let i = 0; i < x.rows; i++) {
      for (let t = 0; t < s; t++) out.data[i * s + t] = weights[t] * x.data[i * n + indices[t]];
    }
    return out;
  }

  protected denseT(): Matrix {
    const { indices, weights } = this.drawn;
    const out = new Matrix(this.tRows, this.tCols);
    for (let t = 0; t < this.tRows; t++) out.data[t * this.tCols + indices[t]] = weights[t];
    return out;
  }

  /** s·p multiplications; stores s indices and s weights. */
  protected applyCost(otherDim: number): Cost {
    return { flops: this.tRows * otherDim, floatsStored: 2 * this.tRows };
  }
}
