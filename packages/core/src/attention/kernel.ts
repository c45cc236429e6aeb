/**
 * Attention kernels κ (Serret 2026, §2.1). Attention is A[i,j] = κ(Q[i,:], K[j,:]) followed by the
 * row normalization Z = diag(A·1), Y = Z⁻¹AV; κ is pluggable:
 *  - `softmax`:  κ(v,w) = exp(scale·⟨v,w⟩), scale default 1/√d_QK — the scaled exponential of
 *                [Vas+17]; the 1/√d_QK keeps ⟨v,w⟩ at unit variance for unit-variance entries (§2.1).
 *  - `dot`:      κ(v,w) = f(scale·⟨v,w⟩) for any f ≥ 0 (the f_κ of §2.2), scale default 1.
 *  - `pairwise`: any κ(v,w) ≥ 0 (e.g. a Gaussian kernel exp(−‖v−w‖²/2)).
 *
 * The "empty" value ∅_κ of §3.2 — the logit a masked entry gets in the additive mask form
 * κ(QKᵀ + M) — is −∞ for the exponential and, for a `dot` kernel, −∞ exactly when f(−∞) = 0
 * (ReLU, sigmoid, exp…). Otherwise no ∅_κ exists and the multiplicative form κ(QKᵀ) ⊙ M̃ is used.
 */
import { NumericalError, ShapeError, ValueError } from "../errors.js";
import { assertFinite, assertNumber, assertVector, describe, assertOptions } from "../validate.js";

/** A kernel κ: R^{d_QK} × R^{d_QK} → [0, ∞). */
export type Kernel =
  /** κ(v,w) = exp(scale·⟨v,w⟩). `scale` default 1/√d_QK. */
  | { kind: "softmax"; scale?: number }
  /** κ(v,w) = f(scale·⟨v,w⟩), f ≥ 0. `scale` default 1. */
  | { kind: "dot"; f: (s: number) => number; scale?: number; name?: string }
  /** Any κ(v,w) ≥ 0. `fn` receives row views of Q and K and must not modify them. */
  | { kind: "pairwise"; fn: (q: Float64Array, k: Float64Array) => number; name?: string };

/** The kernel families. */
export type KernelKind = Kernel["kind"];

/** All kernel kinds, for validation and docs. */
export const KERNEL_KINDS: readonly KernelKind[] = ["softmax", "dot", "pairwise"];

/**
 * The scaled exponential kernel κ(v,w) = exp(scale·⟨v,w⟩) — softmax attention.
 * @param scale Logit scale. @default 1/√d_QK (resolved when the kernel meets the queries)
 */
export function softmaxKernel(scale?: number): Kernel {
  if (scale !== undefined) assertNumber(scale, "scale", { positive: true });
  return scale === undefined ? { kind: "softmax" } : { kind: "softmax", scale };
}

/**
 * A dot-product kernel κ(v,w) = f(scale·⟨v,w⟩) with f ≥ 0 (e.g. `s => Math.max(s, 0)`).
 * @param f The scalar map f_κ; its values must be finite and ≥ 0 on the logits it meets.
 * @param options.scale Logit scale. @default 1
 * @param options.name Name used in error messages and reports. @default "dot"
 */
export function dotKernel(f: (s: number) => number, options: { scale?: number; name?: string } = {}): Kernel {
  assertOptions(options, "options");
  if (typeof f !== "function") throw new ValueError("f", "a function (s: number) => number", describe(f));
  if (options.scale !== undefined) assertNumber(options.scale, "options.scale", { positive: true });
  return {
    kind: "dot",
    f,
    ...(options.scale !== undefined ? { scale: options.scale } : {}),
    ...(options.name ? { name: options.name } : {}),
  };
}

/**
 * A general kernel κ(v,w) ≥ 0 on pairs of rows.
 * @param fn κ; receives row views of Q and K (do not modify them).
 * @param name Name used in error messages and reports. @default "pairwise"
 */
export function pairwiseKernel(fn: (q: Float64Array, k: Float64Array) => number, name?: string): Kernel {
  if (typeof fn !== "function") throw new ValueError("fn", "a function (q, k) => number", describe(fn));
  return name ? { kind: "pairwise", fn, name } : { kind: "pairwise", fn };
}

/** A kernel with its defaults filled in for a given d_QK (what the attention loops run on). */
export interface ResolvedKernel {
  readonly kind: KernelKind;
  /** Logit scale (1 for `pairwise`, where it is unused). */
  readonly scale: number;
  /** f for `dot` kernels. */
  readonly f?: (s: number) => number;
  /** κ for `pairwise` kernels. */
  readonly fn?: (q: Float64Array, k: Float64Array) => number;
  /** ∅_κ, the logit of a masked entry in the additive form; undefined when the kernel has none. */
  readonly empty: number | undefined;
  /** Name for messages: "softmax", "dot", "pairwise" or the user's name. */
  readonly name: string;
}

/**
 * Checks a kernel object and fills in its defaults for queries/keys of width `dQK`.
 * @throws ValueError on an unknown kind, a missing function, or a scale that is not a finite number > 0.
 */
export function resolveKernel(kernel: unknown, dQK: number, argument = "options.kernel"): ResolvedKernel {
  if (kernel === undefined) return { kind: "softmax", scale: 1 / Math.sqrt(dQK), empty: Number.NEGATIVE_INFINITY, name: "softmax" };
  if (kernel === null || typeof kernel !== "object") throw new ValueError(argument, "a Kernel object { kind, … }", describe(kernel));
  const k = kernel as { kind?: unknown; scale?: unknown; f?: unknown; fn?: unknown; name?: unknown };
  const name = typeof k.name === "string" && k.name.length > 0 ? k.name : String(k.kind);
  switch (k.kind) {
    case "softmax": {
      const scale = k.scale === undefined ? 1 / Math.sqrt(dQK) : k.scale;
      assertNumber(scale, `${argument}.scale`, { positive: true });
      return { kind: "softmax", scale, empty: Number.NEGATIVE_INFINITY, name: "softmax" };
    }
    case "dot": {
      if (typeof k.f !== "function") throw new ValueError(`${argument}.f`, "a function (s: number) => number", describe(k.f));
      const scale = k.scale === undefined ? 1 : k.scale;
      assertNumber(scale, `${argument}.scale`, { positive: true });
      const f = k.f as (s: number) => number;
      return { kind: "dot", scale, f, empty: dotEmptyValue(f), name };
    }
    case "pairwise": {
      if (typeof k.fn !== "function") throw new ValueError(`${argument}.fn`, "a function (q, k) => number", describe(k.fn));
      return { kind: "pairwise", scale: 1, fn: k.fn as (q: Float64Array, k: Float64Array) => number, empty: undefined, name };
    }
    default:
      throw new ValueError(`${argument}.kind`, `one of ${KERNEL_KINDS.map((s) => `"${s}"`).join(", ")}`, describe(k.kind));
  }
}

// ∅_κ = −∞ works for κ(QKᵀ + M) exactly when f(−∞) = 0 (scale > 0 keeps scale·(−∞) = −∞).
function dotEmptyValue(f: (s: number) => number): number | undefined {
  let v: number;
  try {
    v = f(Number.NEGATIVE_INFINITY);
  } catch {
    return undefined;
  }
  return v === 0 ? Number.NEGATIVE_INFINITY : undefined;
}

/**
 * ∅_κ of §3.2: the value M[i,j] takes on masked entries in the additive form κ(QKᵀ + M).
 * −∞ for `softmax` and for a `dot` kernel with f(−∞) = 0; `undefined` when the kernel has no such
 * value (a `dot` kernel with f(−∞) ≠ 0, every `pairwise` kernel) — attention then uses the
 * multiplicative form κ(QKᵀ) ⊙ M̃, which gives the same A by definition.
 */
export function kernelEmptyValue(kernel: Kernel): number | undefined {
  return resolveKernel(kernel, 1, "kernel").empty;
}

/**
 * The logit scale the kernel uses with queries/keys of width `dQK` (1/√d_QK for default softmax).
 * `pairwise` kernels have no logit scale and return 1.
 */
export function kernelScale(kernel: Kernel | undefined, dQK: number): number {
  if (!Number.isInteger(dQK) || dQK < 1) throw new ValueError("dQK", "an integer ≥ 1", describe(dQK));
  return resolveKernel(kernel, dQK, "kernel").scale;
}

/**
 * κ(q, k) for one pair, literally (no max-shift: exp may overflow to +∞ for large logits — that is
 * what the shifted attention loops avoid). For reference computations and small examples.
 * @throws ShapeError when q and k differ in length; NumericalError when κ is not finite and ≥ 0.
 */
export function evaluateKernel(kernel: Kernel | undefined, q: Float64Array, k: Float64Array): number {
  assertVector(q, "q");
  assertVector(k, "k");
  assertFinite(q, "q");
  assertFinite(k, "k");
  if (q.length !== k.length) throw new ShapeError("k", `length ${q.length} (= q.length)`, `length ${k.length}`);
  const r = resolveKernel(kernel, q.length, "kernel");
  let v: number;
  if (r.kind === "pairwise") v = r.fn!(q, k);
  else {
    let s = 0;
    for (let p = 0; p < q.length; p++) s += q[p] * k[p];
    v = r.kind === "softmax" ? Math.exp(r.scale * s) : r.f!(r.scale * s);
  }
  if (!(v >= 0 && v < Number.POSITIVE_INFINITY)) throw kernelValueError(r, v, 0, 0, "kernel");
  return v;
}

/** The NumericalError for a kernel value that is not finite and ≥ 0 at (query i, key j). */
export function kernelValueError(r: ResolvedKernel, value: number, i: number, j: number, argument = "options.kernel"): NumericalError {
  return new NumericalError(argument, `κ(Q[${i},:], K[${j},:]) finite and ≥ 0 (kernel "${r.name}")`, `${value} at query ${i}, key ${j}`);
}
