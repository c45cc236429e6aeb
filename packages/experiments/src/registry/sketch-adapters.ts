/**
 * REGISTRATION POINT for the sketch methods of @randattn/sketch.
 *
 * Each adapter is a `MethodDefinition` (registry/types.ts): a kebab-case name, a description, a
 * JSON schema for its params (with defaults), and a pure `run(problem, params, seed, context)`
 * that applies the sketch to every head of `problem.heads` and returns
 * `{ output: concatCols(headOutputs), cost: { flops, floatsStored }, weights? }`.
 * The `seed` is the method's key (root, "method", name, params, trial): pass it (or `derive`d keys)
 * to the sketch functions — never open a stream shared between heads.
 *
 * Planned adapters (filled in once the sketch APIs settle):
 * - `row-sampling`   sampling/: Y ≈ Z⁻¹ A S Sᵀ V with s sampled rows of V; params samples, distribution
 *                    ("uniform" | "row-norms" | "attention-norms"), replacement.
 * - `random-features` features/: linear-time attention with m features; params features, kind
 *                    ("trig" | "positive" | "hyperbolic"), orthogonal.
 * - `rsvd-values`    lowrank/: randomized SVD of V (rank, oversampling, powerIterations).
 * - `mla-latent-rsvd` lowrank/: MLA latent compression (uses `problem.latent`), params rank, powerIterations.
 * - `mha-to-mla`     lowrank/: MHA/GQA → MLA latent by (randomized) SVD of the stacked K/V weights.
 *
 * To add one: write `const rowSampling: MethodDefinition = { … }` below and return it from
 * `sketchMethods()`; it is then listed by `randattn list`, validated in configs and run by workers.
 */
import type { MethodDefinition } from "./types.js";

/** The sketch method adapters (none registered yet). */
export function sketchMethods(): MethodDefinition[] {
  return [];
}
