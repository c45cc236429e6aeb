/**
 * REGISTRATION POINT for the sketch methods of @randattn/sketch.
 *
 * Each adapter is a `MethodDefinition` (registry/types.ts): a kebab-case name, a description, a
 * JSON schema for its params (with defaults), and a pure `run(problem, params, context, seed)`
 * that applies one sketch function to every head of `problem.heads` (head h with the seed
 * `derive(seed, "head", h)`) and returns `{ output: concatCols(headOutputs), cost, extras? }`;
 * cost is the sum over heads of the sketch function's own `{ flops, floatsStored }`.
 * Adapters live in registry/sketch/, one module per family:
 *
 * | method            | module       | sketch function                         | extra columns                                      |
 * | ----------------- | ------------ | --------------------------------------- | -------------------------------------------------- |
 * | `row-sampling`    | sampling.ts  | `sampledAttention`                      | DKM expectation                                    |
 * | `top-k`           | sampling.ts  | `topKAttention`                         | —                                                  |
 * | `random-features` | features.ts  | `randomFeatureAttention`                | fraction of rows with D ≤ 0                        |
 * | `kernel-value`    | features.ts  | `drawProjection` + `randomFeatures`     | kernel MSE, Performer closed form                  |
 * | `latent-rsvd`     | lowrank.ts   | `compressLatent` (randomized)           | cache, latent errors, Eckart–Young, HMT bound      |
 * | `latent-svd`      | lowrank.ts   | `compressLatent` (exact, reference)     | cache, latent errors, Eckart–Young                 |
 * | `mha-to-mla`      | lowrank.ts   | `multiHeadToMla`                        | cache, weight error                                |
 * | `hyper-attention` | literature.ts| `hyperAttention`                        | α, κ of its guarantee                              |
 * | `kdeformer`       | literature.ts| `kdeformerAttention`                    | —                                                  |
 * | `scatterbrain`    | literature.ts| `scatterbrainAttention`                 | —                                                  |
 * | `wildcat`         | coreset.ts   | `wildcatAttention`                      | —                                                  |
 * | `thinformer`      | coreset.ts   | `thinformerAttention`                   | —                                                  |
 * | `nystromformer`   | coreset.ts   | `nystromformerAttention`                | —                                                  |
 * | `skyformer`       | coreset.ts   | `skyformerAttention`                    | —                                                  |
 *
 * To add one: write the `MethodDefinition` in the family's module — with `estimateCost`, its cost
 * from the problem's sizes (the sketch function's own accounting), and a case in
 * test/registry/estimate-cost.test.ts — and list it below; it is then listed by `randattn list`,
 * validated in configs, run by workers and estimated by `randattn plan`.
 */
import { nystromformer, skyformer, thinformer, wildcat } from "./sketch/coreset.js";
import { kernelValue, randomFeaturesMethod } from "./sketch/features.js";
import { hyperAttentionMethod, kdeformerMethod, scatterbrainMethod } from "./sketch/literature.js";
import { latentRsvd, latentSvd, mhaToMla } from "./sketch/lowrank.js";
import { rowSampling, topK } from "./sketch/sampling.js";
import type { MethodDefinition } from "./types.js";

export { dkmExpectedRelativeError } from "./sketch/sampling.js";
export { performerMse } from "./sketch/features.js";
export { hmtSpectralBound } from "./sketch/lowrank.js";

/** The 2021–2024 methods of issue 11 (sketch/literature.ts). */
const literatureMethods = [hyperAttentionMethod, kdeformerMethod, scatterbrainMethod];

/** The sketch method adapters, in listing order. */
export function sketchMethods(): MethodDefinition[] {
  return [
    rowSampling,
    topK,
    randomFeaturesMethod,
    kernelValue,
    latentRsvd,
    latentSvd,
    mhaToMla,
    ...literatureMethods,
    wildcat,
    thinformer,
    nystromformer,
    skyformer,
  ];
}
