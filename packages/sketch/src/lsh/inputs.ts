/**
 * Input checks shared by the LSH-based attention sketches (hyper/, kdeformer/, scatterbrain/):
 * shapes and finiteness of Q, K, V, the softmax kernel they support, and the causal mask they accept.
 */
import { ValueError } from "@randattn/core";
import { assertInteger, assertNumber, assertOneOf } from "@randattn/core/internal";

export { checkAttentionInputs } from "../inputs.js";

/** The kernel these sketches approximate: κ(q, k) = exp(scale·⟨q, k⟩). */
export type SoftmaxKernel = { kind: "softmax"; scale?: number };

/**
 * The softmax scale (default 1/√d).
 * @throws ValueError for another kernel kind or a non-positive scale.
 */
export function softmaxScaleOf(kernel: SoftmaxKernel | undefined, dim: number, argument = "options.kernel"): number {
  if (kernel === undefined) return 1 / Math.sqrt(dim);
  if (kernel === null || typeof kernel !== "object") throw new ValueError(argument, '{ kind: "softmax", scale? }', String(kernel));
  assertOneOf(kernel.kind, `${argument}.kind`, ["softmax"] as const);
  const scale = kernel.scale ?? 1 / Math.sqrt(dim);
  assertNumber(scale, `${argument}.scale`, { positive: true });
  return scale;
}

/** A causal mask as in core (query i sees keys j ≤ offset + i). */
export type CausalMask = { kind: "causal"; offset?: number };

/**
 * Validates an optional causal mask and returns its offset (null: no mask). Only the offset
 * N_KV − N_Q (core's default, ERRATA) is supported: the recursive splitting works on the square
 * causal part, with the first N_KV − N_Q keys seen by every query.
 * @throws ValueError for another mask kind, another offset, or N_KV < N_Q.
 */
export function causalOffsetOf(mask: CausalMask | undefined, nQ: number, nKV: number, method: string): number | null {
  if (mask === undefined) return null;
  if (mask === null || typeof mask !== "object") throw new ValueError("options.mask", '{ kind: "causal" }', String(mask));
  assertOneOf(mask.kind, "options.mask.kind", ["causal"] as const);
  const offset = mask.offset ?? nKV - nQ;
  assertInteger(offset, "options.mask.offset", Number.MIN_SAFE_INTEGER);
  if (offset !== nKV - nQ || offset < 0) {
    throw new ValueError(
      "options.mask.offset",
      `N_KV − N_Q = ${nKV - nQ} ≥ 0 (${method}'s causal form splits the square causal block)`,
      String(offset),
    );
  }
  return offset;
}

/** Refuses any mask (for methods whose paper gives no masked form). */
export function refuseMask(mask: unknown, method: string): void {
  if (mask !== undefined) {
    throw new ValueError("options.mask", `no mask (${method} has no masked or causal form in its paper)`, JSON.stringify(mask));
  }
}
