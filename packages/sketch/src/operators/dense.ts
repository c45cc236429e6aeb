/** Dense Gaussian and Rademacher operators: T materialized once (lazily) and applied with core's kernels. */
import { Matrix, type SeedKey, derive, matmul, matmulTransA, matmulTransB, randomMatrix, transpose } from "@randattn/core";
import { tallNarrowMatmulInto } from "@randattn/core/internal";
import { BaseSketchOperator } from "./base.js";
import type { Cost, GaussianSketchDistribution, RademacherSketchDistribution } from "./types.js";

export class DenseSketchOperator extends BaseSketchOperator {
  declare readonly distribution: GaussianSketchDistribution | RademacherSketchDistribution;
  private t: Matrix | null = null;

  constructor(distribution: GaussianSketchDistribution | RademacherSketchDistribution, seed: SeedKey) {
    // Tall dense sketches are transposes of wide ones, so the entries of a d×n and an n×d sketch
    // with the same seed are transposes of each other.
    super(distribution, seed, distribution.rows > distribution.cols);
  }

  private get core(): Matrix {
    if (this.t === null) {
      const { kind, scale } = this.distribution;
      this.t = randomMatrix(this.tRows, this.tCols, { distribution: kind, scale }, derive(this.seed, kind));
    }
    return this.t;
  }

  protected tLeft(x: Matrix): Matrix {
    return matmul(this.core, x);
  }
  protected tTransLeft(x: Matrix): Matrix {
    return matmulTransA(this.core, x);
  }
  protected rightT(x: Matrix): Matrix {
    return matmul(x, this.core);
  }
  protected rightTTrans(x: Matrix): Matrix {
    const t = this.core;
    if (t.rows <= 128 && x.rows >= 4 * t.rows) {
      // A tall x times a narrow S = Tᵀ (the range finder's A·Ω, 16384 × 512 · 512 × 74): S formed
      // (small) so the product takes core's tall-narrow kernel, which reads x in place (issue 14).
      const out = new Matrix(x.rows, t.rows);
      tallNarrowMatmulInto(x.data, transpose(t).data, out.data, x.rows, x.cols, t.rows);
      return out;
    }
    return matmulTransB(x, t);
  }
  protected denseT(): Matrix {
    return this.core.clone();
  }
  protected applyCost(otherDim: number): Cost {
    return { flops: 2 * this.rows * this.cols * otherDim, floatsStored: this.rows * this.cols };
  }
}
