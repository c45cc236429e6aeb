/**
 * Normalization sublayers of §3.1.1 (item 2), applied row-wise: each row of an N×d matrix is one
 * token's vector x ∈ R^d.
 *
 *  - LayerNorm [BKH16]: x̃ = (x − μ) / √(σ² + ε), y = γ ⊙ x̃ + β, with μ = (1/d) Σ x_i and the
 *    *biased* variance σ² = (1/d) Σ (x_i − μ)² (the paper's σ; ERRATA: ε inside the square root).
 *  - RMSNorm [ZS19]: y = g ⊙ x / √((1/d) Σ x_i² + ε) — no recentring and no shift, hence cheaper
 *    (the remark at the end of §3.2: Llama, Gemma, DeepSeek use it).
 */
import { ShapeError, ValueError } from "./errors.js";
import { Matrix } from "./matrix.js";
import {
  assertFinite,
  assertInteger,
  assertMatrix,
  assertNonEmpty,
  assertNumber,
  assertOneOf,
  describe,
  assertOptions,
} from "./validate.js";

/** Which normalization: LayerNorm (`"layer"`) or RMSNorm (`"rms"`). */
export type NormKind = "layer" | "rms";

/** The allowed values of {@link NormKind}, for validation. */
export const NORM_KINDS: readonly NormKind[] = ["layer", "rms"];

/** LayerNorm parameters: gain γ and shift β (both length d) and ε. */
export interface LayerNormParams {
  readonly kind: "layer";
  /** γ ∈ R^d, the gain. */
  readonly gain: Float64Array;
  /** β ∈ R^d, the shift. */
  readonly shift: Float64Array;
  /** ε > 0 added to σ² inside the square root. */
  readonly epsilon: number;
}

/** RMSNorm parameters: gain g (length d) and ε. */
export interface RMSNormParams {
  readonly kind: "rms";
  /** g ∈ R^d, the gain. */
  readonly gain: Float64Array;
  /** ε > 0 added to the mean square inside the square root. */
  readonly epsilon: number;
}

/** Parameters of either normalization. */
export type NormParams = LayerNormParams | RMSNormParams;

/** Options of the norm initializers. */
export interface NormInitOptions {
  /**
   * ε added inside the square root.
   * @default 1e-5 for LayerNorm (PyTorch's default), 1e-6 for RMSNorm (Llama's)
   */
  epsilon?: number;
}

/** Default ε of each kind. */
export const DEFAULT_NORM_EPSILON: Readonly<Record<NormKind, number>> = { layer: 1e-5, rms: 1e-6 };

function checkEpsilon(epsilon: unknown, argument: string): number {
  assertNumber(epsilon, argument, { positive: true });
  return epsilon;
}

/** LayerNorm parameters at their initial values γ = 1, β = 0 (the identity on x̃). */
export function initLayerNorm(dim: number, options: NormInitOptions = {}): LayerNormParams {
  assertOptions(options, "options");
  assertInteger(dim, "dim");
  const epsilon = checkEpsilon(options.epsilon ?? DEFAULT_NORM_EPSILON.layer, "options.epsilon");
  return { kind: "layer", gain: new Float64Array(dim).fill(1), shift: new Float64Array(dim), epsilon };
}

/** RMSNorm parameters at their initial value g = 1. */
export function initRMSNorm(dim: number, options: NormInitOptions = {}): RMSNormParams {
  assertOptions(options, "options");
  assertInteger(dim, "dim");
  const epsilon = checkEpsilon(options.epsilon ?? DEFAULT_NORM_EPSILON.rms, "options.epsilon");
  return { kind: "rms", gain: new Float64Array(dim).fill(1), epsilon };
}

/** Initial parameters of the norm of the given kind (γ = 1, β = 0). */
export function initNorm(kind: NormKind, dim: number, options: NormInitOptions = {}): NormParams {
  assertOneOf(kind, "kind", NORM_KINDS);
  return kind === "layer" ? initLayerNorm(dim, options) : initRMSNorm(dim, options);
}

/** Checks a parameter object (kind, vector lengths, finiteness, ε) against the width `dim`. */
export function assertNormParams(params: unknown, argument: string, dim?: number): asserts params is NormParams {
  if (params === null || typeof params !== "object")
    throw new ValueError(argument, "norm parameters (initLayerNorm / initRMSNorm)", describe(params));
  const p = params as Partial<LayerNormParams> & { kind?: unknown };
  assertOneOf(p.kind, `${argument}.kind`, NORM_KINDS);
  const vectors: [string, unknown][] = [["gain", p.gain]];
  if (p.kind === "layer") vectors.push(["shift", p.shift]);
  for (const [name, v] of vectors) {
    if (!(v instanceof Float64Array)) throw new ValueError(`${argument}.${name}`, "a Float64Array", describe(v));
    if (dim !== undefined && v.length !== dim)
      throw new ShapeError(`${argument}.${name}`, `length ${dim} (the model width)`, `length ${v.length}`);
    assertFinite(v, `${argument}.${name}`);
  }
  checkEpsilon(p.epsilon, `${argument}.epsilon`);
}

function checkInput(x: unknown, params: NormParams, argument: string): asserts x is Matrix {
  assertMatrix(x, argument);
  assertNonEmpty(x, argument);
  assertNormParams(params, "params", x.cols);
  assertFinite(x, argument);
}

/**
 * LayerNorm applied to every row of `x` (N×d): y = γ ⊙ (x − μ)/√(σ² + ε) + β with the biased
 * variance σ² = (1/d) Σ (x_i − μ)² (§3.1.1; ERRATA).
 * @throws ShapeError when `x` is not a non-empty matrix or γ, β do not have length x.cols.
 * @throws NonFiniteError on NaN/±Inf entries.
 */
export function layerNorm(x: Matrix, params: LayerNormParams): Matrix {
  checkInput(x, params, "x");
  if (params.kind !== "layer") throw new ValueError("params.kind", '"layer"', describe(params.kind));
  const { rows, cols, data } = x;
  const out = new Matrix(rows, cols);
  const o = out.data;
  const { gain, shift, epsilon } = params;
  for (let i = 0; i < rows; i++) {
    const r = i * cols;
    let mean = 0;
    for (let j = 0; j < cols; j++) mean += data[r + j];
    mean /= cols;
    // Two-pass variance: Σ(x − μ)² is exact where E[x²] − μ² would cancel catastrophically.
    let variance = 0;
    for (let j = 0; j < cols; j++) {
      const c = data[r + j] - mean;
      variance += c * c;
    }
    variance /= cols;
    const inv = 1 / Math.sqrt(variance + epsilon);
    for (let j = 0; j < cols; j++) o[r + j] = gain[j] * ((data[r + j] - mean) * inv) + shift[j];
  }
  return out;
}

/**
 * RMSNorm applied to every row of `x` (N×d): y = g ⊙ x / √((1/d) Σ x_i² + ε) [ZS19].
 * @throws ShapeError when `x` is not a non-empty matrix or g does not have length x.cols.
 * @throws NonFiniteError on NaN/±Inf entries.
 */
export function rmsNorm(x: Matrix, params: RMSNormParams): Matrix {
  checkInput(x, params, "x");
  if (params.kind !== "rms") throw new ValueError("params.kind", '"rms"', describe(params.kind));
  const out = new Matrix(x.rows, x.cols);
  rmsNormRowsInto(x.data, out.data, x.rows, x.cols, params.gain, params.epsilon);
  return out;
}

/**
 * RMSNorm's row loop on flat arrays, no checks: o_r = g ⊙ x_r / √((1/d) Σ x_ri² + ε). Shared by
 * `rmsNorm` and the pretrained models' `normRows` (which checks its params once, at construction).
 */
export function rmsNormRowsInto(
  data: Float64Array,
  o: Float64Array,
  rows: number,
  cols: number,
  gain: Float64Array,
  epsilon: number,
): void {
  for (let i = 0; i < rows; i++) {
    const r = i * cols;
    let ms = 0;
    for (let j = 0; j < cols; j++) ms += data[r + j] * data[r + j];
    const inv = 1 / Math.sqrt(ms / cols + epsilon);
    for (let j = 0; j < cols; j++) o[r + j] = gain[j] * (data[r + j] * inv);
  }
}

/** Applies the norm described by `params` (LayerNorm or RMSNorm) row-wise to `x`. */
export function applyNorm(x: Matrix, params: NormParams): Matrix {
  assertNormParams(params, "params");
  return params.kind === "layer" ? layerNorm(x, params) : rmsNorm(x, params);
}
