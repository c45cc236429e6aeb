/**
 * Defensive importance sampling (Hesterberg 1995): draw from the mixture (1 − ε)p + ε·uniform.
 *
 * Why the ratio estimator needs it: Ŷᵢ = Σ_t c_t A_{i,j_t} V_{j_t} / Σ_t c_t A_{i,j_t} estimates the
 * normalizer Zᵢ = Σ_j A_ij by importance sampling with the SAME p, and that is unbiased only if
 * p_j > 0 wherever A_ij > 0. The value-dependent schemes (`"value-norm"` ∝ ‖V_j‖², `"optimal"`
 * ∝ ‖W[:,j]‖‖V_j‖) give p_j = 0 to keys with V_j = 0 although A_ij > 0: Ẑ then converges to the
 * sum over the other keys only and Ŷ to a wrong limit (relative bias 0.37 at s = 32,768 with 25 %
 * zero value rows, issue 11). The mixture keeps every p_j ≥ ε/N, so both sums are unbiased and the
 * ratio is consistent; it costs at most a factor 1/(1 − ε) in the variance of the keys p favoured.
 *
 * Default ε: {@link DEFAULT_DEFENSIVE_WEIGHT} = 0.1 exactly where the ratio estimator meets a
 * value-dependent scheme; 0 everywhere else (the numerator-only and exact-normalizer estimators are
 * unbiased for any p that covers the nonzero terms, and earlier results stay bit-identical).
 * ε = 0 is refused where it is needed.
 */
import { ValueError } from "@randattn/core";
import { assertNumber } from "@randattn/core/internal";

/** ε used by the ratio estimator with scheme "value-norm" or "optimal" unless given. */
export const DEFAULT_DEFENSIVE_WEIGHT = 0.1;

/** Whether (scheme, ratio normalization) needs a positive uniform share. */
export function needsDefensiveMixture(scheme: string, ratio: boolean): boolean {
  return ratio && (scheme === "value-norm" || scheme === "optimal");
}

/**
 * The ε to use: `given` validated (in [0, 1]), or the default for (scheme, ratio).
 * @throws ValueError for ε outside [0, 1], or ε = 0 where the ratio estimator needs it.
 */
export function resolveDefensiveWeight(given: number | undefined, scheme: string, ratio: boolean): number {
  const needed = needsDefensiveMixture(scheme, ratio);
  if (given === undefined) return needed ? DEFAULT_DEFENSIVE_WEIGHT : 0;
  assertNumber(given, "options.defensiveWeight");
  if (!(given >= 0 && given <= 1)) throw new ValueError("options.defensiveWeight", "ε in [0, 1]", String(given));
  if (needed && given === 0) {
    throw new ValueError(
      "options.defensiveWeight",
      `ε in (0, 1] for the ratio estimator with scheme "${scheme}" (Ẑ needs p_j > 0 wherever A_ij > 0; default ${DEFAULT_DEFENSIVE_WEIGHT})`,
      "0",
    );
  }
  return given;
}

/** (1 − ε)p + ε/N, a new array (p itself when ε = 0). */
export function defensiveMixture(p: Float64Array, eps: number): Float64Array {
  if (eps === 0) return p;
  const n = p.length;
  return Float64Array.from(p, (v) => (1 - eps) * v + eps / n);
}
