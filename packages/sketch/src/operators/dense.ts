/** Dense Gaussian and Rademacher operators: T materialized once (lazily) and applied with core's kernels. */
import { type Matrix, type SeedKey, derive, matmul, matmulTransA, matmulTransB, randomMatrix } from "@randattn/core";
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
    return matmulTransB(x, this.core);
  }
  protected denseT(): Matrix {
    return this.core.clone();
  }
  protected applyCost(otherDim: number): Cost {
    return { flops: 2 * this.rows * this.cols * otherDim, floatsStored: this.rows * this.cols };
  }
}
