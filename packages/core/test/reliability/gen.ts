// Argument generators for the reliability property suites (issue #6, "Bad input, everywhere
// public"). Each generator mixes valid values, edge cases (0 and 1 rows, huge and tiny scales) and
// bad values (NaN/±Inf entries, wrong shapes, non-Matrix arguments, non-integer counts), so one
// fast-check run of an entry throws all of them at the function under test.
import fc from "fast-check";
import { Matrix } from "@randattn/core";

/** Entry scales: 1 (most), the extremes of issue #6 (1e-300, 1e-8, 1e4, 1e150). */
export const SCALES = [1, 1e-300, 1e-8, 1e4, 1e150] as const;

/** A scale: usually 1, otherwise one of the extremes. */
export const scaleArb: fc.Arbitrary<number> = fc.oneof(
  { weight: 6, arbitrary: fc.constant(1) },
  { weight: 4, arbitrary: fc.constantFrom(...SCALES.slice(1)) },
);

/** A moderate scale only (inputs that go through several products, e.g. weights). */
export const mildScaleArb: fc.Arbitrary<number> = fc.oneof(
  { weight: 6, arbitrary: fc.constant(1) },
  { weight: 2, arbitrary: fc.constantFrom(1e-8, 1e-3, 30) },
);

/** A dimension with its edge cases: 0 and 1 often, otherwise 2…max. */
export function dimArb(max = 6, min = 0): fc.Arbitrary<number> {
  const parts: fc.WeightedArbitrary<number>[] = [];
  if (min <= 0) parts.push({ weight: 1, arbitrary: fc.constant(0) });
  if (min <= 1) parts.push({ weight: 2, arbitrary: fc.constant(1) });
  parts.push({ weight: 6, arbitrary: fc.integer({ min: Math.max(2, min), max: Math.max(2, min, max) }) });
  return fc.oneof(...parts);
}

/** A small positive dimension (≥ 1), used where the first failure should not always be "empty". */
export const posDimArb = (max = 6): fc.Arbitrary<number> => dimArb(max, 1);

/** Deterministic Gaussian-ish entries from a 32-bit seed (mulberry32 + Box–Muller). */
export function seededEntries(n: number, seed: number, scale: number): Float64Array {
  let s = seed >>> 0;
  const next = (): number => {
    s = (s + 0x6d2b79f5) >>> 0;
    let t = s;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
  const out = new Float64Array(n);
  for (let i = 0; i < n; i++) {
    const u = 1 - next();
    const v = next();
    out[i] = scale * Math.sqrt(-2 * Math.log(u)) * Math.cos(2 * Math.PI * v);
  }
  return out;
}

/** A poison value to plant in an otherwise finite matrix. */
export type Poison = "none" | "nan" | "inf" | "-inf";
const POISON_VALUE: Record<Exclude<Poison, "none">, number> = {
  nan: Number.NaN,
  inf: Number.POSITIVE_INFINITY,
  "-inf": Number.NEGATIVE_INFINITY,
};

/** Usually "none"; NaN/±Inf with probability ≈ `p`. */
export function poisonArb(p = 0.1): fc.Arbitrary<Poison> {
  const w = Math.max(1, Math.round((1 - p) / p));
  return fc.oneof(
    { weight: w * 3, arbitrary: fc.constant<Poison>("none") },
    { weight: 3, arbitrary: fc.constantFrom<Poison>("nan", "inf", "-inf") },
  );
}

/** Build a rows×cols matrix of seeded entries times `scale`, with an optional poisoned entry. */
export function makeMatrix(rows: number, cols: number, seed: number, scale = 1, poison: Poison = "none"): Matrix {
  const m = new Matrix(rows, cols, seededEntries(rows * cols, seed, scale));
  if (poison !== "none" && m.data.length > 0) m.data[seed % m.data.length] = POISON_VALUE[poison];
  return m;
}

export interface MatrixArbOptions {
  /** Entry scale generator. @default scaleArb */
  scale?: fc.Arbitrary<number>;
  /** Probability of a NaN/±Inf entry. @default 0.1 */
  poison?: number;
}

/** A finite-or-poisoned matrix of exactly rows × cols. */
export function matrixArb(rows: number, cols: number, opts: MatrixArbOptions = {}): fc.Arbitrary<Matrix> {
  return fc
    .record({ seed: fc.nat(), scale: opts.scale ?? scaleArb, poison: poisonArb(opts.poison ?? 0.1) })
    .map(({ seed, scale, poison }) => makeMatrix(rows, cols, seed, scale, poison));
}

/** Values that are not a Matrix at all. */
export const nonMatrixArb: fc.Arbitrary<unknown> = fc.constantFrom<unknown>(
  null,
  undefined,
  "matrix",
  42,
  [
    [1, 2],
    [3, 4],
  ],
  {},
  { rows: 2, cols: 2, data: [1, 2, 3, 4] },
  new Float64Array(4),
);

/**
 * A matrix argument: mostly the right shape (finite, or poisoned with probability `poison`),
 * sometimes a wrong shape, sometimes not a Matrix.
 */
export function matArg(rows: number, cols: number, opts: MatrixArbOptions & { bad?: number } = {}): fc.Arbitrary<unknown> {
  // weights are integers: `bad` 1 = one bad value in 14, 0.25 = one in 50
  const good = Math.round(12 / Math.min(1, opts.bad ?? 1));
  const bad = 1;
  return fc.oneof(
    { weight: good, arbitrary: matrixArb(rows, cols, opts) },
    {
      weight: bad,
      arbitrary: fc
        .tuple(fc.integer({ min: 0, max: 7 }), fc.integer({ min: 0, max: 7 }), fc.nat())
        .filter(([r, c]) => r !== rows || c !== cols)
        .map(([r, c, s]) => makeMatrix(r, c, s)),
    },
    { weight: bad, arbitrary: nonMatrixArb },
  );
}

/** Bad integer-parameter values (heads, groups, ranks, sample counts, features…). */
export const badIntArb: fc.Arbitrary<unknown> = fc.constantFrom<unknown>(
  0,
  -1,
  -7,
  1.5,
  0.5,
  Number.NaN,
  Number.POSITIVE_INFINITY,
  Number.NEGATIVE_INFINITY,
  1e20,
  2 ** 53,
  "3",
  null,
  undefined,
  true,
);

/** An integer argument in [min, max], replaced by a bad value with weight `bad` (of 10). */
export function intArg(min: number, max: number, bad = 1): fc.Arbitrary<unknown> {
  return fc.oneof({ weight: 10, arbitrary: fc.integer({ min, max }) }, { weight: bad, arbitrary: badIntArb });
}

/** Bad real-parameter values (scales, tolerances, epsilons…). */
export const badNumberArb: fc.Arbitrary<unknown> = fc.constantFrom<unknown>(
  0,
  -1,
  -1e-300,
  Number.NaN,
  Number.POSITIVE_INFINITY,
  Number.NEGATIVE_INFINITY,
  "1",
  null,
  1e308,
);

/** A positive real argument from `good`, sometimes bad. */
export function numArg(good: fc.Arbitrary<number>, bad = 1): fc.Arbitrary<unknown> {
  return fc.oneof({ weight: 10, arbitrary: good }, { weight: bad, arbitrary: badNumberArb });
}

/** A string-mode argument: one of `modes`, sometimes an unknown string or a non-string. */
export function modeArg<T extends string>(modes: readonly T[], bad = 1, allowUndefined = true): fc.Arbitrary<unknown> {
  const good: fc.Arbitrary<unknown> = allowUndefined ? fc.constantFrom<unknown>(undefined, ...modes) : fc.constantFrom<unknown>(...modes);
  return fc.oneof({ weight: 10, arbitrary: good }, { weight: bad, arbitrary: fc.constantFrom<unknown>("bogus", "", 3, null) });
}

/** A seed key: usually valid, sometimes empty/invalid. */
export const seedArb: fc.Arbitrary<unknown> = fc.oneof(
  { weight: 12, arbitrary: fc.tuple(fc.nat(1000), fc.constantFrom("a", "b", "rel")) },
  { weight: 1, arbitrary: fc.constantFrom<unknown>([], null, undefined, "seed", [Number.NaN], [{}]) },
);

/**
 * A probability vector of length n: valid (normalized), or one of the bad kinds —
 * not summing to 1, a negative entry, NaN/Inf, all zero, entries underflowing to 0 (a few
 * subnormal entries next to mass-carrying ones), wrong length, empty, not an array.
 */
export type ProbabilityKind =
  | "valid"
  | "underflow"
  | "unnormalized"
  | "negative"
  | "nan"
  | "inf"
  | "zeros"
  | "wrong-length"
  | "empty"
  | "not-array";

export function probabilityArb(n: number, badWeight = 1): fc.Arbitrary<{ kind: ProbabilityKind; p: unknown }> {
  const kind = fc.oneof(
    { weight: 8, arbitrary: fc.constant<ProbabilityKind>("valid") },
    { weight: 3, arbitrary: fc.constant<ProbabilityKind>("underflow") },
    {
      weight: badWeight * 8,
      arbitrary: fc.constantFrom<ProbabilityKind>("unnormalized", "negative", "nan", "inf", "zeros", "wrong-length", "empty", "not-array"),
    },
  );
  return fc.tuple(kind, fc.nat()).map(([k, seed]) => ({ kind: k, p: makeProbabilities(n, k, seed) }));
}

/** A probability vector of the requested kind (length n unless the kind says otherwise). */
export function makeProbabilities(n: number, kind: ProbabilityKind, seed: number): unknown {
  const w = seededEntries(n, seed, 1).map((x) => x * x + 1e-3);
  if (kind === "underflow") {
    // Most entries underflow to (sub)normal dust; at least one carries the mass.
    for (let i = 0; i < n; i++) if (i % 2 === 1 || (seed + i) % 3 === 0) w[i] = i % 4 === 1 ? 0 : 5e-324;
    w[seed % Math.max(1, n)] = 1;
  }
  let s = 0;
  for (const x of w) s += x;
  const p = w.map((x) => x / s);
  switch (kind) {
    case "valid":
    case "underflow":
      return p;
    case "unnormalized":
      return p.map((x) => 2 * x + 0.01);
    case "negative":
      if (n > 0) p[seed % n] = -0.25;
      return p;
    case "nan":
      if (n > 0) p[seed % n] = Number.NaN;
      return p;
    case "inf":
      if (n > 0) p[seed % n] = Number.POSITIVE_INFINITY;
      return p;
    case "zeros":
      return new Float64Array(n);
    case "wrong-length":
      return Float64Array.from({ length: n + 1 }, () => 1 / (n + 1));
    case "empty":
      return new Float64Array(0);
    case "not-array":
      return seed % 2 === 0 ? null : "0.5,0.5";
  }
}

/** An optional-options argument: `undefined`, or a record drawn from `rec`. */
export function optionsArg<T>(rec: fc.Arbitrary<T>): fc.Arbitrary<T | undefined> {
  return fc.oneof({ weight: 1, arbitrary: fc.constant(undefined) }, { weight: 3, arbitrary: rec });
}
