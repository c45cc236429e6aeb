/**
 * Streaming exact attention: the online-softmax (FlashAttention-style) form of Y = Z⁻¹AV that never
 * materializes the N_Q×N_KV kernel matrix. Queries are processed in blocks of `queryBlockSize`
 * rows and, for each, keys/values in blocks of `blockSize` rows; per query row it keeps
 *   m  — the running max of the allowed logits (softmax only),
 *   ℓ  — the running normalizer Σ_j exp(s_j − m),
 *   O  — the running unnormalized output Σ_j exp(s_j − m) V[j,:].
 * A new key block with tile max m̃ updates m' = max(m, m̃), rescales ℓ and O by exp(m − m'), and adds
 * the tile: ℓ += Σ exp(s − m'), O += exp(S_tile − m') V_tile. At the end Y[i,:] = O[i,:]/ℓ[i] —
 * algebraically Z⁻¹AV, as the common factor exp(−m) cancels. Other kernels need no max: ℓ and O
 * simply accumulate κ. Memory: a queryBlockSize×blockSize tile, a scaled copy of Q, and the output —
 * O((N_Q + N_KV)·d), so exact baselines run where the score matrix would not fit.
 *
 * Both tile products use the register-tiled raw kernels (`matmulTransBInto` for S_tile = Q_blk K_blkᵀ,
 * `matmulInto` accumulating tile·V_blk into O). Fully masked tiles (e.g. above a causal diagonal)
 * are skipped: their contribution is exactly 0 in either mask form.
 */
import { Matrix } from "../matrix.js";
import { matmulInto, matmulTransBInto } from "../linalg/matmul.js";
import { assertInteger } from "../validate.js";
import { kernelValueError } from "./kernel.js";
import { TILE_NONE, TILE_PARTIAL, type TileStatus } from "./mask.js";
import {
  type AttentionOptions,
  checkQueriesKeys,
  checkValues,
  emptyRow,
  overflowError,
  resolveAttention,
  scaledQueries,
} from "./options.js";
import { allowedRowMax, dotRow, expRow, firstNonFinite, float32Attention, fusedSoftmax } from "./rows.js";

/**
 * Default key/value block size (tile width). Measured on a shared 2-core Node 20 machine,
 * N_Q = N_KV = 1024 / 2048, d = 64, best of 4–8 interleaved runs: every tile from 64×64 to 256×256
 * ran at 0.5–1.05× the materialized time (the tile stays in cache where the 8·N² bytes of the
 * materialized S do not); 128×256 was among the fastest at both sizes.
 */
export const DEFAULT_KEY_BLOCK_SIZE = 256;
/** Default query block size (tile height: rows of Q sharing one pass over K and V). */
export const DEFAULT_QUERY_BLOCK_SIZE = 128;

/** Options of `streamingAttention`: those of `attention` plus the tile sizes. */
export interface StreamingAttentionOptions extends AttentionOptions {
  /** Keys/values per block (tile width). Any integer ≥ 1; results do not depend on it. @default 256 */
  blockSize?: number;
  /** Queries per block (tile height). Any integer ≥ 1; results do not depend on it. @default 128 */
  queryBlockSize?: number;
}

/**
 * Exact attention Y = Z⁻¹AV by online softmax over key blocks — the same result as `attention`
 * (to rounding) without ever holding N_Q×N_KV numbers. Every kernel, mask kind, mask form and
 * empty-row policy of `attention` is supported with the same meaning.
 * @param queries Q, N_Q×d_QK, finite, non-empty.
 * @param keys K, N_KV×d_QK, finite, non-empty.
 * @param values V, N_KV×d_V, finite.
 * @returns Y, N_Q×d_V.
 * @throws as `attention`, plus ValueError when a block size is not an integer ≥ 1.
 * @example
 * ```ts
 * import { attention, maxAbsDiff, randomMatrix, streamingAttention } from "@randattn/core";
 *
 * const q = randomMatrix(64, 16, {}, [2, "q"]);
 * const k = randomMatrix(512, 16, {}, [2, "k"]);
 * const v = randomMatrix(512, 16, {}, [2, "v"]);
 * // Online softmax over key blocks: never forms the 64 × 512 score matrix.
 * const y = streamingAttention(q, k, v, { blockSize: 128 });
 * console.log(maxAbsDiff(y, attention(q, k, v)) < 1e-12); // true
 * ```
 */
export function streamingAttention(queries: Matrix, keys: Matrix, values: Matrix, options?: StreamingAttentionOptions): Matrix {
  checkQueriesKeys(queries, keys);
  checkValues(values, keys);
  const nQ = queries.rows;
  const nKV = keys.rows;
  const d = queries.cols;
  const dV = values.cols;
  const r = resolveAttention(options, nQ, nKV, d);
  const bk = options?.blockSize ?? DEFAULT_KEY_BLOCK_SIZE;
  assertInteger(bk, "options.blockSize");
  const bq = options?.queryBlockSize ?? DEFAULT_QUERY_BLOCK_SIZE;
  assertInteger(bq, "options.queryBlockSize");
  const tq = Math.min(bq, nQ);
  const tk = Math.min(bk, nKV);
  // Softmax on the fused WebAssembly path: the same online-softmax recurrence over key blocks, with
  // the tile, m, ℓ and O in kernel memory and the SIMD exp (see rows.ts / fast/softmaxWasm.ts).
  if (r.precision === "float32") {
    const y32 = float32Attention(queries, keys, values, r, options?.mask, "streaming", { blockSize: bk, queryBlockSize: bq });
    // null when float32 does not apply (a non-finite float32 result included): float64 (issue #6)
    if (y32 !== null) return y32;
  }
  // A null return writes nothing, so `out` is still all zero for the accumulating loops below.
  const out = new Matrix(nQ, dV);
  if (fusedSoftmax(queries, keys, values, r, { keyBlock: bk, queryBlock: bq, out: out.data }) !== null) return out;

  const k = r.kernel;
  const isSoftmax = k.kind === "softmax";
  const qs = k.kind === "pairwise" ? queries.data : scaledQueries(queries, k.scale);
  const kd = keys.data;
  const vd = values.data;
  const y = out.data;
  const tile = new Float64Array(tq * tk);
  const tmask = new Uint8Array(tq * tk);
  // running max of the allowed logits (softmax), or of the kernel values κ (other kernels)
  const m = new Float64Array(tq);
  const l = new Float64Array(tq); // running normalizer
  const qRows = k.kind === "pairwise" ? Array.from({ length: nQ }, (_, i) => queries.rowView(i)) : [];
  const kRows = k.kind === "pairwise" ? Array.from({ length: nKV }, (_, j) => keys.rowView(j)) : [];

  for (let i0 = 0; i0 < nQ; i0 += bq) {
    const i1 = Math.min(nQ, i0 + bq);
    const rows = i1 - i0;
    m.fill(isSoftmax ? Number.NEGATIVE_INFINITY : 0);
    l.fill(0);
    const oBlk = y.subarray(i0 * dV, i1 * dV);
    for (let j0 = 0; j0 < nKV; j0 += bk) {
      const j1 = Math.min(nKV, j0 + bk);
      const w = j1 - j0;
      const status: TileStatus = r.mask ? r.mask.tile(i0, i1, j0, j1, tmask) : 1;
      if (status === TILE_NONE) continue;
      const mk = status === TILE_PARTIAL ? tmask : null;
      if (k.kind === "pairwise") {
        const fn = k.fn!;
        for (let a = 0; a < rows; a++) {
          for (let c = 0; c < w; c++) {
            const t = a * w + c;
            if (mk !== null && mk[t] === 0) {
              tile[t] = 0; // 1_{j∉S_i}·κ = 0
              continue;
            }
            const v = fn(qRows[i0 + a], kRows[j0 + c]);
            if (!(v >= 0 && v < Number.POSITIVE_INFINITY)) throw kernelValueError(k, v, i0 + a, j0 + c);
            tile[t] = v;
          }
          rescaleKernelRow(tile, a * w, w, m, l, oBlk, a, dV);
        }
      } else {
        matmulTransBInto(qs.subarray(i0 * d, i1 * d), kd.subarray(j0 * d, j1 * d), tile, rows, d, w);
        for (let a = 0; a < rows; a++) {
          const o = a * w;
          if (!isSoftmax) {
            dotRow(k, tile, o, w, mk, o, r.form, i0 + a, j0); // κ in place, validated finite and ≥ 0
            rescaleKernelRow(tile, o, w, m, l, oBlk, a, dV);
            continue;
          }
          const tmax = allowedRowMax(tile, o, w, mk, o, r.form);
          if (tmax === Number.NEGATIVE_INFINITY) {
            // No allowed key of this row in this tile (or only logits that underflowed to −∞,
            // whose exp is 0): the tile adds nothing. A NaN logit (overflow inside ⟨q,k⟩) is never dropped.
            const bad = firstNaNAllowed(tile, o, w, mk);
            if (bad >= 0) throw overflowError(r, i0 + a, j0 + bad, "logits scale·⟨Q[i,:], K[j,:]⟩");
            tile.fill(0, o, o + w);
            continue;
          }
          const mOld = m[a];
          const mNew = Math.max(tmax, mOld);
          const sum = expRow(tile, o, w, mNew, mk, o, r.form);
          if (!Number.isFinite(sum)) throw overflowError(r, i0 + a, j0 + firstNonFinite(tile, o, w), "logits scale·⟨Q[i,:], K[j,:]⟩");
          if (mNew !== mOld) {
            // rescale the running sums to the new max: exp(m − m') (0 on the row's first tile)
            const c = Math.exp(mOld - mNew);
            l[a] *= c;
            const ob = a * dV;
            for (let p = ob; p < ob + dV; p++) oBlk[p] *= c;
            m[a] = mNew;
          }
          l[a] += sum;
        }
      }
      matmulInto(tile, vd.subarray(j0 * dV, j1 * dV), oBlk, rows, w, dV, true);
    }
    for (let a = 0; a < rows; a++) {
      const ob = a * dV;
      if (!Number.isFinite(l[a])) throw overflowError(r, i0 + a, -1, `normalizer Z[${i0 + a},${i0 + a}]`);
      if (l[a] === 0) {
        emptyRow(r, i0 + a); // throws unless onEmptyRow = "zero"
        oBlk.fill(0, ob, ob + dV);
        continue;
      }
      const inv = 1 / l[a];
      for (let p = ob; p < ob + dV; p++) oBlk[p] *= inv;
    }
  }
  return out;
}

/**
 * Non-exp kernels: the counterpart of the softmax max-shift. κ values may be huge (f(s) ≈ 1e300),
 * and Σ_j κ_j V_j would overflow although Y is a convex combination of V's rows. So the running
 * sums ℓ and O of row `a` are kept relative to the row's running max κ, m: a larger tile max m'
 * rescales them by m/m' (as exp(m − m') does for softmax) and the tile row is divided by m', so every
 * entry added is in [0, 1]. The factor cancels in O/ℓ.
 */
function rescaleKernelRow(
  tile: Float64Array,
  o: number,
  w: number,
  m: Float64Array,
  l: Float64Array,
  oBlk: Float64Array,
  a: number,
  dV: number,
): void {
  let tmax = 0;
  for (let j = o; j < o + w; j++) if (tile[j] > tmax) tmax = tile[j];
  if (tmax > m[a]) {
    const c = m[a] / tmax; // 0 on the row's first non-zero tile (ℓ and O are still 0)
    l[a] *= c;
    for (let p = a * dV; p < (a + 1) * dV; p++) oBlk[p] *= c;
    m[a] = tmax;
  }
  if (m[a] === 0) return; // all κ = 0 so far: the tile adds nothing
  const inv = 1 / m[a];
  let sum = 0;
  for (let j = o; j < o + w; j++) {
    const v = tile[j] * inv;
    tile[j] = v;
    sum += v;
  }
  l[a] += sum;
}

function firstNaNAllowed(s: Float64Array, o: number, w: number, mk: Uint8Array | null): number {
  for (let c = 0; c < w; c++) if (Number.isNaN(s[o + c]) && (mk === null || mk[o + c] === 1)) return c;
  return -1;
}
