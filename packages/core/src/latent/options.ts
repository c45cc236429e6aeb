/**
 * Option handling shared by the MLA forms and the latent-cache decoder (internal; not re-exported).
 */
import type { Kernel, PositionalRotation, ProjectedAttentionOptions } from "../attention/index.js";
import { ShapeError, ValueError } from "../errors.js";
import { Rope } from "../position/rope.js";
import { assertFinite, describe } from "../validate.js";

/**
 * Options of the MLA forms (`mlaAttention`, `mergedMlaAttention`, `mlaDecode`): the per-head
 * attention options (kernel, mask, maskForm, onEmptyRow, `algorithm: "materialized" | "streaming"`,
 * blockSize) plus the rotation.
 */
export interface MlaOptions extends ProjectedAttentionOptions {
  /**
   * Rotary position embedding. With a decoupled rotary part in the weights it rotates that part
   * (q_R,h and the shared k_R, width d_R) and leaves the latent part alone — the DeepSeek-V2 design
   * that keeps merging exact. Without one, `mlaAttention` applies it naively to the full Q_h and K_h
   * (§4.2's R_i R_jᵀ between the two factors) and the merged forms refuse it, since that product
   * cannot be merged.
   * @default undefined (no rotation)
   */
  rope?: PositionalRotation;
  /** Positions of the query rows for `rope`. @default (N_KV − N_Q) + i, the causal convention of the ERRATA */
  queryPositions?: ArrayLike<number>;
  /** Positions of the key rows for `rope`. @default j = 0 … N_KV − 1 */
  keyPositions?: ArrayLike<number>;
}

/**
 * The kernel an MLA form runs. MLA only needs κ to depend on ⟨q, k⟩ (the merged form changes the
 * vectors, not their inner products), so `softmax` and `dot` kernels are allowed and `pairwise`
 * ones are not. The softmax scale defaults to 1/√(d_head + d_R), the width of the *unmerged*
 * query–key vectors (ERRATA): it must be carried along because the merged vectors are d_L wide.
 */
export function mlaKernel(kernel: Kernel | undefined, defaultScale: number): Kernel {
  if (kernel === undefined) return { kind: "softmax", scale: defaultScale };
  if (kernel === null || typeof kernel !== "object") throw new ValueError("options.kernel", "a Kernel object", describe(kernel));
  if (kernel.kind === "softmax") return { kind: "softmax", scale: kernel.scale ?? defaultScale };
  if (kernel.kind === "dot") return kernel;
  throw new ValueError(
    "options.kernel",
    'kind "softmax" or "dot" (MLA merging needs κ to depend on ⟨q, k⟩ only)',
    `kind ${describe((kernel as { kind: unknown }).kind)}`,
  );
}

/** `positions` if given (checked: length n, finite), else `offset + i`. */
export function resolvePositions(positions: ArrayLike<number> | undefined, n: number, offset: number, argument: string): ArrayLike<number> {
  if (positions === undefined) return Float64Array.from({ length: n }, (_, i) => offset + i);
  if (positions === null || typeof positions !== "object" || typeof positions.length !== "number") {
    throw new ShapeError(argument, `${n} positions`, describe(positions));
  }
  if (positions.length !== n) throw new ShapeError(argument, `length ${n} (one position per row)`, `length ${positions.length}`);
  assertFinite(positions, argument);
  return positions;
}

/** Checks `rope` is a PositionalRotation and, when it is a `Rope`, that it rotates `dim`-wide rows. */
export function checkRope(rope: PositionalRotation, dim: number, what: string): void {
  if (rope === null || typeof rope !== "object" || typeof rope.apply !== "function") {
    throw new ValueError("options.rope", "a PositionalRotation (an object with apply(x, positions))", describe(rope));
  }
  if (rope instanceof Rope && rope.dim !== dim) {
    throw new ShapeError("options.rope", `a Rope of dim ${dim} (${what})`, `dim ${rope.dim}`);
  }
}

/** The per-head attention options without the MLA-only fields. */
export function attentionOptionsOf(options: MlaOptions): ProjectedAttentionOptions {
  const { rope: _r, queryPositions: _q, keyPositions: _k, ...rest } = options;
  return rest;
}
