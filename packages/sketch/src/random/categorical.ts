/**
 * Categorical sampling from a probability vector p over {0, …, n−1}.
 *
 * - With replacement: Vose's alias method. O(n) set-up, then O(1) per draw with one uniform
 *   each: draw u·n, split into a column i and a fraction f, return i if f < prob[i] else alias[i].
 *   Built on the support {j : p_j > 0} only, so an index with p_j = 0 can never be returned
 *   (the classic alias table can hand a rounding-induced "1" to a zero-probability cell).
 * - Without replacement, ordered: Efraimidis–Spirakis exponential keys. Each j gets
 *   key_j = ln(u_j)/p_j (u_j uniform on (0,1)); the `count` largest keys, in decreasing order,
 *   are distributed exactly as `count` successive draws with renormalization (draw from p, remove
 *   the drawn index, renormalize, repeat). Their inclusion probabilities π_j = P(j is drawn) have
 *   no closed form (they lie between p_j and min(1, count·p_j)…); estimators over this design
 *   use the draw ORDER instead (Des Raj's estimator, sampling/design.ts).
 * - Without replacement, known inclusion probabilities: randomized systematic πps sampling
 *   (Madow 1949, with a random unit order as in Hartley–Rao 1962). Target π_j = min(1, c·p_j) with
 *   c fixed by Σ π_j = count ("πps" with certainty units); the units are put in a random order,
 *   laid end to end as intervals of length π_j on [0, count), and the points u, u+1, …, u+count−1
 *   (u uniform on [0,1)) select `count` distinct units, each with probability exactly π_j — so the
 *   Horvitz–Thompson estimator Σ_{j∈S} y_j/π_j is unbiased.
 */
import { RandomStream, type SeedKey, ValueError, derive } from "@randattn/core";
import { assertInteger, assertRequiredOptions } from "@randattn/core/internal";
import { supportSize, validateProbabilities } from "./probabilities.js";
import type { SubsetOptions } from "./samplers.js";

/** Vose's alias table for repeated O(1) draws from one categorical distribution. */
export class AliasTable {
  /** Number of categories n (including zero-probability ones). */
  readonly size: number;
  private readonly support: Int32Array;
  private readonly prob: Float64Array;
  private readonly alias: Int32Array;

  private constructor(size: number, support: Int32Array, prob: Float64Array, alias: Int32Array) {
    this.size = size;
    this.support = support;
    this.prob = prob;
    this.alias = alias;
  }

  /**
   * Builds the table for `probabilities` (validated: finite, ≥ 0, Σ = 1 within 1e-9).
   * @throws ValueError / NonFiniteError / ShapeError from {@link validateProbabilities}.
   */
  static fromProbabilities(probabilities: ArrayLike<number>, argument = "probabilities"): AliasTable {
    const p = validateProbabilities(probabilities, argument);
    const m = supportSize(p);
    const support = new Int32Array(m);
    let sum = 0;
    for (let j = 0, t = 0; j < p.length; j++) {
      if (p[j] > 0) {
        support[t++] = j;
        sum += p[j];
      }
    }
    // Scaled probabilities m·p_j/Σp: "small" (< 1) columns are topped up by a "large" alias.
    const scaled = new Float64Array(m);
    for (let t = 0; t < m; t++) scaled[t] = (p[support[t]] * m) / sum;
    const prob = new Float64Array(m);
    const alias = new Int32Array(m);
    const small: number[] = [];
    const large: number[] = [];
    for (let t = m - 1; t >= 0; t--) (scaled[t] < 1 ? small : large).push(t);
    while (small.length > 0 && large.length > 0) {
      const l = small.pop()!;
      const g = large.pop()!;
      prob[l] = scaled[l];
      alias[l] = g;
      scaled[g] = scaled[g] + scaled[l] - 1;
      (scaled[g] < 1 ? small : large).push(g);
    }
    // Leftovers are 1 up to rounding (Vose's numerically stable variant).
    for (const g of large) {
      prob[g] = 1;
      alias[g] = g;
    }
    for (const l of small) {
      prob[l] = 1;
      alias[l] = l;
    }
    return new AliasTable(p.length, support, prob, alias);
  }

  /** `options.count` i.i.d. draws (indices in [0, size)) from the stream for `seed`. */
  sample(options: SubsetOptions, seed: SeedKey): Int32Array {
    assertRequiredOptions(options, "options");
    const count = options.count;
    assertInteger(count, "options.count", 0);
    const rng = new RandomStream(seed);
    const m = this.support.length;
    const out = new Int32Array(count);
    for (let i = 0; i < count; i++) {
      const u = rng.uniform() * m;
      const col = Math.min(m - 1, Math.floor(u));
      const t = u - col < this.prob[col] ? col : this.alias[col];
      out[i] = this.support[t];
    }
    return out;
  }
}

/** `options.count` i.i.d. draws from `probabilities` (alias method). */
export function sampleWithReplacement(probabilities: ArrayLike<number>, options: SubsetOptions, seed: SeedKey): Int32Array {
  return AliasTable.fromProbabilities(probabilities).sample(options, seed);
}

/**
 * `options.count` distinct indices drawn from `probabilities` without replacement, in draw order, by
 * Efraimidis–Spirakis exponential keys — the same law as successive sampling with renormalization.
 * @throws ValueError when `count` exceeds the number of indices with p_j > 0.
 */
export function sampleWithoutReplacement(probabilities: ArrayLike<number>, options: SubsetOptions, seed: SeedKey): Int32Array {
  assertRequiredOptions(options, "options");
  const p = validateProbabilities(probabilities);
  const m = supportSize(p);
  const count = options.count;
  assertInteger(count, "options.count", 0, m);
  const rng = new RandomStream(seed);
  const keys = new Float64Array(p.length);
  const idx: number[] = [];
  for (let j = 0; j < p.length; j++) {
    // One uniform per index whether or not p_j > 0, so the stream alignment is independent of p.
    const u = rng.uniformOpen();
    if (p[j] > 0) {
      keys[j] = Math.log(u) / p[j];
      idx.push(j);
    }
  }
  idx.sort((a, b) => keys[b] - keys[a] || a - b);
  return Int32Array.from(idx.slice(0, count));
}

/**
 * First-order inclusion probabilities of a fixed-size πps design: π_j = min(1, c·p_j) with c such
 * that Σ π_j = count. Indices whose c·p_j would exceed 1 become certainty units (π_j = 1) and c is
 * recomputed on the rest.
 * @throws ValueError when `count` exceeds the support size (no design of that size exists).
 */
export function inclusionProbabilities(probabilities: ArrayLike<number>, count: number): Float64Array {
  const p = validateProbabilities(probabilities);
  const m = supportSize(p);
  assertInteger(count, "count", 1, m);
  const order = Array.from(p.keys())
    .filter((j) => p[j] > 0)
    .sort((a, b) => p[b] - p[a] || a - b);
  let rest = 0;
  for (const j of order) rest += p[j];
  // Peel off certainty units from the largest p_j while c·p_j ≥ 1.
  let certain = 0;
  let c = count / rest;
  while (certain < count && c * p[order[certain]] >= 1) {
    rest -= p[order[certain]];
    certain++;
    c = certain === count ? 0 : (count - certain) / rest;
  }
  const pi = new Float64Array(p.length);
  for (let t = 0; t < order.length; t++) pi[order[t]] = t < certain ? 1 : Math.min(1, c * p[order[t]]);
  return pi;
}

/** A without-replacement sample with its exact inclusion probabilities. */
export interface SystematicSample {
  /** `count` distinct indices (in the random unit order of the design). */
  indices: Int32Array;
  /** π_j for every index j of the population (length n), Σ π_j = count. */
  inclusion: Float64Array;
}

/**
 * Randomized systematic πps sampling: `count` distinct indices, index j included with probability
 * exactly π_j = {@link inclusionProbabilities}(p, count)[j].
 */
export function systematicSample(probabilities: ArrayLike<number>, options: SubsetOptions, seed: SeedKey): SystematicSample {
  assertRequiredOptions(options, "options");
  const count = options.count;
  const pi = inclusionProbabilities(probabilities, count);
  const n = pi.length;
  // Random unit order (so pairwise inclusion probabilities are positive), then the systematic pass.
  const rng = new RandomStream(derive(seed, "order"));
  const perm = new Int32Array(n);
  for (let i = 0; i < n; i++) perm[i] = i;
  for (let i = n - 1; i > 0; i--) {
    const j = rng.int(i + 1);
    const t = perm[i];
    perm[i] = perm[j];
    perm[j] = t;
  }
  let total = 0;
  for (let j = 0; j < n; j++) total += pi[j];
  const rescale = count / total; // absorbs rounding so the intervals tile [0, count) exactly
  const u = new RandomStream(derive(seed, "start")).uniform();
  const out = new Int32Array(count);
  let cum = 0;
  let k = 0;
  for (let t = 0; t < n && k < count; t++) {
    const j = perm[t];
    const next = t === n - 1 ? count : cum + pi[j] * rescale;
    // Select j once for every point u + k in [cum, next); an interval of length ≤ 1 holds at most one.
    if (pi[j] > 0 && u + k < next) out[k++] = j;
    cum = next;
  }
  if (k !== count) throw new ValueError("count", `${count} distinct units selected`, `${k} (rounding in the systematic pass)`);
  return { indices: out, inclusion: pi };
}
