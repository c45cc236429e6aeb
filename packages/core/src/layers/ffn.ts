/**
 * The feed-forward sublayer (§3.1.1, item 3), applied to every token row independently:
 *
 *  - plain FFN (Vaswani et al.):  y = f(x W₁ + b₁) W₂ + b₂, f = ReLU or GELU;
 *  - GLU family [Sha20]:          y = (f(x W₁ + b₁) ⊙ (x V + c)) W₂ + b₂, with
 *      GLU f = σ, Bilinear f = identity, ReGLU f = ReLU, GEGLU f = GELU, SwiGLU f = Swish₁ (SiLU).
 *    Shazeer writes FFN_GLU(x, W, V, W₂) = (σ(xW) ⊗ xV) W₂ and omits biases, so the GLU kinds are
 *    initialized without them by default.
 *
 * W₁, V ∈ R^{d×d_ff}, W₂ ∈ R^{d_ff×d_out}. The products run on core's matmul kernel; bias and
 * activation are fused into one pass over the flat buffer.
 */
import { NumericalError, ShapeError, ValueError } from "../errors.js";
import { matmul } from "../linalg/matmul.js";
import type { Matrix } from "../matrix.js";
import { initWeight } from "../random/init.js";
import { derive, type SeedKey } from "../random/stream.js";
import { assertFinite, assertInteger, assertMatrix, assertNonEmpty, assertOneOf, assertShape, describe } from "../validate.js";
import { type Activation, activateInPlace } from "./activations.js";

/**
 * Feed-forward kind. Plain: `"relu"`, `"gelu"` (exact erf form), `"gelu-tanh"` (tanh approximation).
 * Gated [Sha20]: `"glu"` (σ), `"bilinear"` (no nonlinearity), `"reglu"`, `"geglu"` (exact GELU),
 * `"geglu-tanh"` (tanh GELU, as Gemma's GeGLU), `"swiglu"` (SiLU = Swish₁, as Llama).
 */
export type FfnKind = "relu" | "gelu" | "gelu-tanh" | "glu" | "bilinear" | "reglu" | "geglu" | "geglu-tanh" | "swiglu";

/** The allowed values of {@link FfnKind}. */
export const FFN_KINDS: readonly FfnKind[] = ["relu", "gelu", "gelu-tanh", "glu", "bilinear", "reglu", "geglu", "geglu-tanh", "swiglu"];

const SPEC: Readonly<Record<FfnKind, { gated: boolean; activation: Activation }>> = {
  relu: { gated: false, activation: "relu" },
  gelu: { gated: false, activation: "gelu" },
  "gelu-tanh": { gated: false, activation: "gelu-tanh" },
  glu: { gated: true, activation: "sigmoid" },
  bilinear: { gated: true, activation: "identity" },
  reglu: { gated: true, activation: "relu" },
  geglu: { gated: true, activation: "gelu" },
  "geglu-tanh": { gated: true, activation: "gelu-tanh" },
  swiglu: { gated: true, activation: "silu" },
};

/** Whether the kind is a GLU variant (has the linear branch x V). */
export function isGatedFfn(kind: FfnKind): boolean {
  assertOneOf(kind, "kind", FFN_KINDS);
  return SPEC[kind].gated;
}

/** The nonlinearity f of a kind (applied to x W₁ + b₁). */
export function ffnActivation(kind: FfnKind): Activation {
  assertOneOf(kind, "kind", FFN_KINDS);
  return SPEC[kind].activation;
}

/** Weights of a feed-forward sublayer. */
export interface FfnWeights {
  readonly kind: FfnKind;
  /** W₁ ∈ R^{d×d_ff} (the gate projection of the GLU kinds). */
  readonly w1: Matrix;
  /** b₁ ∈ R^{d_ff}, or undefined for no bias. */
  readonly b1?: Float64Array;
  /** V ∈ R^{d×d_ff}: the linear branch of the GLU kinds (absent for plain kinds). */
  readonly v?: Matrix;
  /** c ∈ R^{d_ff}: bias of the linear branch, or undefined. */
  readonly c?: Float64Array;
  /** W₂ ∈ R^{d_ff×d_out}. */
  readonly w2: Matrix;
  /** b₂ ∈ R^{d_out}, or undefined. */
  readonly b2?: Float64Array;
}

/** Shape of a feed-forward sublayer. */
export interface FfnConfig {
  /** FFN kind. @default "relu" */
  kind?: FfnKind;
  /** Input width d. */
  dModel: number;
  /** Hidden width d_ff (4d in Vaswani et al.; ≈ 8d/3 for the GLU kinds at equal parameters). */
  dHidden: number;
  /** Output width. @default dModel */
  dOut?: number;
  /** Whether to allocate biases b₁ (and c), b₂ (initialized to 0). @default true for plain kinds, false for GLU kinds (Shazeer omits them) */
  bias?: boolean;
}

/**
 * Seeded FFN weights: W₁, V, W₂ LeCun-normal (N(0, 1/fan_in)) each from its own stream
 * `[...seed, "w1" | "v" | "w2"]`; biases 0.
 */
export function initFfn(config: FfnConfig, seed: SeedKey): FfnWeights {
  if (config === null || typeof config !== "object") throw new ValueError("config", "an FfnConfig object", describe(config));
  const kind = config.kind ?? "relu";
  assertOneOf(kind, "config.kind", FFN_KINDS);
  assertInteger(config.dModel, "config.dModel");
  assertInteger(config.dHidden, "config.dHidden");
  const dOut = config.dOut ?? config.dModel;
  assertInteger(dOut, "config.dOut");
  const gated = SPEC[kind].gated;
  const bias = config.bias ?? !gated;
  if (typeof bias !== "boolean") throw new ValueError("config.bias", "a boolean", describe(bias));
  const { dModel, dHidden } = config;
  return {
    kind,
    w1: initWeight(dModel, dHidden, {}, derive(seed, "w1")),
    b1: bias ? new Float64Array(dHidden) : undefined,
    v: gated ? initWeight(dModel, dHidden, {}, derive(seed, "v")) : undefined,
    c: gated && bias ? new Float64Array(dHidden) : undefined,
    w2: initWeight(dHidden, dOut, {}, derive(seed, "w2")),
    b2: bias ? new Float64Array(dOut) : undefined,
  };
}

function checkBias(b: unknown, argument: string, length: number): void {
  if (b === undefined) return;
  if (!(b instanceof Float64Array)) throw new ValueError(argument, "a Float64Array or undefined", describe(b));
  if (b.length !== length) throw new ShapeError(argument, `length ${length}`, `length ${b.length}`);
  assertFinite(b, argument);
}

/** Validates FFN weights against the input width `dModel` (when given); returns (d, d_ff, d_out). */
export function assertFfnWeights(weights: unknown, argument: string, dModel?: number): { dModel: number; dHidden: number; dOut: number } {
  if (weights === null || typeof weights !== "object") throw new ValueError(argument, "FfnWeights (initFfn)", describe(weights));
  const w = weights as FfnWeights;
  assertOneOf(w.kind, `${argument}.kind`, FFN_KINDS);
  assertMatrix(w.w1, `${argument}.w1`);
  const d = dModel ?? w.w1.rows;
  assertShape(w.w1, `${argument}.w1`, d, undefined, "rows = input width");
  assertNonEmpty(w.w1, `${argument}.w1`);
  const dHidden = w.w1.cols;
  assertShape(w.w2, `${argument}.w2`, dHidden, undefined, `rows = ${argument}.w1.cols`);
  assertNonEmpty(w.w2, `${argument}.w2`);
  const dOut = w.w2.cols;
  checkBias(w.b1, `${argument}.b1`, dHidden);
  checkBias(w.b2, `${argument}.b2`, dOut);
  if (SPEC[w.kind].gated) {
    if (w.v === undefined)
      throw new ShapeError(`${argument}.v`, `${d}×${dHidden} (same shape as ${argument}.w1 for kind "${w.kind}")`, "undefined");
    assertShape(w.v, `${argument}.v`, d, dHidden, `same shape as ${argument}.w1 for kind "${w.kind}"`);
    checkBias(w.c, `${argument}.c`, dHidden);
  } else if (w.v !== undefined || w.c !== undefined) {
    throw new ValueError(`${argument}.v`, `undefined for the non-gated kind "${w.kind}"`, describe(w.v ?? w.c));
  }
  return { dModel: d, dHidden, dOut };
}

/**
 * The feed-forward sublayer on every row of `x` (N×d): f(x W₁ + b₁) W₂ + b₂, or for the GLU kinds
 * (f(x W₁ + b₁) ⊙ (x V + c)) W₂ + b₂ [Sha20].
 * @throws ShapeError when x.cols ≠ W₁.rows or the weights are inconsistent.
 * @throws NonFiniteError on NaN/±Inf in `x`; NumericalError when the output is not finite (non-finite weights, overflow).
 */
export function feedForward(x: Matrix, weights: FfnWeights): Matrix {
  assertMatrix(x, "x");
  assertNonEmpty(x, "x");
  assertFfnWeights(weights, "weights");
  if (x.cols !== weights.w1.rows) throw new ShapeError("x", `*×${weights.w1.rows} (cols = weights.w1.rows)`, x.shape);
  assertFinite(x, "x");
  const spec = SPEC[weights.kind];
  const hidden = matmul(x, weights.w1);
  activateInPlace(hidden.data, hidden.cols, spec.activation, weights.b1);
  if (spec.gated) {
    const lin = matmul(x, weights.v as Matrix);
    const h = hidden.data;
    const l = lin.data;
    const c = weights.c;
    if (c !== undefined) {
      const cols = hidden.cols;
      for (let i = 0, j = 0; i < h.length; i++) {
        h[i] *= l[i] + c[j];
        if (++j === cols) j = 0;
      }
    } else {
      for (let i = 0; i < h.length; i++) h[i] *= l[i];
    }
  }
  const out = matmul(hidden, weights.w2);
  const b2 = weights.b2;
  if (b2 !== undefined) {
    const o = out.data;
    const cols = out.cols;
    for (let i = 0, j = 0; i < o.length; i++) {
      o[i] += b2[j];
      if (++j === cols) j = 0;
    }
  }
  // x was checked finite, so a non-finite output comes from the weights (or overflow): report it
  // here rather than as a NaN three layers later. O(N·d_out), far below the products' cost.
  const o = out.data;
  for (let i = 0; i < o.length; i++) {
    if (!Number.isFinite(o[i])) {
      throw new NumericalError(
        "weights",
        "finite FFN weights and outputs (x was finite)",
        `output ${o[i]} at [${Math.floor(i / out.cols)}, ${i % out.cols}]`,
      );
    }
  }
  return out;
}
