/**
 * Probability vectors for the categorical samplers and the row-sampling estimators.
 *
 * Two entry points, deliberately distinct:
 *  - `validateProbabilities(p)` CHECKS a vector that is already meant to be a distribution
 *    (non-negative, finite, Σ p = 1 within a tolerance) and throws otherwise. It never rescales:
 *    an estimator's 1/(s p_j) weights are only unbiased for the p the samples were drawn from, so a
 *    silent renormalization would hide a caller's bug.
 *  - `normalizeWeights(w)` TURNS non-negative finite weights with a positive sum into a
 *    distribution (w / Σ w). Use it when proportional weights (‖V_j‖², leverage scores…) are meant.
 */
import { NonFiniteError, ShapeError, ValueError } from "@randattn/core";
import { assertNumber, assertVector, assertOptions } from "@randattn/core/internal";

/** Options of {@link validateProbabilities}. */
export interface ProbabilityOptions {
  /**
   * Largest accepted |Σ p − 1|. Rounding in a computed vector of length n gives errors of about
   * n·2⁻⁵³, far below this.
   * @default 1e-9
   */
  tolerance?: number;
}

function checkEntries(values: ArrayLike<number>, argument: string): void {
  if (values === null || typeof values !== "object" || typeof values.length !== "number") {
    throw new ShapeError(argument, "an array of numbers", values === null ? "null" : typeof values);
  }
  if (values.length === 0) throw new ShapeError(argument, "at least 1 entry", "length 0");
  for (let j = 0; j < values.length; j++) {
    const v = values[j];
    if (typeof v !== "number" || !Number.isFinite(v)) throw new NonFiniteError(argument, "finite entries", `${v} at [${j}]`);
    if (v < 0) throw new ValueError(argument, "non-negative entries", `${v} at [${j}]`);
  }
}

/**
 * Checks that `probabilities` is a probability vector: finite, non-negative entries summing to 1
 * within `tolerance`. Returns a `Float64Array` copy of the values as given (not renormalized).
 * @throws NonFiniteError on NaN/±Inf, ValueError on a negative entry or a sum off 1, ShapeError when empty.
 */
export function validateProbabilities(
  probabilities: ArrayLike<number>,
  argument = "probabilities",
  options: ProbabilityOptions = {},
): Float64Array {
  assertOptions(options, "options");
  const tolerance = options.tolerance ?? 1e-9;
  assertNumber(tolerance, "options.tolerance", { min: 0 });
  checkEntries(probabilities, argument);
  let sum = 0;
  for (let j = 0; j < probabilities.length; j++) sum += probabilities[j];
  if (!(Math.abs(sum - 1) <= tolerance)) {
    throw new ValueError(argument, `entries summing to 1 (±${tolerance}); use normalizeWeights for unnormalized weights`, `sum ${sum}`);
  }
  return Float64Array.from(probabilities);
}

/**
 * Normalizes non-negative finite `weights` into a probability vector w / Σ w.
 * @throws NonFiniteError on NaN/±Inf, ValueError on a negative entry or an all-zero vector, ShapeError when empty.
 */
export function normalizeWeights(weights: ArrayLike<number>, argument = "weights"): Float64Array {
  checkEntries(weights, argument);
  // Scale by the max first so that weights near 1e300 do not overflow the sum.
  let mx = 0;
  for (let j = 0; j < weights.length; j++) if (weights[j] > mx) mx = weights[j];
  if (mx === 0) throw new ValueError(argument, "at least one positive weight", "all zero");
  let sum = 0;
  for (let j = 0; j < weights.length; j++) sum += weights[j] / mx;
  const out = new Float64Array(weights.length);
  for (let j = 0; j < weights.length; j++) out[j] = weights[j] / mx / sum;
  return out;
}

/** Number of strictly positive entries (the support size, which bounds samples without replacement). */
export function supportSize(probabilities: ArrayLike<number>): number {
  assertVector(probabilities, "probabilities");
  let count = 0;
  for (let j = 0; j < probabilities.length; j++) if (probabilities[j] > 0) count++;
  return count;
}
