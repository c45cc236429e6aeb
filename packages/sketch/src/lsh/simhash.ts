/**
 * SimHash (Charikar 2002) and sortLSH (Han et al., "HyperAttention", ICLR 2024, §3 Algorithm 1).
 *
 * SimHash with r random hyperplanes g₁…g_r ~ N(0, I_d): bit b of h(x) is 1 when ⟨g_b, x⟩ ≥ 0.
 * Two vectors at angle θ agree on a bit with probability 1 − θ/π, so large ⟨q, k⟩ (for comparable
 * norms) means likely collisions — the entries of A = exp(QKᵀ) that sortLSH is after.
 *
 * sortLSH: the 2^r buckets are ordered along the reflected Gray code, so neighbouring buckets differ
 * in exactly one bit ("Hamming sorted"); queries and keys are each sorted by that order (a stable
 * counting sort, O(N + 2^r)), and the sorted sequences are cut into the same number of consecutive
 * blocks. Query i and key j are "large" (M^H_ij = 1) when they land in the same block: after the two
 * permutations M^H is block diagonal. With N_Q = N_KV = n and block size b the blocks are b × b; for
 * N_Q ≠ N_KV both sequences are cut into ⌈N_Q/b⌉ blocks of proportional length.
 *
 * Cost conventions used across lsh/, hyper/, kdeformer/, scatterbrain/: a multiply-add is 2 flops,
 * an exp or division 1; `hashes` counts bucket ids computed (core's Cost: one per vector per hash
 * function — N_Q + N_KV for one r-bit SimHash, whose r dot products are in `flops`); `randomBits`
 * counts 64 bits per random double drawn (the r·d Gaussian entries of the hyperplanes here).
 */
import { Matrix, type SeedKey, ShapeError, derive, randomMatrix } from "@randattn/core";
import { assertFinite, assertInteger, assertMatrix, assertShape } from "@randattn/core/internal";

/** Largest number of hash bits (2^r buckets are counted in an Int32Array). */
export const MAX_HASH_BITS = 24;

/**
 * Draws r hyperplanes (r × d, i.i.d. N(0, 1) entries) from `derive(seed, "simhash")`.
 * @throws ValueError when r is not an integer in [0, MAX_HASH_BITS] or d < 1.
 */
export function drawHyperplanes(numBits: number, dim: number, seed: SeedKey): Matrix {
  assertInteger(numBits, "numBits", 0, MAX_HASH_BITS);
  assertInteger(dim, "dim", 1);
  if (numBits === 0) return new Matrix(0, dim);
  return randomMatrix(numBits, dim, {}, derive(seed, "simhash"));
}

/** SimHash codes of the rows of x: bit b = [⟨g_b, x_i⟩ ≥ 0]. */
export function simHash(x: Matrix, planes: Matrix): Int32Array {
  assertMatrix(x, "x");
  assertMatrix(planes, "planes");
  if (planes.cols !== x.cols) throw new ShapeError("planes", `*×${x.cols} (cols = x.cols)`, planes.shape);
  if (planes.rows > MAX_HASH_BITS) throw new ShapeError("planes", `at most ${MAX_HASH_BITS} rows`, planes.shape);
  const n = x.rows;
  const d = x.cols;
  const r = planes.rows;
  const codes = new Int32Array(n);
  for (let i = 0; i < n; i++) {
    let code = 0;
    for (let b = 0; b < r; b++) {
      let s = 0;
      for (let t = 0; t < d; t++) s += planes.data[b * d + t] * x.data[i * d + t];
      if (s >= 0) code |= 1 << b;
    }
    codes[i] = code;
  }
  return codes;
}

/** Position of `code` in the reflected Gray sequence g(i) = i ⊕ (i ≫ 1) (the inverse Gray map). */
export function grayRank(code: number): number {
  let i = code;
  for (let shift = 1; shift < 32; shift <<= 1) i ^= i >> shift;
  return i;
}

/** Stable counting sort of indices 0…n−1 by key (keys in [0, buckets)). */
export function bucketSort(keys: Int32Array, buckets: number): Int32Array {
  const count = new Int32Array(buckets + 1);
  for (let i = 0; i < keys.length; i++) count[keys[i] + 1]++;
  for (let b = 0; b < buckets; b++) count[b + 1] += count[b];
  const order = new Int32Array(keys.length);
  for (let i = 0; i < keys.length; i++) order[count[keys[i]]++] = i;
  return order;
}

/** Options of {@link sortLsh}. */
export interface SortLshOptions {
  /** r, the number of SimHash bits (2^r buckets). @default 7 (HyperAttention's reference setting) */
  numBits?: number;
  /** b, queries per block of the block-diagonal mask. @default 64 */
  blockSize?: number;
  /** Precomputed hyperplanes (r × d) instead of drawing them from the seed (fixes the mask across draws). @default drawn */
  planes?: Matrix;
}

/** The sortLSH mask M^H in factored form. */
export interface SortLshResult {
  /** Block of each query (0 … numBlocks − 1). */
  queryBlock: Int32Array;
  /** Block of each key. */
  keyBlock: Int32Array;
  /** Queries in sorted order (so block c is the queries queryOrder[qStart[c] … qStart[c+1]−1]). */
  queryOrder: Int32Array;
  /** Keys in sorted order. */
  keyOrder: Int32Array;
  /** Block boundaries in queryOrder (length numBlocks + 1). */
  queryStart: Int32Array;
  /** Block boundaries in keyOrder (length numBlocks + 1). */
  keyStart: Int32Array;
  numBlocks: number;
  /** The hyperplanes used (r × d). */
  planes: Matrix;
  /** Hashing and sorting work: flops, bucket ids, random bits. */
  cost: { flops: number; floatsStored: number; hashes: number; randomBits: number };
}

/**
 * sortLSH (module comment): hashes queries and keys with the same hyperplanes, sorts both by the
 * Gray rank of their bucket and cuts both orders into ⌈N_Q/b⌉ blocks.
 * @throws ShapeError on mismatched shapes; ValueError on bad sizes.
 */
export function sortLsh(queries: Matrix, keys: Matrix, options: SortLshOptions, seed: SeedKey): SortLshResult {
  assertMatrix(queries, "queries");
  assertMatrix(keys, "keys");
  if (keys.cols !== queries.cols) throw new ShapeError("keys", `*×${queries.cols} (cols = queries.cols)`, keys.shape);
  const numBits = options.numBits ?? options.planes?.rows ?? 7;
  const blockSize = options.blockSize ?? 64;
  assertInteger(numBits, "options.numBits", 0, MAX_HASH_BITS);
  assertInteger(blockSize, "options.blockSize", 1);
  const d = queries.cols;
  let planes: Matrix;
  let randomBits = 0;
  if (options.planes !== undefined) {
    assertShape(options.planes, "options.planes", numBits, d, "numBits × queries.cols");
    assertFinite(options.planes, "options.planes");
    planes = options.planes;
  } else {
    planes = drawHyperplanes(numBits, d, seed);
    randomBits = 64 * numBits * d;
  }
  const nQ = queries.rows;
  const nK = keys.rows;
  const buckets = 1 << numBits;
  const rank = (codes: Int32Array) => Int32Array.from(codes, grayRank);
  const queryOrder = bucketSort(rank(simHash(queries, planes)), buckets);
  const keyOrder = bucketSort(rank(simHash(keys, planes)), buckets);
  const numBlocks = Math.max(1, Math.ceil(nQ / blockSize));
  const queryStart = new Int32Array(numBlocks + 1);
  const keyStart = new Int32Array(numBlocks + 1);
  for (let c = 0; c <= numBlocks; c++) {
    queryStart[c] = Math.min(nQ, c * blockSize);
    keyStart[c] = Math.round((c * nK) / numBlocks);
  }
  keyStart[numBlocks] = nK;
  const queryBlock = new Int32Array(nQ);
  const keyBlock = new Int32Array(nK);
  for (let c = 0; c < numBlocks; c++) {
    for (let t = queryStart[c]; t < queryStart[c + 1]; t++) queryBlock[queryOrder[t]] = c;
    for (let t = keyStart[c]; t < keyStart[c + 1]; t++) keyBlock[keyOrder[t]] = c;
  }
  return {
    queryBlock,
    keyBlock,
    queryOrder,
    keyOrder,
    queryStart,
    keyStart,
    numBlocks,
    planes,
    cost: {
      flops: 2 * (nQ + nK) * d * numBits + 2 * (nQ + nK) + buckets,
      floatsStored: numBits * d + 2 * (nQ + nK) + buckets,
      hashes: numBits > 0 ? nQ + nK : 0,
      randomBits,
    },
  };
}
