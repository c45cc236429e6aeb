/**
 * Seeded random streams. Every random draw in RandAttn is a pure function of
 * (root seed, purpose): the stream for a purpose is seedrandom's `xor4096` generator keyed by the
 * canonical string of `[rootSeed, ...purpose]`. So results never depend on evaluation order,
 * worker count or which other methods ran first, and no function mutates a stream it is given —
 * functions take a `SeedKey` and open their own stream.
 */
import seedrandom from "seedrandom";
import { ValueError } from "../errors.js";

/** One component of a purpose path: a name or an index. */
export type SeedPart = string | number;
/** A root seed plus the purpose path, e.g. `[42, "sketch", "gaussian", 3]`. */
export type SeedKey = readonly [SeedPart, ...SeedPart[]];

/** Canonical string of a seed key (stable across runs and platforms). */
export function seedString(key: readonly SeedPart[]): string {
  if (!Array.isArray(key)) {
    const actual = key === null ? "null" : typeof key === "string" ? JSON.stringify(key) : typeof key;
    throw new ValueError("seed", "a SeedKey array [rootSeed, ...purpose]", actual);
  }
  if (key.length === 0) throw new ValueError("seed", "a root seed", "an empty key");
  for (const [i, part] of key.entries()) {
    if (typeof part === "number" ? !Number.isFinite(part) : typeof part !== "string") {
      throw new ValueError(`seed[${i}]`, "a string or finite number", String(part));
    }
  }
  return JSON.stringify(key);
}

/** Extends a key with more purpose: `derive([42, "sketch"], "trial", 3)` = `[42, "sketch", "trial", 3]`. */
export function derive(key: SeedKey, ...purpose: SeedPart[]): SeedKey {
  // validate here too: a bad key must fail naming "seed", not as "key is not iterable" below
  seedString(key);
  return [...key, ...purpose] as unknown as SeedKey;
}

/**
 * A random stream. Owned by whoever opened it; it is never passed into library functions
 * (they take `SeedKey`s), so no caller's state is mutated behind its back.
 */
export class RandomStream {
  readonly key: string;
  private readonly prng: seedrandom.PRNG;
  private spare: number | null = null;

  constructor(key: SeedKey | readonly SeedPart[]) {
    this.key = seedString(key);
    this.prng = seedrandom.xor4096(this.key);
  }

  /** Uniform on [0, 1) with 53 bits of randomness. */
  uniform(): number {
    return this.prng.double();
  }

  /** Uniform on (0, 1): never exactly 0 (safe for log). */
  uniformOpen(): number {
    let u = this.prng.double();
    while (u === 0) u = this.prng.double();
    return u;
  }

  /** Standard normal by the Box–Muller transform (pairs cached). */
  gaussian(): number {
    if (this.spare !== null) {
      const s = this.spare;
      this.spare = null;
      return s;
    }
    const u = this.uniformOpen();
    const v = this.prng.double();
    const r = Math.sqrt(-2 * Math.log(u));
    this.spare = r * Math.sin(2 * Math.PI * v);
    return r * Math.cos(2 * Math.PI * v);
  }

  /** ±1 with equal probability. */
  sign(): number {
    return this.prng.int32() < 0 ? -1 : 1;
  }

  /** Uniform integer in [0, n). */
  int(n: number): number {
    if (!Number.isInteger(n) || n <= 0) throw new ValueError("n", "an integer ≥ 1", String(n));
    return Math.floor(this.prng.double() * n);
  }

  /** Fills `out` with i.i.d. N(0, σ²). */
  fillGaussian(out: Float64Array, sigma = 1): Float64Array {
    for (let i = 0; i < out.length; i++) out[i] = sigma * this.gaussian();
    return out;
  }
}

/** Opens the stream for `(root seed, ...purpose)`. */
export function streamFor(...key: SeedKey): RandomStream {
  return new RandomStream(key);
}
