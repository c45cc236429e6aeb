/**
 * Seeded random matrices and weight initialisation. Each matrix is drawn from its own stream
 * `(root seed, ...purpose)`, so adding a weight to a model never changes the others.
 */
import { ValueError } from "../errors.js";
import { Matrix } from "../matrix.js";
import { assertInteger, assertNumber, assertOneOf, assertRequiredOptions } from "../validate.js";
import { type SeedKey, RandomStream } from "./stream.js";

/** How the entries of a random matrix are drawn. */
export type EntryDistribution = "gaussian" | "uniform" | "rademacher";
const ENTRY_DISTRIBUTIONS: readonly EntryDistribution[] = ["gaussian", "uniform", "rademacher"];

export interface RandomMatrixOptions {
  /** Entry distribution. @default "gaussian" */
  distribution?: EntryDistribution;
  /** Standard deviation (gaussian), half-width (uniform on [−scale, scale]) or magnitude (rademacher). @default 1 */
  scale?: number;
}

/**
 * A rows × cols matrix with i.i.d. entries from the stream for `seed`.
 * @example
 * ```ts
 * import { randomMatrix } from "@randattn/core";
 *
 * // Every draw is a pure function of its seed key [rootSeed, ...purpose].
 * const a = randomMatrix(2, 3, {}, [42, "weights", 0]);
 * const b = randomMatrix(2, 3, {}, [42, "weights", 0]);
 * console.log(a.data.every((x, i) => x === b.data[i])); // true
 * ```
 */
export function randomMatrix(rows: number, cols: number, options: RandomMatrixOptions, seed: SeedKey): Matrix {
  assertRequiredOptions(options, "options");
  assertInteger(rows, "rows", 0);
  assertInteger(cols, "cols", 0);
  const scale = options.scale ?? 1;
  assertNumber(scale, "scale");
  // an unknown distribution used to fall through the switch and return a silent zero matrix
  const distribution = options.distribution ?? "gaussian";
  assertOneOf(distribution, "options.distribution", ENTRY_DISTRIBUTIONS);
  // Box–Muller on a 53-bit uniform gives |z| ≤ √(−2 ln 2⁻⁵³) ≈ 8.6: a scale whose 9-fold overflows
  // would produce ±∞ entries — refused (issue #6; uniform and rademacher entries are ≤ |scale|).
  if (distribution === "gaussian" && 9 * Math.abs(scale) > Number.MAX_VALUE) {
    throw new ValueError("options.scale", `|scale| ≤ ${Number.MAX_VALUE / 9} (gaussian entries stay finite)`, String(scale));
  }
  const rng = new RandomStream(seed);
  const m = new Matrix(rows, cols);
  const d = m.data;
  switch (distribution) {
    case "gaussian":
      for (let i = 0; i < d.length; i++) d[i] = scale * rng.gaussian();
      break;
    case "uniform":
      for (let i = 0; i < d.length; i++) d[i] = scale * (2 * rng.uniform() - 1);
      break;
    case "rademacher":
      for (let i = 0; i < d.length; i++) d[i] = scale * rng.sign();
      break;
  }
  return m;
}

/** Options of {@link initWeight}. */
export interface InitWeightOptions {
  /** Multiplier of the standard deviation 1/√fanIn. @default 1 */
  gain?: number;
}

/**
 * A weight matrix W ∈ R^{fanIn×fanOut} with entries N(0, 1/fanIn) (LeCun normal), so x W keeps
 * unit variance for unit-variance x — the regime §2.1's 1/√d_QK scaling assumes.
 */
export function initWeight(fanIn: number, fanOut: number, options: InitWeightOptions, seed: SeedKey): Matrix {
  assertRequiredOptions(options, "options");
  assertInteger(fanIn, "fanIn");
  const gain = options.gain ?? 1;
  return randomMatrix(fanIn, fanOut, { scale: gain / Math.sqrt(fanIn) }, seed);
}
