/**
 * Elementary samplers on core's seeded streams. Every function takes a `SeedKey` and opens its own
 * stream (`new RandomStream(seed)`), so each draw is a pure function of (root seed, purpose) and
 * never depends on what ran before (docs/ARCHITECTURE.md, "Randomness").
 */
import { RandomStream, type SeedKey, ValueError } from "@randattn/core";
import { assertInteger, assertNumber, assertRequiredOptions } from "@randattn/core/internal";

/** Options of {@link gaussianArray}. */
export interface GaussianOptions {
  /** Mean μ. @default 0 */
  mean?: number;
  /** Standard deviation σ ≥ 0. @default 1 */
  std?: number;
}

/** `length` i.i.d. N(μ, σ²) draws (Box–Muller, as core's `RandomStream.gaussian`). */
export function gaussianArray(length: number, options: GaussianOptions, seed: SeedKey): Float64Array {
  assertRequiredOptions(options, "options");
  assertInteger(length, "length", 0);
  const mean = options.mean ?? 0;
  const std = options.std ?? 1;
  assertNumber(mean, "options.mean");
  assertNumber(std, "options.std", { min: 0 });
  // Box–Muller on a 53-bit uniform gives |z| ≤ √(−2 ln 2⁻⁵³) ≈ 8.6: require the extreme sample to
  // be representable, so a huge std is refused instead of producing ±∞ (issue #6).
  if (Math.abs(mean) + 9 * std > Number.MAX_VALUE) {
    throw new ValueError("options.std", `|mean| + 9·std ≤ ${Number.MAX_VALUE} (samples stay finite)`, `mean ${mean}, std ${std}`);
  }
  const rng = new RandomStream(seed);
  const out = new Float64Array(length);
  for (let i = 0; i < length; i++) out[i] = mean + std * rng.gaussian();
  return out;
}

/** Options of {@link rademacherArray}. */
export interface RademacherOptions {
  /** Magnitude c > 0 of the ±c values. @default 1 */
  magnitude?: number;
}

/** `length` i.i.d. Rademacher draws: ±c with probability ½ each. */
export function rademacherArray(length: number, options: RademacherOptions, seed: SeedKey): Float64Array {
  assertRequiredOptions(options, "options");
  assertInteger(length, "length", 0);
  const c = options.magnitude ?? 1;
  assertNumber(c, "options.magnitude", { positive: true });
  const rng = new RandomStream(seed);
  const out = new Float64Array(length);
  for (let i = 0; i < length; i++) out[i] = c * rng.sign();
  return out;
}

/** Options of {@link uniformArray}. */
export interface UniformOptions {
  /** Lower end (inclusive). @default 0 */
  low?: number;
  /** Upper end (exclusive), > low. @default 1 */
  high?: number;
}

/** `length` i.i.d. uniform draws on [low, high). */
export function uniformArray(length: number, options: UniformOptions, seed: SeedKey): Float64Array {
  assertRequiredOptions(options, "options");
  assertInteger(length, "length", 0);
  const low = options.low ?? 0;
  const high = options.high ?? 1;
  assertNumber(low, "options.low");
  assertNumber(high, "options.high");
  if (!(high > low)) throw new ValueError("options.high", `a number > options.low = ${low}`, String(high));
  const rng = new RandomStream(seed);
  const out = new Float64Array(length);
  const w = high - low;
  if (!Number.isFinite(w)) throw new ValueError("options.high", `high − low ≤ ${Number.MAX_VALUE}`, `low ${low}, high ${high}`);
  for (let i = 0; i < length; i++) out[i] = low + w * rng.uniform();
  return out;
}

/** Options of {@link uniformIntegers}. */
export interface UniformIntegersOptions {
  /** Exclusive upper end of the integers, 1 ≤ upper < 2³¹. */
  upper: number;
}

/** `length` i.i.d. uniform integers in [0, upper) (with replacement). */
export function uniformIntegers(length: number, options: UniformIntegersOptions, seed: SeedKey): Int32Array {
  assertRequiredOptions(options, "options");
  assertInteger(length, "length", 0);
  const upper = options.upper;
  assertInteger(upper, "options.upper", 1, 2 ** 31 - 1);
  const rng = new RandomStream(seed);
  const out = new Int32Array(length);
  for (let i = 0; i < length; i++) out[i] = rng.int(upper);
  return out;
}

/** Options of the samplers that draw a fixed number of indices. */
export interface SubsetOptions {
  /** How many indices to draw. */
  count: number;
}

/**
 * `count` distinct integers drawn uniformly from [0, n) without replacement, in draw order
 * (a uniformly random ordered subset): the first `count` steps of a Fisher–Yates shuffle, with
 * the swaps kept in a map when count ≪ n (O(count) memory). Every ordered subset is equally likely.
 */
export function uniformSubset(n: number, options: SubsetOptions, seed: SeedKey): Int32Array {
  assertRequiredOptions(options, "options");
  assertInteger(n, "n", 0, 2 ** 31 - 1);
  const count = options.count;
  assertInteger(count, "options.count", 0, n);
  const rng = new RandomStream(seed);
  const out = new Int32Array(count);
  if (count * 4 >= n) {
    const perm = new Int32Array(n);
    for (let i = 0; i < n; i++) perm[i] = i;
    for (let i = 0; i < count; i++) {
      const j = i + rng.int(n - i);
      const t = perm[i];
      perm[i] = perm[j];
      perm[j] = t;
      out[i] = perm[i];
    }
    return out;
  }
  // Sparse partial Fisher–Yates: the swaps are kept in a map, so memory is O(count) for huge n.
  const swapped = new Map<number, number>();
  for (let i = 0; i < count; i++) {
    const j = i + rng.int(n - i);
    const vi = swapped.get(i) ?? i;
    const vj = swapped.get(j) ?? j;
    swapped.set(j, vi);
    out[i] = vj;
  }
  return out;
}

/** A uniformly random permutation of [0, n) (Fisher–Yates). */
export function randomPermutation(n: number, seed: SeedKey): Int32Array {
  assertInteger(n, "n", 0, 2 ** 31 - 1);
  return uniformSubset(n, { count: n }, seed);
}
