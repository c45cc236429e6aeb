/**
 * Constructors and validation of the immutable sketch distributions. Each returns a frozen object;
 * `createSketch(distribution, seed)` (create.ts) turns one into an operator.
 */
import { type Matrix as MlMatrix, SVD } from "ml-matrix";
import { type Matrix, ShapeError, ValueError } from "@randattn/core";
import {
  assertFinite,
  assertInteger,
  assertMatrix,
  assertNonEmpty,
  assertNumber,
  assertOneOf,
  describe,
  assertOptions,
} from "@randattn/core/internal";
import { normalizeWeights, validateProbabilities } from "../random/probabilities.js";
import type {
  CountSketchDistribution,
  GaussianSketchDistribution,
  RademacherSketchDistribution,
  RowSamplingScheme,
  RowSamplingSketchDistribution,
  SketchDistribution,
  SketchKind,
  SparseSignSketchDistribution,
  SrhtSketchDistribution,
} from "./types.js";

const KINDS: readonly SketchKind[] = ["gaussian", "rademacher", "srht", "countsketch", "sparse-sign", "row-sampling"];
const MAX_DIM = 2 ** 30;

/** Options shared by the dense and structured sketch constructors. */
export interface SketchScaleOptions {
  /**
   * Global multiplier of the entries.
   * @default 1/√min(rows, cols) (gaussian, rademacher, srht), 1 (countsketch), 1/√nnzPerColumn (sparse-sign)
   */
  scale?: number;
}

function dims(rows: unknown, cols: unknown): { short: number; long: number } {
  assertInteger(rows, "rows", 1, MAX_DIM);
  assertInteger(cols, "cols", 1, MAX_DIM);
  return { short: Math.min(rows, cols), long: Math.max(rows, cols) };
}

function scaleOf(options: SketchScaleOptions | undefined, fallback: number): number {
  if (options !== undefined && (options === null || typeof options !== "object")) {
    throw new ValueError("options", "an options object", describe(options));
  }
  const scale = options?.scale ?? fallback;
  assertNumber(scale, "options.scale", { positive: true });
  return scale;
}

/** Smallest power of two ≥ n. */
export function nextPowerOfTwo(n: number): number {
  assertInteger(n, "n", 1, MAX_DIM);
  let p = 1;
  while (p < n) p *= 2;
  return p;
}

/** Dense Gaussian sketch: entries N(0, scale²), scale = 1/√min(rows, cols) by default. */
export function gaussianSketch(rows: number, cols: number, options?: SketchScaleOptions): GaussianSketchDistribution {
  const { short } = dims(rows, cols);
  return Object.freeze({ kind: "gaussian", rows, cols, scale: scaleOf(options, 1 / Math.sqrt(short)) });
}

/** Dense Rademacher (sign) sketch: entries ±scale, scale = 1/√min(rows, cols) by default. */
export function rademacherSketch(rows: number, cols: number, options?: SketchScaleOptions): RademacherSketchDistribution {
  const { short } = dims(rows, cols);
  return Object.freeze({ kind: "rademacher", rows, cols, scale: scaleOf(options, 1 / Math.sqrt(short)) });
}

/** SRHT: S = scale·P·H·D·E (see {@link SrhtSketchDistribution}); scale = 1/√min(rows, cols) by default. */
export function srhtSketch(rows: number, cols: number, options?: SketchScaleOptions): SrhtSketchDistribution {
  const { short, long } = dims(rows, cols);
  return Object.freeze({ kind: "srht", rows, cols, scale: scaleOf(options, 1 / Math.sqrt(short)), paddedDim: nextPowerOfTwo(long) });
}

/** CountSketch: one ±scale per column of the wide form in a hashed row; scale = 1 by default. */
export function countSketch(rows: number, cols: number, options?: SketchScaleOptions): CountSketchDistribution {
  dims(rows, cols);
  return Object.freeze({ kind: "countsketch", rows, cols, scale: scaleOf(options, 1) });
}

/** Options of {@link sparseSignSketch}. */
export interface SparseSignOptions extends SketchScaleOptions {
  /**
   * ζ, nonzeros per column of the wide form (1 ≤ ζ ≤ min(rows, cols)). ζ = 8 is the choice
   * recommended by Tropp, Yurtsever, Udell & Cevher (2019).
   * @default min(8, min(rows, cols))
   */
  nnzPerColumn?: number;
}

/** Sparse sign embedding: ζ nonzeros ±scale per column of the wide form; scale = 1/√ζ by default. */
export function sparseSignSketch(rows: number, cols: number, options?: SparseSignOptions): SparseSignSketchDistribution {
  const { short } = dims(rows, cols);
  const nnzPerColumn = options?.nnzPerColumn ?? Math.min(8, short);
  assertInteger(nnzPerColumn, "options.nnzPerColumn", 1, short);
  return Object.freeze({ kind: "sparse-sign", rows, cols, scale: scaleOf(options, 1 / Math.sqrt(nnzPerColumn)), nnzPerColumn });
}

/** Options of the row samplers. */
export interface RowSamplerOptions {
  /**
   * `"left"`: S is samples × n and S·A keeps rows of A; `"right"`: S is n × samples and A·S keeps
   * columns of A (then squared-norm / leverage scores are those of A's columns).
   * @default "left"
   */
  side?: "left" | "right";
  /** Global multiplier; the row weights are scale/√p_j. @default 1/√samples */
  scale?: number;
}

function rowSampler(
  samples: number,
  probabilities: Float64Array,
  scheme: RowSamplingScheme,
  options: RowSamplerOptions | undefined,
): RowSamplingSketchDistribution {
  assertInteger(samples, "samples", 1, MAX_DIM);
  const side = options?.side ?? "left";
  assertOneOf(side, "options.side", ["left", "right"] as const);
  const scale = scaleOf(options, 1 / Math.sqrt(samples));
  const n = probabilities.length;
  return Object.freeze({
    kind: "row-sampling",
    rows: side === "left" ? samples : n,
    cols: side === "left" ? n : samples,
    scale,
    scheme,
    side,
    samples,
    probabilities: Object.freeze(Array.from(probabilities)),
  });
}

/** Uniform row sampler over a population of n indices (p_j = 1/n). */
export function uniformRowSampler(samples: number, n: number, options?: RowSamplerOptions): RowSamplingSketchDistribution {
  assertInteger(n, "n", 1, MAX_DIM);
  return rowSampler(samples, new Float64Array(n).fill(1 / n), "uniform", options);
}

function checkedInput(a: Matrix, side: "left" | "right" | undefined): Matrix {
  assertMatrix(a, "a");
  assertNonEmpty(a, "a");
  assertFinite(a, "a");
  assertOneOf(side ?? "left", "options.side", ["left", "right"] as const);
  return a;
}

/** Squared-norm sampler: p_j ∝ ‖A_j‖² over the rows (side "left") or columns (side "right") of `a`. */
export function squaredNormRowSampler(samples: number, a: Matrix, options?: RowSamplerOptions): RowSamplingSketchDistribution {
  checkedInput(a, options?.side);
  const byRows = (options?.side ?? "left") === "left";
  const w = new Float64Array(byRows ? a.rows : a.cols);
  const { rows, cols, data } = a;
  for (let i = 0; i < rows; i++) {
    for (let j = 0; j < cols; j++) {
      const v = data[i * cols + j];
      w[byRows ? i : j] += v * v;
    }
  }
  return rowSampler(samples, normalizeWeights(w, "a (squared norms)"), "squared-norm", options);
}

/** Options of {@link leverageScores}. */
export interface LeverageOptions {
  /** Singular values ≤ tolerance·σ_max count as zero when fixing the rank. @default max(rows, cols)·2⁻⁵² */
  rankTolerance?: number;
  /** Rows (`"left"`) or columns (`"right"`) of A. @default "left" */
  side?: "left" | "right";
}

/**
 * Exact leverage scores ℓ_j = ‖U_j‖² of the rows of A (U: orthonormal basis of range(A), from
 * ml-matrix's SVD; rank r fixed by `rankTolerance`), or of its columns with `side: "right"`.
 * Σ ℓ_j = r. Returns `{ scores, rank }`.
 */
export function leverageScores(a: Matrix, options: LeverageOptions = {}): { scores: Float64Array; rank: number } {
  assertOptions(options, "options");
  checkedInput(a, options.side);
  const byRows = (options.side ?? "left") === "left";
  let ml = a.toMlMatrix();
  if (!byRows) ml = ml.transpose();
  const tol = options.rankTolerance ?? Math.max(a.rows, a.cols) * 2 ** -52;
  assertNumber(tol, "options.rankTolerance", { min: 0 });
  // The left singular vectors span range(A); autoTranspose keeps the SVD cheap for wide inputs.
  const svd = new SVD(ml, { computeLeftSingularVectors: true, computeRightSingularVectors: false, autoTranspose: true });
  const sigma = svd.diagonal;
  const smax = sigma.reduce((m, v) => Math.max(m, v), 0);
  if (smax === 0) throw new ValueError("a", "a nonzero matrix (rank ≥ 1)", "all zeros");
  const U: MlMatrix = svd.leftSingularVectors;
  const rank = sigma.filter((v) => v > tol * smax).length;
  const n = ml.rows;
  const scores = new Float64Array(n);
  for (let c = 0; c < sigma.length; c++) {
    if (!(sigma[c] > tol * smax)) continue;
    for (let j = 0; j < n; j++) scores[j] += U.get(j, c) ** 2;
  }
  return { scores, rank };
}

/** Leverage-score sampler: p_j = ℓ_j / rank(A) (exact scores via SVD, see {@link leverageScores}). */
export function leverageScoreRowSampler(
  samples: number,
  a: Matrix,
  options?: RowSamplerOptions & Pick<LeverageOptions, "rankTolerance">,
): RowSamplingSketchDistribution {
  const { scores } = leverageScores(a, { side: options?.side, rankTolerance: options?.rankTolerance });
  return rowSampler(samples, normalizeWeights(scores, "a (leverage scores)"), "leverage", options);
}

/** Options of {@link weightedRowSampler}. */
export interface WeightedRowSamplerOptions extends RowSamplerOptions {
  /**
   * `true`: `weights` are arbitrary non-negative weights, normalized to p = w/Σw.
   * `false`: `weights` must already be a probability vector (Σ = 1 within 1e-9), else ValueError.
   * @default true
   */
  normalize?: boolean;
}

/** Sampler with arbitrary non-negative weights (normalized) or a given probability vector. */
export function weightedRowSampler(
  samples: number,
  weights: ArrayLike<number>,
  options?: WeightedRowSamplerOptions,
): RowSamplingSketchDistribution {
  const p = (options?.normalize ?? true) ? normalizeWeights(weights) : validateProbabilities(weights, "weights");
  return rowSampler(samples, p, "weights", options);
}

/**
 * Validates a distribution built by hand (or deserialized): known kind, integer sizes, positive
 * finite scale, and the kind's parameters. Returns a frozen copy.
 */
export function validateDistribution(distribution: SketchDistribution, argument = "distribution"): SketchDistribution {
  if (distribution === null || typeof distribution !== "object") {
    throw new ValueError(argument, "a SketchDistribution object", describe(distribution));
  }
  const d = distribution;
  assertOneOf(d.kind, `${argument}.kind`, KINDS);
  assertInteger(d.rows, `${argument}.rows`, 1, MAX_DIM);
  assertInteger(d.cols, `${argument}.cols`, 1, MAX_DIM);
  assertNumber(d.scale, `${argument}.scale`, { positive: true });
  const short = Math.min(d.rows, d.cols);
  const long = Math.max(d.rows, d.cols);
  switch (d.kind) {
    case "srht":
      if (d.paddedDim !== nextPowerOfTwo(long)) {
        throw new ValueError(`${argument}.paddedDim`, `${nextPowerOfTwo(long)} (next power of two ≥ ${long})`, describe(d.paddedDim));
      }
      return Object.freeze({ ...d });
    case "sparse-sign":
      assertInteger(d.nnzPerColumn, `${argument}.nnzPerColumn`, 1, short);
      return Object.freeze({ ...d });
    case "row-sampling": {
      assertOneOf(d.side, `${argument}.side`, ["left", "right"] as const);
      assertOneOf(d.scheme, `${argument}.scheme`, ["uniform", "squared-norm", "leverage", "weights"] as const);
      assertInteger(d.samples, `${argument}.samples`, 1, MAX_DIM);
      const p = validateProbabilities(d.probabilities, `${argument}.probabilities`);
      const [expRows, expCols] = d.side === "left" ? [d.samples, p.length] : [p.length, d.samples];
      if (d.rows !== expRows || d.cols !== expCols) {
        throw new ShapeError(
          argument,
          `${expRows}×${expCols} (side ${d.side}, ${d.samples} samples of ${p.length})`,
          `${d.rows}×${d.cols}`,
        );
      }
      return Object.freeze({ ...d, probabilities: Object.freeze(Array.from(p)) });
    }
    default:
      return Object.freeze({ ...d });
  }
}
