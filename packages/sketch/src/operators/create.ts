/** `createSketch(distribution, seed)`: the operator for a distribution, drawn from the stream of `seed`. */
import type { SeedKey } from "@randattn/core";
import { checkSeed } from "./base.js";
import { DenseSketchOperator } from "./dense.js";
import { validateDistribution } from "./distributions.js";
import { RowSamplingSketchOperator } from "./rowsampling.js";
import { SparseSketchOperator } from "./sparse.js";
import { SrhtSketchOperator } from "./srht.js";
import type { RowSamplingOperator, RowSamplingSketchDistribution, SketchDistribution, SketchOperator } from "./types.js";

/**
 * The operator S for `distribution` and `seed`. Its random state is drawn on first use (lazily)
 * and cached; the same (distribution, seed) always gives the same S, byte for byte.
 * @throws ValueError / ShapeError when the distribution or the seed is invalid.
 * @example
 * ```ts
 * import { randomMatrix } from "@randattn/core";
 * import { createSketch, gaussianSketch, srhtSketch } from "@randattn/sketch";
 *
 * const a = randomMatrix(256, 8, {}, [12]);
 * // The distribution is an immutable description; the seed makes one operator S (d × n) from it.
 * const s = createSketch(gaussianSketch(32, 256), [12, "gaussian"]);
 * console.log(s.sketchLeft(a).shape); // "32×8" = S·A
 * const t = createSketch(srhtSketch(32, 256), [12, "srht"]); // subsampled randomized Hadamard
 * console.log(t.sketchLeft(a).shape); // "32×8"
 * ```
 */
export function createSketch(distribution: RowSamplingSketchDistribution, seed: SeedKey): RowSamplingOperator;
export function createSketch(distribution: SketchDistribution, seed: SeedKey): SketchOperator;
export function createSketch(distribution: SketchDistribution, seed: SeedKey): SketchOperator {
  const d = validateDistribution(distribution);
  const key = checkSeed(seed);
  switch (d.kind) {
    case "gaussian":
    case "rademacher":
      return new DenseSketchOperator(d, key);
    case "srht":
      return new SrhtSketchOperator(d, key);
    case "countsketch":
    case "sparse-sign":
      return new SparseSketchOperator(d, key);
    case "row-sampling":
      return new RowSamplingSketchOperator(d, key);
  }
}
