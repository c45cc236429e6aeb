/** Config kernels and masks → core's attention options. */
import { toUnaryFunction } from "../base/expr-eval.js";
import type { AttentionOptions } from "@randattn/core";
import type { KernelSpec, MaskSpec } from "./types.js";

/** Core attention options for a problem's kernel and mask (formulas compiled to closures, no eval). */
export function attentionOptions(kernel: KernelSpec, mask: MaskSpec | null): AttentionOptions {
  const opts: AttentionOptions = {};
  if (kernel.kind === "softmax") opts.kernel = kernel.scale === undefined ? { kind: "softmax" } : { kind: "softmax", scale: kernel.scale };
  else {
    const f = toUnaryFunction(kernel.expression);
    opts.kernel = { kind: "dot", f, name: kernel.formula, ...(kernel.scale === undefined ? {} : { scale: kernel.scale }) };
  }
  if (mask) opts.mask = mask.offset === undefined ? { kind: "causal" } : { kind: "causal", offset: mask.offset };
  return opts;
}
