/**
 * Sketching operators (RandBLAS semantics, docs/ARCHITECTURE.md): a `SketchDistribution` is the
 * immutable description (kind, rows × cols, scale, kind parameters); a `SketchOperator` is a
 * distribution plus a `SeedKey`, whose random state is drawn lazily on first use and cached.
 *
 * Scale convention (RandBLAS's "isometry scale"): the scale makes S an isometry in expectation
 * along its LONG axis. A wide S (rows ≤ cols), used from the left as S·A, has E[SᵀS] = I_cols — for
 * the dense kinds that means entries of variance 1/rows (N(0, 1/rows), ±1/√rows). A tall S
 * (rows > cols), used from the right as A·S, is the transpose of the wide sketch of shape
 * cols × rows, so E[S Sᵀ] = I_rows. Row samplers state their side explicitly (`side`).
 */
import type { Cost, Matrix, SeedKey } from "@randattn/core";

/** The operator families (the contract's five plus `"row-sampling"`). */
export type SketchKind = "gaussian" | "rademacher" | "srht" | "countsketch" | "sparse-sign" | "row-sampling";

/** Work and memory of an operation: core's one `Cost` record (flops, floats stored and optional counters). */
export type { Cost };

/** Fields every distribution has. */
interface DistributionBase {
  readonly kind: SketchKind;
  /** Rows of S. */
  readonly rows: number;
  /** Columns of S. */
  readonly cols: number;
  /** Global multiplier of S's entries (see the module comment for the defaults). */
  readonly scale: number;
}

/** Dense S with i.i.d. N(0, scale²) entries. */
export interface GaussianSketchDistribution extends DistributionBase {
  readonly kind: "gaussian";
}

/** Dense S with i.i.d. ±scale entries. */
export interface RademacherSketchDistribution extends DistributionBase {
  readonly kind: "rademacher";
}

/**
 * Subsampled randomized Hadamard transform. Wide form (d × n, d ≤ n): S = scale·P·H·D·E where
 * E zero-pads n → n' = 2^⌈log₂ n⌉, D = diag(±1) (n'), H the unnormalized n'×n' Walsh–Hadamard
 * matrix (entries ±1, H Hᵀ = n' I) and P picks d of the n' rows uniformly without replacement.
 * With scale = 1/√d this is √(n'/d)·P·(H/√n')·D·E, so E[SᵀS] = I_n.
 */
export interface SrhtSketchDistribution extends DistributionBase {
  readonly kind: "srht";
  /** n' = the long dimension rounded up to a power of two. */
  readonly paddedDim: number;
}

/** CountSketch (wide d × n): each column has one nonzero ±scale in a uniformly hashed row. */
export interface CountSketchDistribution extends DistributionBase {
  readonly kind: "countsketch";
}

/** Sparse sign embedding (wide d × n): each column has ζ nonzeros ±scale in ζ distinct uniformly chosen rows; scale = 1/√ζ. */
export interface SparseSignSketchDistribution extends DistributionBase {
  readonly kind: "sparse-sign";
  /** ζ, nonzeros per column of the wide form (1 ≤ ζ ≤ short dimension). */
  readonly nnzPerColumn: number;
}

/** How row-sampling probabilities were obtained. */
export type RowSamplingScheme = "uniform" | "squared-norm" | "leverage" | "weights";

/**
 * Row sampler with replacement: s i.i.d. indices i_t ~ p and S[t, i_t] = scale/√p_{i_t}
 * (`side: "left"`, S is s × n and S·A keeps s rescaled rows of A), or its transpose (`side: "right"`,
 * S is n × s and A·S keeps s rescaled columns of A). With scale = 1/√s the weights are the unbiased
 * 1/√(s p_j) and E[SᵀS] = I (left) / E[S Sᵀ] = I (right).
 */
export interface RowSamplingSketchDistribution extends DistributionBase {
  readonly kind: "row-sampling";
  readonly scheme: RowSamplingScheme;
  /** Which side the sampler is applied from (fixes its orientation: s can exceed n). */
  readonly side: "left" | "right";
  /** Number of samples s. */
  readonly samples: number;
  /** The sampling distribution p over the n population indices (frozen). */
  readonly probabilities: readonly number[];
}

/** Any sketch distribution (a discriminated union on `kind`). */
export type SketchDistribution =
  | GaussianSketchDistribution
  | RademacherSketchDistribution
  | SrhtSketchDistribution
  | CountSketchDistribution
  | SparseSignSketchDistribution
  | RowSamplingSketchDistribution;

/** A distribution plus a seed: the random operator itself. Its randomness is drawn on first use and cached. */
export interface SketchOperator {
  readonly distribution: SketchDistribution;
  readonly seed: SeedKey;
  readonly rows: number;
  readonly cols: number;
  /** S·A (A.rows = S.cols). */
  sketchLeft(a: Matrix): Matrix;
  /** A·S (A.cols = S.rows). */
  sketchRight(a: Matrix): Matrix;
  /** S as a dense rows × cols matrix. */
  toMatrix(): Matrix;
  /**
   * Cost of one application: `side = "left"` for S·A with A of size cols × otherDim, `"right"` for
   * A·S with A of size otherDim × rows. `floatsStored` counts the operator's own state (dense
   * entries, or signs/indices/weights for the structured kinds), not its input or output.
   */
  cost(otherDim: number, side: "left" | "right"): Cost;
}

/** A row-sampling operator also exposes its draws. */
export interface RowSamplingOperator extends SketchOperator {
  readonly distribution: RowSamplingSketchDistribution;
  /** The s sampled population indices (rows of A for side "left", columns for "right"). */
  readonly indices: Int32Array;
  /** The s rescaling weights scale/√p_{i_t} (= 1/√(s p_{i_t}) by default). */
  readonly weights: Float64Array;
}
