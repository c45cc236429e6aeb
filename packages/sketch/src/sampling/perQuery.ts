/**
 * The per-query `"attention"` row-sampling draw (sampling/values.ts) with replacement, for all N_Q
 * rows of W at once: p_i = (1 − ε)·W[i,:]/ΣW[i,:] + ε/N_KV, a Vose alias table on p_i's support,
 * and s draws from the stream derive(seed, "query", i).
 *
 * It performs exactly the floating-point operations, in the same order, of the composition it
 * replaces — normalizeWeights → defensiveMixture → AliasTable.fromProbabilities → sample → weights
 * 1/(s·p_j) — so indices, weights and probabilities are bit-identical to it (a test keeps that
 * composition as its oracle). What it drops is overhead, not arithmetic (issue 14): the entries
 * were validated once by the caller (finite, ≥ 0) instead of twice per row, the alias stacks are
 * typed arrays reused across rows instead of growing JS arrays, and nothing is allocated per row.
 * The alias method already costs O(1) per draw after an O(N_KV) table, so a cumulative-sum +
 * binary-search sampler would not be faster and would change the draws.
 */
import { RandomStream, type SeedKey, ValueError, derive } from "@randattn/core";

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
  const support = new Int32Array(n);
  const scaled = new Float64Array(n);
  const prob = new Float64Array(n);
  const alias = new Int32Array(n);
  const small = new Int32Array(n);
  const large = new Int32Array(n);
  const uniformShare = eps / n;
  for (let i = 0; i < nQ; i++) {
    const off = i * n;
    // normalizeWeights: scale by the max, then w/mx/Σ(w/mx).
    let mx = 0;
    for (let j = 0; j < n; j++) if (w[off + j] > mx) mx = w[off + j];
    if (mx === 0) throw new ValueError(`weights[${i}]`, "at least one positive weight", "all zero");
    let sumScaled = 0;
    for (let j = 0; j < n; j++) sumScaled += w[off + j] / mx;
    // defensiveMixture ((1 − ε)p + ε/N; p itself when ε = 0), then validateProbabilities' sum and
    // the alias table's support and support sum (the same number: the skipped entries are +0).
    let sum = 0;
    let m = 0;
    for (let j = 0; j < n; j++) {
      let p = w[off + j] / mx / sumScaled;
      if (eps !== 0) p = (1 - eps) * p + uniformShare;
      probabilities[off + j] = p;
      sum += p;
      if (p > 0) support[m++] = j;
    }
    if (!(Math.abs(sum - 1) <= 1e-9)) {
      throw new ValueError("probabilities", "entries summing to 1 (±1e-9); use normalizeWeights for unnormalized weights", `sum ${sum}`);
    }
    // Vose's alias method, exactly as AliasTable.fromProbabilities (same stack order).
    for (let t = 0; t < m; t++) scaled[t] = (probabilities[off + support[t]] * m) / sum;
    let ns = 0;
    let nl = 0;
    for (let t = m - 1; t >= 0; t--) {
      if (scaled[t] < 1) small[ns++] = t;
      else large[nl++] = t;
    }
    while (ns > 0 && nl > 0) {
      const l = small[--ns];
      const g = large[--nl];
      prob[l] = scaled[l];
      alias[l] = g;
      scaled[g] = scaled[g] + scaled[l] - 1;
      if (scaled[g] < 1) small[ns++] = g;
      else large[nl++] = g;
    }
    for (let t = 0; t < nl; t++) {
      prob[large[t]] = 1;
      alias[large[t]] = large[t];
    }
    for (let t = 0; t < ns; t++) {
      prob[small[t]] = 1;
      alias[small[t]] = small[t];
    }
    // AliasTable.sample and drawWeightedSample's weights.
    const rng = new RandomStream(derive(seed, "query", i));
    for (let t = 0; t < s; t++) {
      const u = rng.uniform() * m;
      const col = Math.min(m - 1, Math.floor(u));
      const j = support[u - col < prob[col] ? col : alias[col]];
      indices[i * s + t] = j;
      weights[i * s + t] = 1 / (s * probabilities[off + j]);
    }
  }
  return { indices, weights, probabilities };
}
