/**
 * Positional encodings added to token embeddings (§1 of Serret (2026): "positional or feature
 * embeddings … can be applied to the sequence of token embedding vectors"): the fixed sinusoidal
 * encoding of Vaswani et al. (2017, §3.5) and a learned (here: seeded random) table.
 */
import { ShapeError, ValueError } from "../errors.js";
import { Matrix } from "../matrix.js";
import type { SeedKey } from "../random/stream.js";
import { assertFinite, assertInteger, assertMatrix, assertNumber, describe, assertOptions } from "../validate.js";
import { Embedding, type InitEmbeddingOptions, initEmbedding } from "./embedding.js";

export interface SinusoidalOptions {
  /** The base of the frequencies 1/base^{2i/d}. @default 10000 */
  base?: number;
  /** Position of the first row (row p encodes position offset + p). @default 0 */
  offset?: number;
}

/**
 * The sinusoidal encoding PE ∈ R^{numPositions×dim} of Vaswani et al. (2017):
 * PE[p, 2i] = sin(p / base^{2i/d}), PE[p, 2i+1] = cos(p / base^{2i/d}). An odd `dim` ends with a
 * sine column.
 */
export function sinusoidalPositionalEncoding(numPositions: number, dim: number, options: SinusoidalOptions = {}): Matrix {
  assertOptions(options, "options");
  assertInteger(numPositions, "numPositions", 0);
  assertInteger(dim, "dim");
  const base = options.base ?? 10000;
  assertNumber(base, "options.base", { positive: true });
  const offset = options.offset ?? 0;
  assertInteger(offset, "options.offset", 0);
  const pe = new Matrix(numPositions, dim);
  const d = pe.data;
  // Frequencies once per column pair: ω_i = base^{−2i/d}.
  const pairs = Math.ceil(dim / 2);
  const omega = new Float64Array(pairs);
  for (let i = 0; i < pairs; i++) omega[i] = base ** (-(2 * i) / dim);
  for (let p = 0; p < numPositions; p++) {
    const pos = offset + p;
    const row = p * dim;
    for (let i = 0; i < pairs; i++) {
      const angle = pos * omega[i];
      d[row + 2 * i] = Math.sin(angle);
      if (2 * i + 1 < dim) d[row + 2 * i + 1] = Math.cos(angle);
    }
  }
  return pe;
}

/**
 * A learned positional embedding P ∈ R^{maxPositions×dim}: an `Embedding` indexed by position,
 * initialised from `seed` (trained weights would be loaded into an `Embedding` instead).
 */
export function initLearnedPositionalEmbedding(maxPositions: number, dim: number, options: InitEmbeddingOptions, seed: SeedKey): Embedding {
  assertInteger(maxPositions, "maxPositions");
  return initEmbedding(maxPositions, dim, options, seed);
}

export interface AddPositionalOptions {
  /** Position of the first row of x (e.g. the cache length when decoding). @default 0 */
  offset?: number;
}

/**
 * X + P[offset : offset + N]: adds the positional rows for positions offset, …, offset + N − 1 to
 * the N rows of x. Returns a new matrix.
 * @throws ShapeError when the widths differ or the table has fewer than offset + N rows.
 */
export function addPositional(x: Matrix, positional: Matrix | Embedding, options: AddPositionalOptions = {}): Matrix {
  assertOptions(options, "options");
  assertMatrix(x, "x");
  const table = positional instanceof Embedding ? positional.table : positional;
  assertMatrix(table, "positional");
  const offset = options.offset ?? 0;
  assertInteger(offset, "options.offset", 0);
  if (table.cols !== x.cols) throw new ShapeError("positional", `${offset + x.rows}×${x.cols} (cols = x.cols)`, table.shape);
  if (table.rows < offset + x.rows) {
    throw new ShapeError("positional", `at least ${offset + x.rows} rows (offset ${offset} + ${x.rows} positions)`, table.shape);
  }
  assertFinite(x, "x");
  const out = new Matrix(x.rows, x.cols);
  const o = out.data;
  const a = x.data;
  const p = table.data;
  const start = offset * x.cols;
  for (let i = 0; i < a.length; i++) o[i] = a[i] + p[start + i];
  assertFinite(out, "positional");
  return out;
}

export interface EmbedTokensOptions extends AddPositionalOptions {
  /** Positional encoding added after the lookup (a sinusoidal matrix or a learned table). @default none */
  positional?: Matrix | Embedding;
  /** Factor applied to the token embeddings before adding positions (Vaswani et al. use √d). @default 1 */
  scale?: number;
}

/** X = scale · E[ids] (+ P[offset : offset + N]): the input of the first layer (§1, Figure 2). */
export function embedTokens(ids: ArrayLike<number>, embedding: Embedding, options: EmbedTokensOptions = {}): Matrix {
  assertOptions(options, "options");
  if (!(embedding instanceof Embedding)) throw new ValueError("embedding", "an Embedding", describe(embedding));
  const scale = options.scale ?? 1;
  assertNumber(scale, "options.scale");
  const x = embedding.lookup(ids);
  if (scale !== 1) for (let i = 0; i < x.data.length; i++) x.data[i] *= scale;
  return options.positional === undefined ? x : addPositional(x, options.positional, { offset: options.offset });
}
