/**
 * Random feature maps φ with E[φ(x)ᵀφ(y)] = κ(q, k) (Rahimi & Recht 2007; Choromanski et al. 2021,
 * "Rethinking Attention with Performers", §2.2–2.3 and Lemma 1). For the softmax kernel
 * κ(q, k) = exp(scale·⟨q, k⟩) write x = √scale·q, y = √scale·k (x = q/d^¼ for the default
 * scale 1/√d), so κ = SM(x, y) = exp(xᵀy), and with m frequencies ω₁…ω_m ~ N(0, I_d):
 *
 * - `"trig"`:       φ(x) = e^{‖x‖²/2}/√m · [sin(ωᵢᵀx) …, cos(ωᵢᵀx) …]         (2m features)
 * - `"positive"`:   φ(x) = e^{−‖x‖²/2}/√m · [exp(ωᵢᵀx) …]                       (m features, FAVOR+)
 * - `"hyperbolic"`: φ(x) = e^{−‖x‖²/2}/√(2m) · [exp(ωᵢᵀx) …, exp(−ωᵢᵀx) …]      (2m features)
 *
 * The number of features is the number of frequencies m for "positive" and 2m for the other two —
 * the convention of the Performer MSE formulas (Lemma 2), which are stated per frequency.
 *
 * Other kernels (documented list, docs/features.md):
 * - Gaussian RBF exp(−‖q − k‖²/(2σ²)): x = q/σ, κ = e^{−‖x‖²/2} e^{−‖y‖²/2} exp(xᵀy), so every softmax
 *   map works with the extra factor e^{−‖x‖²/2} (trig: prefactor 1 — the classic RFF of Rahimi–Recht).
 * - Laplacian exp(−‖q − k‖₁/σ): x = q/σ, trig features with standard Cauchy frequencies (its
 *   spectral density), prefactor 1. No positive map exists for it here.
 *
 * Stabilization: every map is evaluated as φ(x) = f · e^{s}, with f = exp(… − s) and `s` the shift
 * (a per-row or a global maximum of the exponents), returned as `logScale`; attention divides
 * numerator and normalizer by the same e^{s}, so the shift cancels exactly instead of adding an ε.
 */
import { Matrix, NumericalError, ShapeError, ValueError } from "@randattn/core";
import {
  assertFinite,
  assertMatrix,
  assertNonEmpty,
  assertNumber,
  assertOneOf,
  type Kernels,
  matmulTransBInto,
  assertOptions,
  RESIDENT_BASE_BYTES,
  residentExp,
  residentGemmRows,
  residentKernels,
  simdExp,
} from "@randattn/core/internal";
import type { Cost } from "../operators/types.js";

/** The random-feature family (see module doc for the formulas). */
export type FeatureKind = "trig" | "positive" | "hyperbolic";

/** Kernels with a random-feature map here. */
export type FeatureKernel =
  /** κ(q, k) = exp(scale·⟨q, k⟩); scale defaults to 1/√d. */
  | { kind: "softmax"; scale?: number }
  /** κ(q, k) = exp(−‖q − k‖²/(2 bandwidth²)). */
  | { kind: "gaussian"; bandwidth: number }
  /** κ(q, k) = exp(−‖q − k‖₁/bandwidth); trig features with Cauchy frequencies only. */
  | { kind: "laplacian"; bandwidth: number };

/**
 * Where the stabilizing shift is taken: `"none"` (raw features, may overflow → NumericalError),
 * `"row"` (each row's own maximum exponent — for queries), `"global"` (one maximum over all rows —
 * for keys, so the shift factors out of sums over keys).
 */
export type FeatureShift = "none" | "row" | "global";

export interface RandomFeaturesOptions {
  /** Feature family. @default "positive" */
  features?: FeatureKind;
  /** Kernel approximated. @default { kind: "softmax", scale: 1/√d } */
  kernel?: FeatureKernel;
  /** Stabilizing shift (see {@link FeatureShift}). @default "none" */
  shift?: FeatureShift;
}

export interface RandomFeaturesResult {
  /** f (N × F); the true features are φ(xᵢ) = f[i, :]·exp(logScale[i]). */
  features: Matrix;
  /** Per-row log scale (all equal for the global shift, all 0 for no shift). */
  logScale: Float64Array;
  /**
   * F, the number of features (columns of `features`): m for `"positive"`, 2m for `"trig"` and
   * `"hyperbolic"` (a sin/cos or e^{±ωᵀx} pair per frequency) — the quantity cost comparisons use.
   */
  featureCount: number;
  /** Flops of the map (X Ωᵀ, the norms, one exp/sin/cos and one multiply per feature) and floats held. */
  cost: Cost;
}

/** Number of features F produced from m frequencies: m for "positive", 2m for "trig" and "hyperbolic". */
export function featureDimension(features: FeatureKind, numFrequencies: number): number {
  assertOneOf(features, "features", ["trig", "positive", "hyperbolic"] as const);
  return features === "positive" ? numFrequencies : 2 * numFrequencies;
}

/** Validated kernel with its input scaling: x = inputScale · q. */
export interface ResolvedKernel {
  kernel: FeatureKernel;
  /** x = inputScale · q. */
  inputScale: number;
  /** log of the prefactor h(x) = c‖x‖² for the chosen features. */
  normCoefficient: number;
  /** Frequencies' coordinate distribution. */
  distribution: "gaussian" | "cauchy";
}

/**
 * Resolves the kernel for vectors of dimension `dim` and the feature family, validating both.
 * @throws ValueError for an unknown kernel kind, a non-positive scale or bandwidth, or a family the kernel lacks.
 */
export function resolveKernel(
  kernel: FeatureKernel | undefined,
  features: FeatureKind,
  dim: number,
  argument = "options.kernel",
): ResolvedKernel {
  assertOneOf(features, "options.features", ["trig", "positive", "hyperbolic"] as const);
  const k: FeatureKernel = kernel ?? { kind: "softmax" };
  if (k === null || typeof k !== "object") throw new ValueError(argument, 'a kernel object such as { kind: "softmax" }', String(k));
  assertOneOf(k.kind, `${argument}.kind`, ["softmax", "gaussian", "laplacian"] as const);
  if (k.kind === "softmax") {
    const scale = k.scale ?? 1 / Math.sqrt(dim);
    assertNumber(scale, `${argument}.scale`, { positive: true });
    // Softmax: trig carries e^{+‖x‖²/2}, positive and hyperbolic e^{−‖x‖²/2} (Performer Lemma 1).
    return { kernel: k, inputScale: Math.sqrt(scale), normCoefficient: features === "trig" ? 0.5 : -0.5, distribution: "gaussian" };
  }
  assertNumber(k.bandwidth, `${argument}.bandwidth`, { positive: true });
  if (k.kind === "gaussian") {
    // RBF = e^{−‖x‖²/2} e^{−‖y‖²/2} SM(x, y): the softmax prefactor times e^{−‖x‖²/2}.
    return { kernel: k, inputScale: 1 / k.bandwidth, normCoefficient: features === "trig" ? 0 : -1, distribution: "gaussian" };
  }
  if (features !== "trig") {
    throw new ValueError(
      "options.features",
      '"trig" for the laplacian kernel (its spectral density is Cauchy; no positive map)',
      `"${features}"`,
    );
  }
  return { kernel: k, inputScale: 1 / k.bandwidth, normCoefficient: 0, distribution: "cauchy" };
}

/**
 * Evaluates the random feature map on the rows of `x` with the frequencies `omega` (m × d, from
 * {@link drawProjection}). Returns f and the log scale such that φ(xᵢ) = f[i, :]·exp(logScale[i]);
 * with shift `"none"` the features are returned as is (logScale = 0).
 *
 * Cost: one N × d × m product (core's `matmulTransBInto`) plus N·F exponentials / sines.
 * @throws ShapeError when `x` or `omega` is not a non-empty Matrix or omega.cols ≠ x.cols.
 * @throws NonFiniteError for NaN/±Inf inputs; NumericalError when unshifted features overflow.
 */
export function randomFeatures(x: Matrix, omega: Matrix, options: RandomFeaturesOptions = {}): RandomFeaturesResult {
  assertOptions(options, "options");
  assertMatrix(x, "x");
  assertNonEmpty(x, "x");
  assertFinite(x, "x");
  assertMatrix(omega, "omega");
  assertNonEmpty(omega, "omega");
  if (omega.cols !== x.cols) {
    throw new ShapeError("omega", `*×${x.cols} (cols = x.cols)`, omega.shape);
  }
  assertFinite(omega, "omega");
  const features = options.features ?? "positive";
  const shift = options.shift ?? "none";
  assertOneOf(shift, "options.shift", ["none", "row", "global"] as const);
  const resolved = resolveKernel(options.kernel, features, x.cols);
  return evaluateFeatures(x, omega, features, resolved, shift);
}

/** Unvalidated core of {@link randomFeatures}: shared with the attention paths. */
export function evaluateFeatures(
  x: Matrix,
  omega: Matrix,
  features: FeatureKind,
  resolved: ResolvedKernel,
  shift: FeatureShift,
): RandomFeaturesResult {
  const n = x.rows;
  const d = x.cols;
  const m = omega.rows;
  const s = resolved.inputScale;
  const width = features === "positive" ? m : 2 * m;
  const out = new Matrix(n, width);
  const f = out.data;
  const logScale = streamFeatures(x, omega, features, resolved, shift, (block, i0) => f.set(block, i0 * width));
  if (shift === "none") {
    // Unshifted features can overflow (trig: e^{+‖x‖²/2}) or, for the exponential families whose
    // true features are never 0, underflow to an all-zero row; both are reported, not returned.
    for (let i = 0; i < f.length; i++) {
      if (!Number.isFinite(f[i])) {
        throw new NumericalError(
          "x",
          'features that fit in a double (use shift "row" or "global")',
          `${f[i]} at feature [${Math.floor(i / width)}, ${i % width}]`,
        );
      }
    }
    if (features !== "trig") {
      for (let i = 0; i < n; i++) {
        let any = false;
        for (let l = 0; l < width && !any; l++) any = f[i * width + l] !== 0;
        if (!any)
          throw new NumericalError("x", 'features that fit in a double (use shift "row" or "global")', `row ${i} underflowed to all zeros`);
      }
    }
  }
  const cost: Cost = { flops: 2 * n * d * m + 2 * n * d + (s !== 1 ? n * m : 0) + 2 * n * width, floatsStored: n * m + n * width + 2 * n };
  return { features: out, logScale, featureCount: width, cost };
}

/** The constant factor of every feature: 1/√m, or 1/√(2m) for hyperbolic features (module doc). */
export function featureNorm(features: FeatureKind, m: number): number {
  return features === "hyperbolic" ? 1 / Math.sqrt(2 * m) : 1 / Math.sqrt(m);
}

/** Largest projection (in floats) kept between calls by {@link projectionWorkspace}: 8 Mi floats = 64 MiB. */
const WORKSPACE_MAX = 1 << 23;
let workspace: Float64Array | undefined;

/**
 * A scratch array of at least `length` floats for the whole-array projection of the "global" shift
 * (overwritten, never read before written), reused from call to call up to WORKSPACE_MAX floats —
 * like core's WebAssembly memory, it grows and is never shrunk. Why: a fresh 32 MiB array costs
 * ≈ 30 ms of first-touch page faults here (N = 16,384, m = 256), ≈ 7 % of the whole attention call.
 * Larger requests get a fresh array each time. Single-threaded use only (each worker has its own).
 */
function projectionWorkspace(length: number): Float64Array {
  if (length > WORKSPACE_MAX) return new Float64Array(length);
  if (workspace === undefined || workspace.length < length) workspace = new Float64Array(length);
  return workspace.subarray(0, length);
}

/** Rows per block of {@link streamFeatures}: a multiple of the GEMM's depth slice (256), see attention.ts. */
export const FEATURE_BLOCK_ROWS = 256;

/**
 * The features of {@link evaluateFeatures}, handed to `sink` block by block (FEATURE_BLOCK_ROWS rows,
 * rows i0…i1−1 as a row-major (i1 − i0) × F array that is reused for the next block — copy what
 * must outlive the call), so that a consumer never holds all N × F of them: at N = 16,384, F = 256
 * the first-touch page faults of a fresh 32 MiB array cost as much as computing it (issue 14).
 * With the "row" and "none" shifts the projection X Ωᵀ is computed block by block too; the "global"
 * shift needs every row's maximum first, so it is computed whole. Returns the per-row log scale.
 * The same bits as one pass over all rows (every feature depends on its row and the shift alone).
 * With `applyNorm` false the blocks lack the constant factor {@link featureNorm}, for a consumer
 * that folds it into a pass or a product of its own.
 */
export function streamFeatures(
  x: Matrix,
  omega: Matrix,
  features: FeatureKind,
  resolved: ResolvedKernel,
  shift: FeatureShift,
  sink: (block: Float64Array, i0: number, i1: number) => void,
  applyNorm = true,
): Float64Array {
  const n = x.rows;
  const d = x.cols;
  const m = omega.rows;
  const s = resolved.inputScale;
  const c = resolved.normCoefficient;
  const X = x.data;
  const hyperbolic = features === "hyperbolic";
  const trig = features === "trig";
  const whole = shift === "global";
  const blockRows = Math.min(n, FEATURE_BLOCK_ROWS);
  // u = X Ωᵀ (N × m, or one block of rows): the scaled projection s·u is formed on the fly below
  // (multiplying u in place first cost one more pass over it; the products are the same bits).
  const u = whole ? projectionWorkspace(n * m) : new Float64Array(blockRows * m);
  if (whole) matmulTransBInto(X, omega.data, u, n, d, m);
  // rowMax[i]: the exponent of the largest feature of row i, base + mx, with base = c‖x‖² (scaled
  // rows) and mx the largest ωᵀx term (|ωᵀx| for hyperbolic; 0 for trig), kept apart in rowTerm
  // (see the exponent below).
  const rowMax = new Float64Array(n);
  const rowTerm = new Float64Array(n);
  const rowStats = (i: number, uOffset: number) => {
    const mx = trig ? 0 : rowExtreme(u, (i - uOffset) * m, m, s, hyperbolic);
    rowTerm[i] = mx;
    rowMax[i] = c * (sumOfSquares(X, i * d, d) * s * s) + mx;
  };
  const logScale = new Float64Array(n);
  if (whole) {
    for (let i = 0; i < n; i++) rowStats(i, 0);
    let g = Number.NEGATIVE_INFINITY;
    for (let i = 0; i < n; i++) if (rowMax[i] > g) g = rowMax[i];
    logScale.fill(g);
  }
  const width = features === "positive" ? m : 2 * m;
  const f = new Float64Array(blockRows * width);
  const norm = featureNorm(features, m);
  for (let i0 = 0; i0 < n; i0 += blockRows) {
    const i1 = Math.min(n, i0 + blockRows);
    const uOffset = whole ? 0 : i0;
    if (!whole) matmulTransBInto(X.subarray(i0 * d, i1 * d), omega.data, u, i1 - i0, d, m);
    // The block's exponents are written (each row's statistics taken just before, while it is in
    // L1), exponentiated by core's SIMD exp (≤ 1 ulp from Math.exp, ≈ 3× faster — issue 14) and
    // scaled while the block is in cache.
    for (let i = i0; i < i1; i++) {
      if (!whole) {
        rowStats(i, i0);
        if (shift === "row") logScale[i] = rowMax[i];
      }
      // exponent of feature l = (s·u_l − mx) + (rowMax − logScale): both parts ≤ 0 under a "row" or
      // "global" shift, so exp never overflows. Written as s·u_l + (c‖x‖² − logScale) it cancels
      // catastrophically for large norms (‖x‖² ≈ 1e200 swallows mx, leaving exp(u_l) = ∞ — issue #6).
      const mx = rowTerm[i];
      const e = rowMax[i] - logScale[i];
      const o = (i - uOffset) * m;
      const w = (i - i0) * width;
      if (features === "positive") positiveExponents(f, w, u, o, m, s, mx, e);
      else if (hyperbolic) hyperbolicExponents(f, w, u, o, m, s, mx, e);
      else trigFeatures(f, w, u, o, m, s, applyNorm ? norm * Math.exp(e) : Math.exp(e)); // trig: mx = 0, e = c‖x‖² − logScale
    }
    const block = f.subarray(0, (i1 - i0) * width);
    if (!trig) {
      simdExp(block, block);
      if (applyNorm) scaleInPlace(block, norm);
    }
    sink(block, i0, i1);
  }
  return logScale;
}

// The hot loops live in small functions of typed arrays and numbers: V8 optimizes them at once and
// keeps them optimized, where the same loops inline in a long driver ran for whole calls in
// baseline code while on-stack replacement recompiled it (measured 2–3× slower per element).

/** Σ_j x_j² over x[o…o+d−1]. */
function sumOfSquares(x: Float64Array, o: number, d: number): number {
  let t = 0;
  for (let j = 0; j < d; j++) t += x[o + j] * x[o + j];
  return t;
}

/** Positive-feature exponents of one row: f[w + l] = s·u[o + l] − mx + e. */
function positiveExponents(f: Float64Array, w: number, u: Float64Array, o: number, m: number, s: number, mx: number, e: number): void {
  if (s !== 1) for (let l = 0; l < m; l++) f[w + l] = u[o + l] * s - mx + e;
  else for (let l = 0; l < m; l++) f[w + l] = u[o + l] - mx + e;
}

/** Hyperbolic-feature exponents of one row: ±s·u[o + l] − mx + e in the two halves. */
function hyperbolicExponents(f: Float64Array, w: number, u: Float64Array, o: number, m: number, s: number, mx: number, e: number): void {
  for (let l = 0; l < m; l++) {
    const v = s !== 1 ? u[o + l] * s : u[o + l];
    f[w + l] = v - mx + e;
    f[w + m + l] = -v - mx + e;
  }
}

/** Trig features of one row: h·sin(s·u), h·cos(s·u). */
function trigFeatures(f: Float64Array, w: number, u: Float64Array, o: number, m: number, s: number, h: number): void {
  for (let l = 0; l < m; l++) {
    const v = s !== 1 ? u[o + l] * s : u[o + l];
    f[w + l] = h * Math.sin(v);
    f[w + m + l] = h * Math.cos(v);
  }
}

/** a *= c. */
function scaleInPlace(a: Float64Array, c: number): void {
  for (let q = 0; q < a.length; q++) a[q] *= c;
}

/** max_l s·u_l (or max_l |s·u_l| for hyperbolic features) over one row of u. */
function rowExtreme(u: Float64Array, o: number, m: number, s: number, hyperbolic: boolean): number {
  let mx = Number.NEGATIVE_INFINITY;
  if (hyperbolic) {
    for (let l = 0; l < m; l++) {
      const v = Math.abs(s !== 1 ? u[o + l] * s : u[o + l]);
      if (v > mx) mx = v;
    }
  } else if (s !== 1) {
    for (let l = 0; l < m; l++) {
      const v = u[o + l] * s;
      if (v > mx) mx = v;
    }
  } else {
    for (let l = 0; l < m; l++) if (u[o + l] > mx) mx = u[o + l];
  }
  return mx;
}

/** Where {@link streamFeaturesResident} leaves a block: row-major rows, or 4-column panels (core's packed layout). */
export type ResidentLayout = "rows" | "panels";

/** Rows of X per row-major-A projection call: its A block (≤ 128 × d) stays in L2 across the panels of Ωᵀ. */
const PROJECTION_ROWS = 128;

/**
 * Floats of resident work space {@link streamFeaturesResident} needs for n rows of dimension d and
 * m frequencies: Ωᵀ in panels, X (all rows for the global shift, else one block) and the projection.
 */
export function residentFeatureWork(n: number, d: number, m: number, shift: "row" | "global"): number {
  const rows = shift === "global" ? n : Math.min(n, FEATURE_BLOCK_ROWS);
  const even = (x: number) => x + (x & 1);
  return (
    even(Math.ceil(m / 4) * 4 * d) +
    even(rows * d) +
    even(rows * m) +
    2 * even(Math.max(FEATURE_BLOCK_ROWS, PROJECTION_ROWS)) +
    even(8 * m) +
    2 * even(rows)
  );
}

/**
 * {@link streamFeatures} without the constant factor, done inside core's WebAssembly-resident
 * scratch (issue 14): X is copied in once, the projection X Ωᵀ formed there by the row-major-A
 * kernel (no packing of X, no C buffer to zero or copy out), and each block of features written
 * from it straight into `k.f64` at element offset `dst` in `layout` and exponentiated in place — no
 * transpose or packing pass before the next product: `"rows"` is the A operand of the row-major-A
 * kernel (φ(Q) · S); `"panels"` (panel ⌊l/4⌋ holds features 4⌊l/4⌋… of every row of the block,
 * zero-padded to whole panels) the packed operand of φ(K)ᵀ V. `work` (element offset) holds
 * {@link residentFeatureWork} floats. `sink(i0, i1)` runs after each block. The memory may grow
 * here: read `k.f64` afresh afterwards. Same features, bit for bit, as `streamFeatures(…, false)`
 * (same products and sums, same exponents, same exp). The finiteness of x is checked in the pass
 * that sums its squares (x − x is 0 exactly when x is finite): returns `finite: false` (and stops,
 * features undefined) when a row is not. `logScale`: a `"row"` shift writes each row's log-scale
 * into `into` (length ≥ n; a fresh array when absent) and returns it; a `"global"` shift returns one
 * entry, the shift every row shares. The per-row statistics live in the resident work space, not in
 * fresh arrays: each fresh array costs its first-touch page faults per call (issue 14).
 */
export function streamFeaturesResident(
  x: Matrix,
  omega: Matrix,
  features: FeatureKind,
  resolved: ResolvedKernel,
  shift: "row" | "global",
  k: Kernels,
  dst: number,
  layout: ResidentLayout,
  work: number,
  sink: (i0: number, i1: number) => void,
  into?: Float64Array,
): { logScale: Float64Array; finite: boolean } {
  const n = x.rows;
  const d = x.cols;
  const m = omega.rows;
  const s = resolved.inputScale;
  const c = resolved.normCoefficient;
  const X = x.data;
  const hyperbolic = features === "hyperbolic";
  const trig = features === "trig";
  const whole = shift === "global";
  const blockRows = Math.min(n, FEATURE_BLOCK_ROWS);
  const even = (v: number) => v + (v & 1);
  const op = work; // Ωᵀ (d × m) in 4-column panels of depth d
  const xp = op + even(Math.ceil(m / 4) * 4 * d); // rows of X
  const up = xp + even((whole ? n : blockRows) * d); // U = X Ωᵀ
  const mxp = up + even((whole ? n : blockRows) * m); // a block's row maxima of U, then its shifts
  const ep = mxp + even(Math.max(blockRows, PROJECTION_ROWS)); // a block's exponent offsets
  const tp = ep + even(Math.max(blockRows, PROJECTION_ROWS)); // 8 rows of features (rows_affine_exp_panels_f64's scratch)
  // rowMax and rowTerm (see streamFeatures) of every row (global shift) or of the block's rows.
  const held = whole ? n : blockRows;
  const rmp = tp + even(8 * m);
  const rtp = rmp + even(held);
  const sqp = rtp + even(held); // ‖x‖² of every row (global shift) or of the block's rows
  // Grows the memory now if needed (contents kept, k.f64 refreshed): nothing below grows it.
  residentKernels(sqp + even(held) - RESIDENT_BASE_BYTES / 8);
  packOmegaPanels(omega.data, m, d, k.f64, op);
  // U rows r0…r1−1 (at their place relative to row `base` of the copied X and of U).
  const project = (r0: number, r1: number, base: number) => {
    for (let a = r0; a < r1; a += PROJECTION_ROWS) {
      const b = Math.min(r1, a + PROJECTION_ROWS);
      residentGemmRows(k, xp + (a - base) * d, d, op, d, up + (a - base) * m, m, b - a, m, d);
    }
  };
  const logScale = whole ? new Float64Array(1) : (into ?? new Float64Array(n));
  if (logScale.length < (whole ? 1 : n)) throw new ShapeError("into", `at least ${n} entries (one per row)`, `${logScale.length}`);
  // Row statistics (see streamFeatures) of the row at slot t of rowMax/rowTerm, from its ‖x‖² at slot
  // t (`rows_sumsq_f64` on the rows copied in, which also found them finite). (mxRaw: max_l u_l, or
  // max |u_l|, from rows_max_f64; s·max = max of s·u as s > 0 and rounding is monotone.)
  const rowStats = (t: number, mxRaw: number): void => {
    const f = k.f64;
    const sq = f[sqp + t];
    const mx = trig ? 0 : mxRaw * s;
    f[rtp + t] = mx;
    f[rmp + t] = c * (sq * s * s) + mx;
  };
  if (whole) {
    k.f64.set(X.subarray(0, n * d), xp);
    // Every row's ‖x‖² (Σ x² in order, the loop's sum) and whether all of X is finite, in one pass.
    if (!k.rows_sumsq_f64(xp * 8, d, n, d, sqp * 8)) return { logScale, finite: false };
    // Each projected block's row statistics while it is still in cache.
    for (let a = 0; a < n; a += PROJECTION_ROWS) {
      const b = Math.min(n, a + PROJECTION_ROWS);
      project(a, b, 0);
      if (!trig) k.rows_max_f64((up + a * m) * 8, m, b - a, m, mxp * 8, hyperbolic ? 1 : 0);
      for (let i = a; i < b; i++) rowStats(i, k.f64[mxp + i - a]);
    }
    let g = Number.NEGATIVE_INFINITY;
    const f = k.f64;
    for (let i = 0; i < n; i++) if (f[rmp + i] > g) g = f[rmp + i];
    logScale[0] = g;
  }
  const width = features === "positive" ? m : 2 * m;
  const padded = Math.ceil(width / 4) * 4;
  for (let i0 = 0; i0 < n; i0 += blockRows) {
    const i1 = Math.min(n, i0 + blockRows);
    const kb = i1 - i0;
    const uBase = whole ? up + i0 * m : up;
    if (!whole) {
      k.f64.set(X.subarray(i0 * d, i1 * d), xp);
      if (!k.rows_sumsq_f64(xp * 8, d, kb, d, sqp * 8)) return { logScale, finite: false };
      project(i0, i1, i0);
    }
    if (!whole && !trig) k.rows_max_f64(up * 8, m, kb, m, mxp * 8, hyperbolic ? 1 : 0);
    const f = k.f64;
    const st = kb * 4; // panel stride (elements)
    // Positive features: formed and exponentiated in SIMD by rows_affine_exp_f64 (rows) or
    // rows_affine_exp_panels_f64 (panels; m a multiple of 4), below.
    const fused = features === "positive" && (layout === "rows" || (m & 3) === 0);
    for (let i = i0; i < i1; i++) {
      const o = uBase + (i - i0) * m;
      const t = whole ? i : i - i0; // slot of row i in rowMax/rowTerm
      if (!whole) {
        rowStats(t, f[mxp + i - i0]);
        logScale[i] = f[rmp + t];
      }
      const mx = f[rtp + t];
      const e = f[rmp + t] - (whole ? logScale[0] : logScale[i]);
      if (fused) {
        f[mxp + (i - i0)] = mx;
        f[ep + (i - i0)] = e;
        continue;
      }
      if (layout === "rows") {
        const w = dst + (i - i0) * width;
        if (features === "positive") positiveRows(f, w, o, m, s, mx, e);
        else if (hyperbolic) hyperbolicExponents(f, w, f, o, m, s, mx, e);
        else trigFeatures(f, w, f, o, m, s, Math.exp(e));
      } else {
        const w = dst + (i - i0) * 4;
        if (features === "positive") positivePanels(f, w, st, f, o, m, s, mx, e);
        else if (hyperbolic) hyperbolicPanels(f, w, st, f, o, m, s, mx, e);
        else trigPanels(f, w, st, f, o, m, s, Math.exp(e));
      }
    }
    if (fused && layout === "rows") k.rows_affine_exp_f64(uBase * 8, m, dst * 8, width, kb, m, s, mxp * 8, ep * 8);
    else if (fused) k.rows_affine_exp_panels_f64(uBase * 8, m, dst * 8, kb, kb, m, s, mxp * 8, ep * 8, tp * 8);
    else if (!trig) residentExp(k, dst, layout === "rows" ? kb * width : kb * padded);
    if (layout === "panels" && padded > width) zeroPanelPadding(k.f64, dst, kb, width);
    sink(i0, i1);
  }
  return { logScale, finite: true };
}

/** Ωᵀ (d × m, Ω row-major m × d) into 4-column panels of depth d at f[o…], zero-padded. */
function packOmegaPanels(om: Float64Array, m: number, d: number, f: Float64Array, o: number): void {
  const mp = Math.ceil(m / 4) * 4;
  for (let j = 0; j < mp; j++) {
    const q = o + (j >> 2) * d * 4 + (j & 3);
    if (j < m) for (let p = 0; p < d; p++) f[q + p * 4] = om[j * d + p];
    else for (let p = 0; p < d; p++) f[q + p * 4] = 0;
  }
}

/**
 * Positive exponents of one row, f[w + l] = s·u[o + l] − mx + e with u in the same (resident) array
 * — the numbers of positiveExponents; a copy of its own so each stays monomorphic on its arrays.
 */
function positiveRows(f: Float64Array, w: number, o: number, m: number, s: number, mx: number, e: number): void {
  for (let l = 0; l < m; l++) f[w + l] = f[o + l] * s - mx + e;
}

/** Positive exponents of one row into panels: feature l at w + ⌊l/4⌋·st + l mod 4. */
function positivePanels(
  f: Float64Array,
  w: number,
  st: number,
  u: Float64Array,
  o: number,
  m: number,
  s: number,
  mx: number,
  e: number,
): void {
  let l = 0;
  for (let q = w; l + 4 <= m; l += 4, q += st) {
    f[q] = u[o + l] * s - mx + e;
    f[q + 1] = u[o + l + 1] * s - mx + e;
    f[q + 2] = u[o + l + 2] * s - mx + e;
    f[q + 3] = u[o + l + 3] * s - mx + e;
  }
  for (; l < m; l++) f[w + (l >> 2) * st + (l & 3)] = u[o + l] * s - mx + e;
}

/** Hyperbolic exponents of one row into panels (±s·u − mx + e, features l and m + l). */
function hyperbolicPanels(
  f: Float64Array,
  w: number,
  st: number,
  u: Float64Array,
  o: number,
  m: number,
  s: number,
  mx: number,
  e: number,
): void {
  for (let l = 0; l < m; l++) {
    const v = u[o + l] * s;
    f[w + (l >> 2) * st + (l & 3)] = v - mx + e;
    const r = m + l;
    f[w + (r >> 2) * st + (r & 3)] = -v - mx + e;
  }
}

/** Trig features of one row into panels: h·sin(s·u), h·cos(s·u) (features l and m + l). */
function trigPanels(f: Float64Array, w: number, st: number, u: Float64Array, o: number, m: number, s: number, h: number): void {
  for (let l = 0; l < m; l++) {
    const v = u[o + l] * s;
    f[w + (l >> 2) * st + (l & 3)] = h * Math.sin(v);
    const r = m + l;
    f[w + (r >> 2) * st + (r & 3)] = h * Math.cos(v);
  }
}

/** Zeroes the padding columns width…padded−1 of a kb-row panel block (after the exp made them 1). */
function zeroPanelPadding(f: Float64Array, o: number, kb: number, width: number): void {
  const last = o + (width >> 2) * kb * 4;
  for (let p = 0; p < kb; p++) for (let j = width & 3; j < 4; j++) f[last + p * 4 + j] = 0;
}
