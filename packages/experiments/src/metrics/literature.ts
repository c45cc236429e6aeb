/**
 * Error metrics the attention-approximation literature reports (issue 11), opt-in per config
 * (`metrics: [normalized_spectral_error, …]`) so that configs without them keep their results.csv
 * byte for byte. They are written as extra columns after the method's own (sorted by name).
 *
 * - `normalized_spectral_error`: ‖Ŷ_h − Y_h‖₂ / (‖D⁻¹A_h‖₂ ‖V_h‖₂), the normalization of the
 *   HyperAttention (Theorem 1) and KDEformer guarantees, averaged over heads h. Relative Frobenius
 *   error divides by ‖Y‖, which is small when Y averages many random rows; this one divides by the
 *   size of the product's factors instead. Needs P = D⁻¹A (formed, with the problem's mask): empty
 *   above 2²⁴ scores per head. The denominators are computed once per problem instance.
 * - `max_row_rel_error`: maxᵢ ‖Ŷᵢ − Yᵢ‖ / ‖Yᵢ‖ over query rows (all heads side by side).
 * - `mean_cosine_similarity`: meanᵢ ⟨Ŷᵢ, Yᵢ⟩ / (‖Ŷᵢ‖‖Yᵢ‖) (1 for two zero rows, 0 for one).
 */
import { type Matrix, attentionWeights, sliceCols } from "@randattn/core";
import { attentionOptions } from "../registry/kernel.js";
import type { ProblemInstance } from "../registry/types.js";
import { spectralNorm } from "../run/metrics.js";

/** The literature metrics a config may list. */
export const LITERATURE_METRIC_NAMES = ["normalized_spectral_error", "max_row_rel_error", "mean_cosine_similarity"] as const;
/** One of them. */
export type LiteratureMetricName = (typeof LITERATURE_METRIC_NAMES)[number];

/** Largest N_Q·N_KV per head for which P is formed. */
const MAX_SCORES = 1 << 24;

const denominators = new WeakMap<ProblemInstance, (number | null)[]>();

/** ‖P_h‖₂‖V_h‖₂ per head (null above MAX_SCORES), cached per instance. */
function headScales(instance: ProblemInstance): (number | null)[] {
  const hit = denominators.get(instance);
  if (hit) return hit;
  const opts = attentionOptions(instance.kernel, instance.mask);
  const out = instance.heads.map((h) =>
    h.queries.rows * h.keys.rows > MAX_SCORES ? null : spectralNorm(attentionWeights(h.queries, h.keys, opts)) * spectralNorm(h.values),
  );
  denominators.set(instance, out);
  return out;
}

/**
 * The requested literature metrics of Ŷ against Y (both N_Q × Σ d_V, heads side by side).
 * Non-finite values come back as they are (the runner records them as empty).
 */
export function literatureMetrics(
  wanted: readonly string[],
  approx: Matrix,
  exact: Matrix,
  instance: ProblemInstance,
): Partial<Record<LiteratureMetricName, number | null>> {
  const out: Partial<Record<LiteratureMetricName, number | null>> = {};
  if (wanted.includes("normalized_spectral_error")) {
    const scales = headScales(instance);
    let total = 0;
    let offset = 0;
    let ok = true;
    for (let h = 0; h < instance.heads.length; h++) {
      const w = instance.heads[h].values.cols;
      const s = scales[h];
      if (s === null) ok = false;
      else {
        const diff = sliceCols(approx, offset, offset + w);
        const ref = sliceCols(exact, offset, offset + w);
        for (let q = 0; q < diff.data.length; q++) diff.data[q] -= ref.data[q];
        total += spectralNorm(diff) / s;
      }
      offset += w;
    }
    out.normalized_spectral_error = ok && instance.heads.length > 0 ? total / instance.heads.length : null;
  }
  const rows = exact.rows;
  const cols = exact.cols;
  if (wanted.includes("max_row_rel_error")) {
    let worst = 0;
    for (let i = 0; i < rows; i++) {
      let num = 0;
      let den = 0;
      for (let c = 0; c < cols; c++) {
        const y = exact.data[i * cols + c];
        num += (approx.data[i * cols + c] - y) ** 2;
        den += y * y;
      }
      worst = Math.max(worst, den === 0 ? (num === 0 ? 0 : Number.POSITIVE_INFINITY) : Math.sqrt(num / den));
    }
    out.max_row_rel_error = worst;
  }
  if (wanted.includes("mean_cosine_similarity")) {
    let total = 0;
    for (let i = 0; i < rows; i++) {
      let dot = 0;
      let a2 = 0;
      let y2 = 0;
      for (let c = 0; c < cols; c++) {
        const a = approx.data[i * cols + c];
        const y = exact.data[i * cols + c];
        dot += a * y;
        a2 += a * a;
        y2 += y * y;
      }
      total += a2 === 0 && y2 === 0 ? 1 : a2 === 0 || y2 === 0 ? 0 : dot / Math.sqrt(a2 * y2);
    }
    out.mean_cosine_similarity = rows === 0 ? null : total / rows;
  }
  return out;
}
