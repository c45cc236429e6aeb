/**
 * Randomized range finder (Halko, Martinsson & Tropp 2011, "Finding structure with randomness",
 * Alg. 4.1 and 4.4; PARLA / RandLAPACK's `RangeFinder` with a power-iteration "RowSketcher"):
 *
 *   Y = A Ω (Ω: n × ℓ test matrix, ℓ = k + p),
 *   repeat q times: Y ← A (Aᵀ Y) with a re-normalization (QR or LU) after each product,
 *   Q = qr(Y).
 *
 * The test matrix Ω is any sketching operator from operators/ (default Gaussian), applied as
 * `sketchRight(A)` = A·Ω, so a structured Ω (SRHT, CountSketch, sparse sign) is never materialized.
 * The big products run on core's kernels (`matmulInto`, `matmulTransAInto`); the tall samples are
 * orthonormalized by CholeskyQR2 (cholqr.ts) with the Householder kernel (householder.ts) as fallback.
 */
import { Matrix, type SeedKey, ShapeError, ValueError, derive } from "@randattn/core";
import {
  assertFinite,
  assertInteger,
  assertMatrix,
  assertNonEmpty,
  assertOneOf,
  describe,
  matmulInto,
  matmulTransAInto,
  tallNarrowMatmulInto,
  transposeInto,
} from "@randattn/core/internal";
import {
  type Cost,
  type SketchDistribution,
  type SketchOperator,
  countSketch,
  createSketch,
  gaussianSketch,
  rademacherSketch,
  sparseSignSketch,
  srhtSketch,
} from "../operators/index.js";
import { choleskyQr2, powerStepFactor } from "./cholqr.js";
import { householderQr, luLowerFactor, powerOfTwoScale } from "./householder.js";
import { maxAbs } from "./scan.js";
import { PackedTallOperand } from "./tallproducts.js";

/** Entries of magnitude outside [2^-400, 2^400] are rescaled before the low-rank algorithms run. */
const SAFE_EXPONENT = 400;

/**
 * A = factor · scaled with factor a power of two (so the rescaling is exact), and max|scaled| in
 * [1, 2) when max|A| is outside [2^-400, 2^400]; otherwise A itself (no copy) and factor 1.
 * Why: ‖A‖², Aᵀ(AY) and the power iterations square the scale of A — entries of 1e-300 underflow
 * (a zero norm reads as "already converged", a zero column as "no reflector needed") and entries of
 * 1e150 overflow. Q is invariant under the rescaling, B and the singular values scale by `factor`.
 * `mx` (default: computed) is max |A| when the caller has it already ({@link checkInputScale}).
 */
export function safeScaled(a: Matrix, mx: number = maxAbs(a.data)): { scaled: Matrix; factor: number } {
  if (mx === 0 || (mx >= 2 ** -SAFE_EXPONENT && mx <= 2 ** SAFE_EXPONENT)) return { scaled: a, factor: 1 };
  const s = powerOfTwoScale(mx);
  return {
    scaled: new Matrix(
      a.rows,
      a.cols,
      a.data.map((x) => x * s),
    ),
    factor: 1 / s,
  };
}

/** Sketch kinds usable as a range-finder test matrix by name. */
export type TestMatrixKind = "gaussian" | "rademacher" | "srht" | "countsketch" | "sparse-sign";

/** A test-matrix factory: the distribution of Ω for an A with `rows` = n columns and ℓ = `cols` samples. */
export type TestMatrixFactory = (rows: number, cols: number) => SketchDistribution;

/** How the power-iteration samples are re-normalized between products (HMT §4.5). */
export type Orthonormalization = "qr" | "lu" | "none";

export interface RangeFinderOptions {
  /** Target rank k (1 ≤ k ≤ min(m, n)). */
  rank: number;
  /** Oversampling p ≥ 0; ℓ = min(k + p, min(m, n)) samples are drawn. @default 10 */
  oversampling?: number;
  /** Power iterations q ≥ 0: Y = (A Aᵀ)^q A Ω sharpens a slowly decaying spectrum. @default 2 */
  powerIterations?: number;
  /**
   * Re-normalization between power steps: `"qr"` (an orthonormal basis: CholeskyQR2 when its
   * a-posteriori check accepts the sample, Householder otherwise — see `orthonormalBasis`), `"lu"` (partial-pivoting
   * L factor, cheaper, spans the same space), `"none"` (raw products; loses the small singular
   * directions to rounding when q or the spectrum's range is large). The final basis is always QR'd.
   * @default "qr"
   */
  orthonormalization?: Orthonormalization;
  /** The test matrix Ω: a sketch kind, or a factory of any SketchDistribution of shape n × ℓ. @default "gaussian" */
  testMatrix?: TestMatrixKind | TestMatrixFactory;
}

/** Fully resolved range-finder parameters. */
export interface ResolvedRangeFinder {
  rank: number;
  samples: number;
  powerIterations: number;
  orthonormalization: Orthonormalization;
  testMatrix: TestMatrixKind | TestMatrixFactory;
}

export interface RangeFinderResult {
  /** Q (m × ℓ) with orthonormal columns, range(Q) ≈ range(A). */
  Q: Matrix;
  /** Flops spent and peak floats held (Y/Q, Aᵀ Q, the test matrix's state). */
  cost: Cost;
}

/** All test-matrix kinds, for validation. */
export const TEST_KINDS: readonly TestMatrixKind[] = ["gaussian", "rademacher", "srht", "countsketch", "sparse-sign"];

/** Validates a matrix argument of the low-rank routines (non-empty, finite). */
export function checkInputMatrix(a: unknown, argument: string): asserts a is Matrix {
  assertMatrix(a, argument);
  assertNonEmpty(a, argument);
  assertFinite(a, argument);
}

/**
 * {@link checkInputMatrix} that also returns max |a| for {@link safeScaled}: one pass over the
 * entries instead of two (a NaN or ±∞ makes the maximum non-finite; only then is the finiteness
 * check run, to name the entry). Why: on the 16384 × 512 latent each pass is ≈ 1.5 % of an RSVD (issue 14).
 */
export function checkInputScale(a: unknown, argument: string): number {
  assertMatrix(a, argument);
  assertNonEmpty(a, argument);
  const mx = maxAbs(a.data);
  if (!Number.isFinite(mx)) assertFinite(a, argument);
  return mx;
}

/**
 * Validates the options for an m × n input.
 * @throws ValueError for a rank outside [1, min(m, n)], negative oversampling or power iterations, unknown modes.
 */
export function resolveRangeFinder(options: RangeFinderOptions, m: number, n: number): ResolvedRangeFinder {
  if (options === null || typeof options !== "object") throw new ValueError("options", "an options object with rank", describe(options));
  const maxRank = Math.min(m, n);
  assertInteger(options.rank, "options.rank", 1, maxRank);
  const oversampling = options.oversampling ?? 10;
  assertInteger(oversampling, "options.oversampling", 0);
  const powerIterations = options.powerIterations ?? 2;
  assertInteger(powerIterations, "options.powerIterations", 0);
  const orthonormalization = options.orthonormalization ?? "qr";
  assertOneOf(orthonormalization, "options.orthonormalization", ["qr", "lu", "none"] as const);
  const testMatrix = options.testMatrix ?? "gaussian";
  if (typeof testMatrix !== "function") assertOneOf(testMatrix, "options.testMatrix", TEST_KINDS);
  return { rank: options.rank, samples: Math.min(options.rank + oversampling, maxRank), powerIterations, orthonormalization, testMatrix };
}

/** The distribution of Ω (n × ℓ) for a test-matrix kind or factory. */
export function testMatrixDistribution(testMatrix: TestMatrixKind | TestMatrixFactory, n: number, samples: number): SketchDistribution {
  let dist: SketchDistribution;
  switch (testMatrix) {
    case "gaussian":
      dist = gaussianSketch(n, samples);
      break;
    case "rademacher":
      dist = rademacherSketch(n, samples);
      break;
    case "srht":
      dist = srhtSketch(n, samples);
      break;
    case "countsketch":
      dist = countSketch(n, samples);
      break;
    case "sparse-sign":
      dist = sparseSignSketch(n, samples);
      break;
    default:
      dist = testMatrix(n, samples);
  }
  if (dist === null || typeof dist !== "object" || dist.rows !== n || dist.cols !== samples) {
    const got = dist !== null && typeof dist === "object" ? `${dist.rows}×${dist.cols}` : describe(dist);
    throw new ShapeError("options.testMatrix", `a distribution of shape ${n}×${samples} (A.cols × samples)`, got);
  }
  return dist;
}

/** Flops of a Householder QR with explicit thin Q of an m × n matrix (R: 2mn² − ⅔n³; Q: the same). */
export function qrFlops(m: number, n: number): number {
  return 4 * m * n * n - (4 / 3) * n * n * n;
}

/**
 * Q (m × ℓ, orthonormal to O(u)) with range(Q) = range(Y) for a tall sample: CholeskyQR2 (cholqr.ts)
 * when its a-posteriori rule accepts Y — well conditioned, as the re-normalized samples of the
 * power iteration are — and the Householder QR otherwise (rank-deficient or ill-conditioned Y, small
 * or nearly square Y). Why (issue 14): the 16384 × 74 samples of the latent RSVD are orthonormalized
 * three times per call, and CholeskyQR2 does that on GEMMs only (docs/lowrank.md has the figures).
 */
export function orthonormalBasis(y: Matrix): Matrix {
  const q = choleskyQr2(y.data, y.rows, y.cols);
  return q === null ? householderQr(y).q : new Matrix(y.rows, y.cols, q);
}

/**
 * Re-normalizes a tall sample per the chosen mode, adding its flops to `cost` (HMT §4.5). The one
 * re-normalization of every driver here (range finder, blocked QB): `"none"` still rescales by an
 * exact power of two, so q power steps — each multiplying Y by ≈ σ₁² — cannot overflow.
 */
export function renormalize(y: Matrix, mode: Orthonormalization, cost: Cost): Matrix {
  if (mode === "qr") {
    cost.flops += qrFlops(y.rows, y.cols);
    return orthonormalBasis(y);
  }
  if (mode === "lu") {
    cost.flops += y.rows * y.cols * y.cols;
    return luLowerFactor(y);
  }
  // "none": no change of basis, but an exact power-of-two rescaling so that q power steps, which
  // multiply Y by ≈ σ₁², cannot overflow (or underflow) — the span, and hence Q, is unchanged.
  let mx = 0;
  for (let i = 0; i < y.data.length; i++) mx = Math.max(mx, Math.abs(y.data[i]));
  if (mx === 0) return y;
  const s = powerOfTwoScale(mx);
  if (s !== 1) for (let i = 0; i < y.data.length; i++) y.data[i] *= s;
  return y;
}

/** Largest certified κ₂(Y) for which a power step keeps the one-pass CholeskyQR basis (κ²u ≤ 1e-8). */
const ONE_PASS_KAPPA = 1e4;

/**
 * The tall sample's basis between power steps in `"qr"` mode: one CholeskyQR pass when
 * ‖R₁‖_F‖R₁⁻¹‖_F ≤ 1e4 (a rigorous bound on κ₂(Y), so ‖Q₁ᵀQ₁ − I‖ ≲ 1e-8 up to dimension
 * constants: κ(Q₁) ≈ 1), else {@link orthonormalBasis}. Why enough: between power steps HMT §4.5
 * asks only for a well-conditioned basis of range(Y) (the `"lu"` mode's L is far less orthogonal),
 * and CholeskyQR's backward error Y + ΔY = Q₁R₁, ‖ΔY‖ = O(u‖Y‖), is Householder's (Yamamoto et al.
 * 2015), so the span is as accurate; the final basis is always orthonormal to O(u). Saves one Gram
 * and one product per step (issue 14).
 *
 * In the one-pass case Q₁ = Y·R₁⁻¹ is not even formed: `{ y, rInv }` is returned and the power step
 * takes Mᵀ·Q₁ = (Mᵀ·Y)·R₁⁻¹ — the same matrix in exact arithmetic, an ℓ × ℓ product on the n-sized
 * side instead of the m-sized one (issue 14: 2mℓ² flops per step). The rounding of Mᵀ·Y is then
 * relative to ‖Y‖ rather than ‖Q₁‖ = 1, which R₁⁻¹ amplifies by at most κ(Y) ≤ 1e4 (certified): the
 * span of the next sample is accurate to ≈ 1e4·u, far inside what the power steps need (the
 * one-pass basis itself is orthonormal only to ≈ 1e-8).
 */
function powerStepBasis(y: Matrix, cost: Cost): { y: Matrix; rInv?: Float64Array } {
  cost.flops += qrFlops(y.rows, y.cols);
  const f = powerStepFactor(y.data, y.rows, y.cols, ONE_PASS_KAPPA);
  if (f === null) return { y: householderQr(y).q };
  if (f.rInv !== undefined) return { y, rInv: f.rInv };
  return { y: new Matrix(y.rows, y.cols, f.q) };
}

/**
 * A linear operator for the power iteration: the products M·X and Mᵀ·Y of an m × n matrix M that
 * need not be formed (the blocked QB iterates on the residual A − QB through A and Q, B).
 */
export interface PowerOperator {
  /** M X (m × c) for X (n × c). */
  times(x: Matrix): Matrix;
  /** Mᵀ Y (n × c) for Y (m × c). */
  transposeTimes(y: Matrix): Matrix;
  /** Flops of one power step (one Mᵀ· and one M· product) on c columns. */
  stepFlops(c: number): number;
}

/**
 * The dense operator of A (core's kernels, same products as before the refactor, so bit-identical).
 * With `packed` (A's panels kept for the call, tallproducts.ts) Aᵀ·Y skips repacking A.
 */
export function denseOperator(a: Matrix, packed: PackedTallOperand | null = null): PowerOperator {
  const m = a.rows;
  const n = a.cols;
  return {
    times(x) {
      const out = new Matrix(m, x.cols);
      tallNarrowMatmulInto(a.data, x.data, out.data, m, n, x.cols);
      return out;
    },
    transposeTimes(y) {
      const out = new Matrix(n, y.cols);
      if (packed !== null && m * n * y.cols >= 1 << 20) transposeInto(packed.transposedProduct(y.data, y.cols), out.data, y.cols, n);
      else transposeTimesInto(a.data, y.data, out.data, m, n, y.cols);
      return out;
    },
    stepFlops: (c) => 4 * m * n * c,
  };
}

/**
 * out (n × c) = Aᵀ Y for A (m × n) and Y (m × c), row-major, as the transpose of Yᵀ A
 * ({@link transposedProduct}). Same flops, same summation order as the plain Aᵀ Y kernel.
 */
export function transposeTimesInto(A: Float64Array, Y: Float64Array, out: Float64Array, m: number, n: number, c: number): void {
  if (m * n * c < 1 << 20) {
    matmulTransAInto(A, Y, out, m, n, c, false);
    return;
  }
  transposeInto(transposedProduct(A, Y, m, n, c), out, c, n);
}

/**
 * Yᵀ A (c × n) for A (m × n) and Y (m × c), row-major, on core's transposed-A GEMM with Y as the
 * transposed operand: the kernel's strided pack then reads the narrow Y (m·c entries) and the wide A
 * is packed along its rows, once. The earlier Aᵀ Y packed A with a stride of n entries (60 % of the
 * product for a 16384 × 512 latent), and the 256-row block transposes that replaced it (issue 14)
 * still cost a pass over A per product; Yᵀ A needs neither (measured in docs/lowrank.md). Bit for
 * bit the same sums as those (each entry sums over the m rows in the same KC-blocked order).
 */
export function transposedProduct(A: Float64Array, Y: Float64Array, m: number, n: number, c: number): Float64Array {
  const out = new Float64Array(c * n);
  matmulTransAInto(Y, A, out, m, c, n, false);
  return out;
}

/**
 * q power (subspace) iterations Y ← M (Mᵀ Y), re-normalized before each product (HMT Alg. 4.4), so
 * the small singular directions survive rounding and the scale of Y stays bounded. The shared piece
 * of `rangeFinder` and `blockedQb` (PARLA composes its drivers from such pieces).
 */
export function powerIterate(op: PowerOperator, y: Matrix, iterations: number, mode: Orthonormalization, cost: Cost): Matrix {
  for (let it = 0; it < iterations; it++) {
    let rInv: Float64Array | undefined;
    if (mode === "qr") ({ y, rInv } = powerStepBasis(y, cost));
    else y = renormalize(y, mode, cost);
    let z = op.transposeTimes(y);
    if (rInv !== undefined) {
      // Mᵀ·(Y R₁⁻¹) as (Mᵀ·Y)·R₁⁻¹ (see powerStepBasis)
      const zr = new Matrix(z.rows, z.cols);
      matmulInto(z.data, rInv, zr.data, z.rows, z.cols, z.cols, false);
      z = zr;
    }
    z = renormalize(z, mode, cost);
    y = op.times(z);
    cost.flops += op.stepFlops(y.cols);
  }
  return y;
}

/**
 * A range-finder driver (PARLA's `RangeFinder` role): Q (m × ℓ, orthonormal) with range(Q) ≈ range(A),
 * from validated, resolved options. `qb` and `randomizedSvd` take one as `options.rangeFinder`.
 */
export type RangeFinderDriver = (a: Matrix, options: ResolvedRangeFinder, seed: SeedKey) => RangeFinderResult;

/**
 * Randomized range finder with power iterations (module doc). Returns Q (m × ℓ) orthonormal to
 * rounding; exactly low-rank or rank-deficient inputs are fine (the QR never divides by a vanishing norm).
 * @param a A (m × n), finite.
 * @param options rank, oversampling, power iterations, re-normalization, test matrix.
 * @param seed the test matrix is drawn from `derive(seed, "rangeFinder", "testMatrix")`.
 * @throws ShapeError / NonFiniteError for a bad `a`; ValueError for bad options (rank > min(m, n), …).
 * @example
 * ```ts
 * import { randomMatrix } from "@randattn/core";
 * import { rangeFinder } from "@randattn/sketch";
 *
 * const a = randomMatrix(200, 50, {}, [11]);
 * const { Q } = rangeFinder(a, { rank: 10 }, [11, "range"]); // orthonormal basis of ≈ range(A)
 * console.log(Q.shape); // "200×20" (rank + oversampling 10)
 * ```
 */
export function rangeFinder(a: Matrix, options: RangeFinderOptions, seed: SeedKey): RangeFinderResult {
  const mx = checkInputScale(a, "a");
  const r = resolveRangeFinder(options, a.rows, a.cols);
  return rangeFinderResolved(safeScaled(a, mx).scaled, r, derive(seed, "rangeFinder"));
}

/**
 * Y = A·Ω. A dense tall Ω (Gaussian, Rademacher) is formed (n × ℓ, small) and multiplied on core's
 * tall-narrow kernel directly — the product and bits of `omega.sketchRight(a)`, without its second
 * finiteness pass over A, which the drivers have checked already (issue 14); other operators apply themselves.
 */
function sampleRange(a: Matrix, omega: SketchOperator, dist: SketchDistribution): Matrix {
  const l = dist.cols;
  if ((dist.kind === "gaussian" || dist.kind === "rademacher") && dist.rows > l && l <= 128 && a.rows >= 4 * l) {
    const y = new Matrix(a.rows, l);
    tallNarrowMatmulInto(a.data, omega.toMatrix().data, y.data, a.rows, a.cols, l);
    return y;
  }
  return omega.sketchRight(a);
}

/** The default range-finder driver: the range finder on validated arguments (shared with qb / randomizedSvd). */
export function rangeFinderResolved(a: Matrix, r: ResolvedRangeFinder, seed: SeedKey): RangeFinderResult {
  const packed = packForPowerSteps(a, r);
  try {
    return rangeFinderPacked(a, r, seed, packed);
  } finally {
    packed?.release();
  }
}

/**
 * A's panels kept for the call when the power steps multiply by Aᵀ at least once (q ≥ 1: each
 * Aᵀ·Y after the first, and QB's B = QᵀA, then skip repacking A — see `PackedTallOperand`), else null.
 */
export function packForPowerSteps(a: Matrix, r: ResolvedRangeFinder): PackedTallOperand | null {
  return r.powerIterations >= 1 ? PackedTallOperand.create(a.data, a.rows, a.cols, r.samples) : null;
}

/** {@link rangeFinderResolved} with A's panels (or null) supplied by the caller, who releases them. */
export function rangeFinderPacked(a: Matrix, r: ResolvedRangeFinder, seed: SeedKey, packed: PackedTallOperand | null): RangeFinderResult {
  const m = a.rows;
  const n = a.cols;
  const l = r.samples;
  const dist = testMatrixDistribution(r.testMatrix, n, l);
  const omega = createSketch(dist, derive(seed, "testMatrix"));
  const sketchCost = omega.cost(m, "right");
  const cost: Cost = { flops: sketchCost.flops, floatsStored: sketchCost.floatsStored + m * l + n * l };
  const y = powerIterate(denseOperator(a, packed), sampleRange(a, omega, dist), r.powerIterations, r.orthonormalization, cost);
  cost.flops += qrFlops(m, l);
  return { Q: orthonormalBasis(y), cost };
}
