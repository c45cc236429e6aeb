/**
 * Shared pieces of the sketch-method adapters: param-schema builders, per-head seeds, and checks
 * of what a problem provides. An adapter only routes a problem's heads through a @randattn/sketch
 * function — the numbers are the sketch function's own, so the registry adds nothing.
 */
import { type Kernel, type Matrix, type SeedKey, ValueError, derive } from "@randattn/core";
import { attentionOptions } from "../kernel.js";
import type { ProblemShape } from "../shape.js";

// Typed param-schema builders (registry/define.ts): the schema types the adapter's params.
export { boolParam, defineMethod, enumParam, intParam, numberParam, paramsSchema } from "../define.js";

/**
 * The seed of head h: `derive(methodSeed, "head", h)`. Every head draws its own sketch, and a
 * head's draw does not depend on how many heads come before or after it.
 */
export function headSeed(seed: SeedKey, h: number): SeedKey {
  return derive(seed, "head", h);
}

/** Throws unless the problem has attention heads (not an accounting or kernel-pairs problem). */
export function requireHeads(problem: Pick<ProblemShape, "heads">, method: string): void {
  if (problem.heads.length === 0) {
    throw new ValueError("problem", `a problem with attention heads for method "${method}"`, "a problem without heads");
  }
}

/** Throws when the problem is masked (row sampling and top-k change which keys a mask refers to). */
export function rejectMask(problem: Pick<ProblemShape, "mask">, method: string): void {
  if (problem.mask) {
    throw new ValueError(
      "problem.mask",
      `no mask for method "${method}" (a sampled key set changes what a mask refers to)`,
      problem.mask.kind,
    );
  }
}

/** Core's kernel of the problem (softmax or a `dot` formula). */
export function coreKernel(problem: Pick<ProblemShape, "kernel">): Kernel | undefined {
  return attentionOptions(problem.kernel, null).kernel;
}

/**
 * The softmax scale of the problem's kernel (undefined: the sketch's default 1/√d_QK, which is
 * also core's). Random features exist for the softmax kernel only.
 */
export function softmaxScale(problem: Pick<ProblemShape, "kernel">, method: string): number | undefined {
  if (problem.kernel.kind !== "softmax") {
    throw new ValueError(
      "problem.kernel",
      `the softmax kernel for method "${method}" (random features approximate exp)`,
      `"${problem.kernel.kind}"`,
    );
  }
  return problem.kernel.scale;
}

/** Sum of the costs of per-head results. */
/**
 * Fraction of query rows, over all heads, that a method listed as having a non-positive estimated
 * normalizer (random features' D_i ≤ 0, Skyformer's Â1 ≤ 0): the `non_positive_row_fraction` metric.
 */
export function nonPositiveRowFraction(results: readonly { nonPositiveRows: ArrayLike<number>; output: { rows: number } }[]): number {
  let bad = 0;
  let rows = 0;
  for (const r of results) {
    bad += r.nonPositiveRows.length;
    rows += r.output.rows;
  }
  return bad / rows;
}

export function sumCosts(costs: readonly { flops: number; floatsStored: number }[]): { flops: number; floatsStored: number } {
  let flops = 0;
  let floatsStored = 0;
  for (const c of costs) {
    flops += c.flops;
    floatsStored += c.floatsStored;
  }
  return { flops, floatsStored };
}

/** ‖M‖_F². */
export function frobenius2(m: Matrix): number {
  let s = 0;
  for (const v of m.data) s += v * v;
  return s;
}
