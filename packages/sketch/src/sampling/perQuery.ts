/**
 * The per-query `"attention"` row-sampling draw (sampling/values.ts) with replacement, for all N_Q
 * rows of W at once: p_i = (1 − ε)·W[i,:]/ΣW[i,:] + ε/N_KV and s i.i.d. draws j ~ p_i per query,
 * weighted c = 1/(s·p_ij) (DKM's estimator, Drineas–Kannan–Mahoney 2006).
 *
 * Probabilities: exactly the floating-point operations of normalizeWeights → defensiveMixture
 * (scale by the row max, divide by the scaled sum, mix), so `probabilities` equals that composition
 * bit for bit (tested).
 *
 * Draws (issue 14; changed deliberately — the row-sampling results were regenerated): inverse-CDF
 * sampling, j = min{ j : C_j > u·C_{N−1} } with C the running sum of p_i (the sum the row's check
 * already forms) found by binary search — O(log N_KV) per draw after one O(N_KV) pass, instead of a
 * Vose alias table per row (three more passes, two with data-dependent branches), which for s ≪ N_KV
 * cost more than it saved. A zero probability adds nothing to C and is never drawn. The uniforms
 * come from one stream per block of QUERIES_PER_STREAM consecutive queries, derive(seed, "queries",
 * b) for queries b·64 … b·64 + 63, query i taking the s consecutive uniforms at offset (i mod 64)·s:
 * every query's draws are a fixed function of (seed, i, s) — never of the other rows' weights —
 * and distinct queries read disjoint stretches of a stream (independent as the generator's outputs
 * are), while 64× fewer streams are opened (seedrandom's xor4096 set-up, ≈ 12 µs each, was one per
 * query before).
 */
import { RandomStream, type SeedKey, ValueError, derive } from "@randattn/core";

/** Consecutive queries that share one random stream (see the module doc). */
export const QUERIES_PER_STREAM = 64;

/** Indices (N_Q·s), weights c = 1/(s·p_j) (N_Q·s) and probabilities (N_Q·N_KV) of the per-query draw. */
export interface PerQueryDraw {
  indices: Int32Array;
  weights: Float64Array;
  probabilities: Float64Array;
}

/**
 * Per-query draws with replacement for every row of `w` (nQ × n row-major, entries finite and ≥ 0,
 * already checked by the caller), `s` samples each, defensive weight `eps`.
 * @throws ValueError naming `weights[i]` when row i is all zero (as normalizeWeights does), or when
 *   a row's probabilities do not sum to 1 within 1e-9 (as validateProbabilities does).
 */
export function perQueryAttentionDraw(w: Float64Array, nQ: number, n: number, s: number, eps: number, seed: SeedKey): PerQueryDraw {
  const indices = new Int32Array(nQ * s);
  const weights = new Float64Array(nQ * s);
  const probabilities = new Float64Array(nQ * n);
  const cum = new Float64Array(n);
  const uniformShare = eps / n;
  let rng: RandomStream | undefined;
  for (let i = 0; i < nQ; i++) {
    const off = i * n;
    // normalizeWeights: scale by the max, then w/mx/Σ(w/mx).
    let mx = 0;
    for (let j = 0; j < n; j++) if (w[off + j] > mx) mx = w[off + j];
    if (mx === 0) throw new ValueError(`weights[${i}]`, "at least one positive weight", "all zero");
    let sumScaled = 0;
    for (let j = 0; j < n; j++) sumScaled += w[off + j] / mx;
    // defensiveMixture ((1 − ε)p + ε/N; p itself when ε = 0), validateProbabilities' sum, and the
    // running sum C_j it passes through — the inverse CDF.
    let sum = 0;
    let last = 0; // the last index with p > 0 (u·C rounding up to C_{N−1} draws it)
    for (let j = 0; j < n; j++) {
      let p = w[off + j] / mx / sumScaled;
      if (eps !== 0) p = (1 - eps) * p + uniformShare;
      probabilities[off + j] = p;
      sum += p;
      cum[j] = sum;
      if (p > 0) last = j;
    }
    if (!(Math.abs(sum - 1) <= 1e-9)) {
      throw new ValueError("probabilities", "entries summing to 1 (±1e-9); use normalizeWeights for unnormalized weights", `sum ${sum}`);
    }
    if (i % QUERIES_PER_STREAM === 0) rng = new RandomStream(derive(seed, "queries", i / QUERIES_PER_STREAM));
    const r = rng!;
    for (let t = 0; t < s; t++) {
      const x = r.uniform() * sum;
      // Smallest j with C_j > x (C is non-decreasing; C_{N−1} = sum > x unless x rounded up to it).
      let lo = 0;
      let hi = n - 1;
      while (lo < hi) {
        const mid = (lo + hi) >>> 1;
        if (cum[mid] > x) hi = mid;
        else lo = mid + 1;
      }
      const j = cum[lo] > x ? lo : last;
      indices[i * s + t] = j;
      weights[i * s + t] = 1 / (s * probabilities[off + j]);
    }
  }
  return { indices, weights, probabilities };
}
