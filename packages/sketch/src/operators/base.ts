/**
 * Shared plumbing of every operator. Each kind implements four primitives on its "core" matrix T
 * (tRows × tCols): T·X, Tᵀ·X, X·T and X·Tᵀ, plus T densely. The operator S is T itself or Tᵀ
 * (`transposed`), so one implementation serves both the wide (left-sketch) and the tall
 * (right-sketch) orientation and every operator supports both sketchLeft and sketchRight.
 */
import { type Matrix, type SeedKey, ValueError, seedString, transpose } from "@randattn/core";
import { assertFinite, assertInteger, assertOneOf, assertShape, describe } from "@randattn/core/internal";
import type { Cost, SketchDistribution, SketchOperator } from "./types.js";

/** Checks a `SeedKey` (non-empty array of strings / finite numbers) and returns a frozen copy. */
export function checkSeed(seed: SeedKey, argument = "seed"): SeedKey {
  if (!Array.isArray(seed)) throw new ValueError(argument, "a SeedKey array [rootSeed, ...purpose]", describe(seed));
  seedString(seed);
  return Object.freeze([...seed]) as unknown as SeedKey;
}

export abstract class BaseSketchOperator implements SketchOperator {
  readonly distribution: SketchDistribution;
  readonly seed: SeedKey;
  readonly rows: number;
  readonly cols: number;
  /** S = Tᵀ when true. */
  protected readonly transposed: boolean;
  /** Shape of the core matrix T. */
  protected readonly tRows: number;
  protected readonly tCols: number;

  protected constructor(distribution: SketchDistribution, seed: SeedKey, transposed: boolean) {
    this.distribution = distribution;
    this.seed = seed;
    this.rows = distribution.rows;
    this.cols = distribution.cols;
    this.transposed = transposed;
    this.tRows = transposed ? this.cols : this.rows;
    this.tCols = transposed ? this.rows : this.cols;
  }

  /** T·X, X is tCols × p. */
  protected abstract tLeft(x: Matrix): Matrix;
  /** Tᵀ·X, X is tRows × p. */
  protected abstract tTransLeft(x: Matrix): Matrix;
  /** X·T, X is m × tRows. */
  protected abstract rightT(x: Matrix): Matrix;
  /** X·Tᵀ, X is m × tCols. */
  protected abstract rightTTrans(x: Matrix): Matrix;
  /** T as a dense tRows × tCols matrix. */
  protected abstract denseT(): Matrix;
  /** Cost of one application with the other dimension p (the same on both sides for every kind here). */
  protected abstract applyCost(otherDim: number): Cost;

  /**
   * S·A. @throws ShapeError unless A.rows = S.cols; NonFiniteError on NaN/±Inf in A.
   */
  sketchLeft(a: Matrix): Matrix {
    assertShape(a, "a", this.cols, undefined, "rows = sketch cols");
    assertFinite(a, "a");
    return this.transposed ? this.tTransLeft(a) : this.tLeft(a);
  }

  /**
   * A·S. @throws ShapeError unless A.cols = S.rows; NonFiniteError on NaN/±Inf in A.
   */
  sketchRight(a: Matrix): Matrix {
    assertShape(a, "a", undefined, this.rows, "cols = sketch rows");
    assertFinite(a, "a");
    return this.transposed ? this.rightTTrans(a) : this.rightT(a);
  }

  /** S densely (rows × cols). */
  toMatrix(): Matrix {
    const t = this.denseT();
    return this.transposed ? transpose(t) : t;
  }

  /** Flops and floats stored for S·A (`"left"`, A is cols × otherDim) or A·S (`"right"`, A is otherDim × rows). */
  cost(otherDim: number, side: "left" | "right"): Cost {
    assertInteger(otherDim, "otherDim", 1);
    assertOneOf(side, "side", ["left", "right"] as const);
    return this.applyCost(otherDim);
  }
}
