/**
 * Kernel halving KH(δ) (Dwivedi & Mackey, "Kernel thinning", JMLR 2024, Alg. 1a with one halving
 * round; the self-balancing Hilbert walk of their Alg. 3): n points x_1 … x_n (n even) are paired
 * (x_{2i−1}, x_{2i}) and one point of each pair is kept, chosen by a random sign η_i so that the
 * walk ψ_i = ψ_{i−1} + η_i (k(x_{2i−1}, ·) − k(x_{2i}, ·)) stays small:
 *
 *   b_i² = ‖k(x, ·) − k(x', ·)‖²,  α_i = ψ_{i−1}(x) − ψ_{i−1}(x'),
 *   a_i = max(b_i σ_{i−1} √(2 log(2/δ_i)), b_i²),  P(η_i = −1) = clip(½(1 + α_i/a_i), 0, 1),
 *   σ_i² = σ_{i−1}² + b_i² (1 + (b_i² − 2a_i) σ_{i−1}²/a_i²)₊,  δ_i = δ/(n/2).
 *
 * The kept half (x_{2i−1} where η_i = +1, else x_{2i}) satisfies ψ = Σ_kept k − Σ_dropped k, so
 * its MMD to the input is ‖ψ‖/n, sub-Gaussian with parameter σ_{n/2}/n (their Thm 2/Lemma). α_i is
 * computed from the earlier pairs (4(i − 1) kernel entries): O(n²) entries per halving, counted.
 * `thin` repeats the halving (n → n/2 → … → n/2^h): O(n²) entries. `compress` is the near-linear
 * Compress recursion (Shetty, Dwivedi & Mackey, "Distribution compression in near-linear time",
 * ICLR 2022, Alg. 1) with KH as the halving step, i.e. KH-Compress as Thinformer uses it: a set of
 * more than 4^g points is split into four contiguous near-equal parts, each compressed
 * recursively, the results concatenated and halved; at most 4^g points are returned as they are.
 * For n = 4^{g+j} the output has 2^g·√n points, at O(4^g n log₄ n) kernel entries.
 */
import { RandomStream, type SeedKey, derive } from "@randattn/core";
import { BITS_PER_UNIFORM } from "../lowrank/rpcholesky.js";

/** A kernel on point indices, k(a, b), symmetric positive semidefinite. */
export type IndexKernel = (a: number, b: number) => number;

/** Result of a halving or thinning: kept indices, entry and uniform counts. */
export interface HalvingResult {
  readonly kept: Int32Array;
  readonly kernelEvaluations: number;
  readonly randomBits: number;
}

/**
 * One kernel-halving round over `points` (indices into the kernel's domain; an even count).
 * @param delta failure probability δ ∈ (0, 1) of the sub-Gaussian bound.
 */
export function kernelHalving(points: Int32Array, kernel: IndexKernel, delta: number, seed: SeedKey): HalvingResult {
  const pairs = points.length >> 1;
  const rng = new RandomStream(derive(seed, "kernelHalving"));
  const kept = new Int32Array(pairs);
  const plus = new Int32Array(pairs); // x_j^+ (kept) and x_j^− (dropped): ψ = Σ_j k(x_j^+, ·) − k(x_j^−, ·)
  const minus = new Int32Array(pairs);
  const logTerm = Math.sqrt(2 * Math.log((2 * pairs) / delta));
  let sigma2 = 0;
  let evals = 0;
  for (let i = 0; i < pairs; i++) {
    const x = points[2 * i];
    const y = points[2 * i + 1];
    const b2 = Math.max(0, kernel(x, x) + kernel(y, y) - 2 * kernel(x, y));
    let alpha = 0;
    for (let j = 0; j < i; j++) {
      const p = plus[j];
      const m = minus[j];
      alpha += kernel(p, x) - kernel(m, x) - kernel(p, y) + kernel(m, y);
    }
    evals += 3 + 4 * i;
    const u = rng.uniform();
    let eta = 1;
    if (b2 > 0) {
      const a = Math.max(Math.sqrt(b2 * sigma2) * logTerm, b2);
      const pMinus = Math.min(1, Math.max(0, 0.5 * (1 + alpha / a)));
      eta = u < pMinus ? -1 : 1;
      sigma2 += b2 * Math.max(0, 1 + ((b2 - 2 * a) * sigma2) / (a * a));
    }
    plus[i] = eta === 1 ? x : y;
    minus[i] = eta === 1 ? y : x;
    kept[i] = plus[i];
  }
  return { kept, kernelEvaluations: evals, randomBits: BITS_PER_UNIFORM * pairs };
}

/** h rounds of kernel halving: |points| must be divisible by 2^h. */
export function thin(points: Int32Array, kernel: IndexKernel, halvings: number, delta: number, seed: SeedKey): HalvingResult {
  let current = points;
  let evals = 0;
  let bits = 0;
  for (let r = 0; r < halvings; r++) {
    const res = kernelHalving(current, kernel, delta, derive(seed, "round", r));
    current = res.kept;
    evals += res.kernelEvaluations;
    bits += res.randomBits;
  }
  return { kept: current, kernelEvaluations: evals, randomBits: bits };
}

/**
 * KH-Compress with oversampling g (module comment). An odd concatenation drops its last point
 * before halving (only when the parts have odd sizes, i.e. n is not a power of two).
 */
export function compress(points: Int32Array, kernel: IndexKernel, oversampling: number, delta: number, seed: SeedKey): HalvingResult {
  if (points.length <= 4 ** oversampling) return { kept: points, kernelEvaluations: 0, randomBits: 0 };
  const n = points.length;
  const parts: Int32Array[] = [];
  let evals = 0;
  let bits = 0;
  for (let t = 0; t < 4; t++) {
    const part = points.subarray(Math.floor((t * n) / 4), Math.floor(((t + 1) * n) / 4));
    if (part.length === 0) continue;
    const r = compress(part, kernel, oversampling, delta, derive(seed, t));
    parts.push(r.kept);
    evals += r.kernelEvaluations;
    bits += r.randomBits;
  }
  let total = 0;
  for (const p of parts) total += p.length;
  const joined = new Int32Array(total - (total % 2));
  let o = 0;
  for (const p of parts) for (let i = 0; i < p.length && o < joined.length; i++) joined[o++] = p[i];
  const h = kernelHalving(joined, kernel, delta, derive(seed, "halve"));
  return { kept: h.kept, kernelEvaluations: evals + h.kernelEvaluations, randomBits: bits + h.randomBits };
}
