/**
 * Token embeddings (§1 of Serret (2026)): E ∈ R^{N_T×d}; the d-dimensional vector of token T_i is
 * the row E_i, so embedding a sequence of ids is row selection.
 */
import { ValueError } from "../errors.js";
import { Matrix } from "../matrix.js";
import { randomMatrix } from "../random/init.js";
import type { SeedKey } from "../random/stream.js";
import {
  assertFinite,
  assertInteger,
  assertMatrix,
  assertNonEmpty,
  assertNumber,
  describe,
  assertOptions,
  assertRequiredOptions,
} from "../validate.js";

export interface EmbeddingOptions {
  /** Accept NaN/±Inf entries in the table. @default false */
  allowNonFinite?: boolean;
}

/** An embedding table E ∈ R^{N_T×d} (wrapped, not copied). */
export class Embedding {
  /** E, N_T × d. */
  readonly table: Matrix;

  /**
   * @param table E with one row per token (N_T ≥ 1 rows, d ≥ 1 columns).
   * @throws ShapeError for a non-Matrix or empty table; NonFiniteError for NaN/±Inf entries.
   */
  constructor(table: Matrix, options: EmbeddingOptions = {}) {
    assertOptions(options, "options");
    assertMatrix(table, "table");
    assertNonEmpty(table, "table");
    if (!options.allowNonFinite) assertFinite(table, "table");
    this.table = table;
  }

  /** N_T, the number of rows. */
  get vocabSize(): number {
    return this.table.rows;
  }

  /** d, the embedding dimension. */
  get dim(): number {
    return this.table.cols;
  }

  /**
   * The rows E_{ids[0]}, E_{ids[1]}, … as a new ids.length × d matrix.
   * @throws ValueError naming `ids[i]` for an id that is not an integer in [0, N_T − 1].
   */
  lookup(ids: ArrayLike<number>): Matrix {
    if (ids === null || typeof ids !== "object" || typeof ids.length !== "number")
      throw new ValueError("ids", "an array of token ids", describe(ids));
    const n = this.table.rows;
    const d = this.table.cols;
    const src = this.table.data;
    const out = new Matrix(ids.length, d);
    for (let i = 0; i < ids.length; i++) {
      const id = ids[i];
      if (!Number.isInteger(id) || id < 0 || id >= n) {
        throw new ValueError(`ids[${i}]`, `an integer token id in [0, ${n - 1}] (vocabSize = ${n})`, describe(id));
      }
      out.data.set(src.subarray(id * d, id * d + d), i * d);
    }
    return out;
  }
}

export interface InitEmbeddingOptions {
  /**
   * Standard deviation of the N(0, std²) entries. 1 gives unit-variance coordinates, the regime
   * in which §2.1's 1/√d_QK scaling keeps the logits at unit variance. @default 1
   */
  std?: number;
}

/** A seeded random embedding table of `vocabSize` × `dim` with i.i.d. N(0, std²) entries. */
export function initEmbedding(vocabSize: number, dim: number, options: InitEmbeddingOptions, seed: SeedKey): Embedding {
  assertRequiredOptions(options, "options");
  assertInteger(vocabSize, "vocabSize");
  assertInteger(dim, "dim");
  const std = options.std ?? 1;
  assertNumber(std, "options.std", { positive: true });
  return new Embedding(randomMatrix(vocabSize, dim, { distribution: "gaussian", scale: std }, seed));
}
