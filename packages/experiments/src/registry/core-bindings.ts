/**
 * The @randattn/core entry points the exact methods and the `.npy` generator call, bound by name.
 *
 * TRANSITION: core's attention/ and io/ barrels are being filled in concurrently; until they
 * export these names this module looks them up at run time (a cell that needs a missing one fails
 * with a clear message instead of the whole package failing to compile). Once core exports them,
 * replace the lookups below by `import { attention, attentionWeights, streamingAttention, readNpy } from "@randattn/core"`.
 */
import * as core from "@randattn/core";
import { type Matrix, ValueError } from "@randattn/core";

/** Core's attention options (docs/ARCHITECTURE.md, attention/ contract). */
export interface CoreAttentionOptions {
  kernel?: { kind: "softmax"; scale?: number } | { kind: "dot"; f: (s: number) => number; scale?: number; name?: string };
  mask?: { kind: "causal"; offset?: number };
  onEmptyRow?: "error" | "zero";
  blockSize?: number;
}

type AttentionFn = (queries: Matrix, keys: Matrix, values: Matrix, options?: CoreAttentionOptions) => Matrix;
type WeightsFn = (queries: Matrix, keys: Matrix, options?: CoreAttentionOptions) => Matrix;
/** What core's `.npy` reader returns (shape + row-major data). */
export interface NpyArray {
  shape: readonly number[];
  data: ArrayLike<number>;
  fortranOrder?: boolean;
}
type ReadNpyFn = (bytes: Uint8Array) => NpyArray;

function lookup<T>(name: string): T {
  const f = (core as unknown as Record<string, unknown>)[name];
  if (typeof f !== "function") throw new ValueError(`@randattn/core.${name}`, "an exported function", "not exported by this build of core");
  return f as T;
}

/** Exact attention Y = Z⁻¹AV (core `attention`). */
export const attention: AttentionFn = (q, k, v, o) => lookup<AttentionFn>("attention")(q, k, v, o);
/** Attention weights P = Z⁻¹A (core `attentionWeights`). */
export const attentionWeights: WeightsFn = (q, k, o) => lookup<WeightsFn>("attentionWeights")(q, k, o);
/** Online-softmax attention (core `streamingAttention`). */
export const streamingAttention: AttentionFn = (q, k, v, o) => lookup<AttentionFn>("streamingAttention")(q, k, v, o);
/** `.npy` parser (core `readNpy`). */
export const readNpy: ReadNpyFn = (bytes) => lookup<ReadNpyFn>("readNpy")(bytes);
