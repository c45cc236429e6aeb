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
 * The estimate each query's draw feeds (values.ts): out[i, :] = Σ_t coef_t V[j_t, :] and zhat[i] =
 * Σ_t coef_t with coef_t = c_t·W[i, j_t], summed over t in order from zero. Done row by row right
 * after the row's draw, while W's row is still in cache (issue 14: read afterwards, the s scattered
 * W[i, j_t] of 1024 rows of 8 KiB cost a cache miss each).
 */
export interface PerQueryGather {
  /** V, N_KV × d_V row-major. */
  values: Float64Array;
  dV: number;
  /** N_Q × d_V, zero on entry. */
  out: Float64Array;
  /** N_Q, zero on entry. */
  zhat: Float64Array;
}

/**
 * Per-query draws with replacement for every row of `w` (nQ × n row-major), `s` samples each,
 * defensive weight `eps`; with `gather`, also the estimate of each row (see {@link PerQueryGather}).
 * The entries must be finite and ≥ 0: each row's max pass checks that on the way (its running
 * minima beside the maxima, stop 24), and at the first row that fails the call returns null, with
 * nothing of it kept, so that the caller raises the error its own whole-matrix checks name (values.ts)
 * — those two checks, run first, had been two more passes over all of W: a fifth of the call.
 * @throws ValueError naming `weights[i]` when row i is all zero (as normalizeWeights does), or when
 *   a row's probabilities do not sum to 1 within 1e-9 (as validateProbabilities does).
 */
export function perQueryAttentionDraw(
  w: Float64Array,
  nQ: number,
  n: number,
  s: number,
  eps: number,
  seed: SeedKey,
  gather?: PerQueryGather,
): PerQueryDraw | null {
  const indices = new Int32Array(nQ * s);
  const weights = new Float64Array(nQ * s);
  const probabilities = new Float64Array(nQ * n);
  const cum = new Float64Array(n);
  const coef = new Float64Array(s);
  const uniformShare = eps / n;
  let rng: RandomStream | undefined;
  for (let i = 0; i < nQ; i++) {
    const off = i * n;
    // normalizeWeights: scale by the max, then w/mx/Σ(w/mx) — w/mx kept from the sum's pass (the
    // same quotient, bit for bit) so each entry is divided by mx once.
    const mx = rowMax(w, off, n);
    if (!(mx >= 0)) return null; // a negative, NaN or infinite entry in row i
    if (mx === 0) throw new ValueError(`weights[${i}]`, "at least one positive weight", "all zero");
    let sumScaled = 0;
    for (let j = 0; j < n; j++) {
      const x = w[off + j] / mx;
      probabilities[off + j] = x;
      sumScaled += x;
    }
    // defensiveMixture ((1 − ε)p + ε/N; p itself when ε = 0), validateProbabilities' sum, and the
    // running sum C_j it passes through — the inverse CDF.
    let sum = 0;
    let last = 0; // the last index with p > 0 (u·C rounding up to C_{N−1} draws it)
    for (let j = 0; j < n; j++) {
      let p = probabilities[off + j] / sumScaled;
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
      let j = search(cum, x, n);
      if (!(cum[j] > x)) j = last;
      indices[i * s + t] = j;
      const c = 1 / (s * probabilities[off + j]);
      weights[i * s + t] = c;
      coef[t] = c * w[off + j];
    }
    if (gather) gatherRow(gather, indices, coef, i, s);
  }
  return { indices, weights, probabilities };
}

/**
 * max(0, w[off … off+n−1]) when every entry is finite and ≥ 0, else −1: four running maxima and
 * four running minima (from 0), the same values as one of each; Math.min/Math.max carry a NaN, so
 * the row passes exactly when min ≥ 0 (−0 passes, as in values.ts' check) and max < ∞.
 */
function rowMax(w: Float64Array, off: number, n: number): number {
  let m0 = 0;
  let m1 = 0;
  let m2 = 0;
  let m3 = 0;
  let l0 = 0;
  let l1 = 0;
  let l2 = 0;
  let l3 = 0;
  let j = 0;
  for (; j + 3 < n; j += 4) {
    const x0 = w[off + j];
    const x1 = w[off + j + 1];
    const x2 = w[off + j + 2];
    const x3 = w[off + j + 3];
    m0 = Math.max(m0, x0);
    m1 = Math.max(m1, x1);
    m2 = Math.max(m2, x2);
    m3 = Math.max(m3, x3);
    l0 = Math.min(l0, x0);
    l1 = Math.min(l1, x1);
    l2 = Math.min(l2, x2);
    l3 = Math.min(l3, x3);
  }
  for (; j < n; j++) {
    m0 = Math.max(m0, w[off + j]);
    l0 = Math.min(l0, w[off + j]);
  }
  const mx = Math.max(m0, m1, m2, m3);
  return Math.min(l0, l1, l2, l3) >= 0 && mx < Number.POSITIVE_INFINITY ? mx : -1;
}

/** Smallest j in [0, n − 1) with cum[j] > x, else n − 1 (binary search). */
function search(cum: Float64Array, x: number, n: number): number {
  let lo = 0;
  let hi = n - 1;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if (cum[mid] > x) hi = mid;
    else lo = mid + 1;
  }
  return lo;
}

/**
 * Row i of the estimate: zhat[i] = Σ_t coef_t, out[i, :] = Σ_t coef_t V[j_t, :], each entry summed
 * over t in order from zero (the plain loop's operations), eight columns (one cache line of each
 * sampled row of V) at a time in registers.
 */
function gatherRow(g: PerQueryGather, indices: Int32Array, coef: Float64Array, i: number, s: number): void {
  const { values: vd, dV, out } = g;
  let z = 0;
  for (let t = 0; t < s; t++) z += coef[t];
  g.zhat[i] = z;
  const o = i * dV;
  const base = i * s;
  let col = 0;
  for (; col + 7 < dV; col += 8) {
    let a0 = 0;
    let a1 = 0;
    let a2 = 0;
    let a3 = 0;
    let a4 = 0;
    let a5 = 0;
    let a6 = 0;
    let a7 = 0;
    for (let t = 0; t < s; t++) {
      const x = coef[t];
      const r = indices[base + t] * dV + col;
      a0 += x * vd[r];
      a1 += x * vd[r + 1];
      a2 += x * vd[r + 2];
      a3 += x * vd[r + 3];
      a4 += x * vd[r + 4];
      a5 += x * vd[r + 5];
      a6 += x * vd[r + 6];
      a7 += x * vd[r + 7];
    }
    out[o + col] = a0;
    out[o + col + 1] = a1;
    out[o + col + 2] = a2;
    out[o + col + 3] = a3;
    out[o + col + 4] = a4;
    out[o + col + 5] = a5;
    out[o + col + 6] = a6;
    out[o + col + 7] = a7;
  }
  for (; col < dV; col++) {
    let a = 0;
    for (let t = 0; t < s; t++) a += coef[t] * vd[indices[base + t] * dV + col];
    out[o + col] = a;
  }
}
