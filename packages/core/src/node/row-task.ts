/**
 * The worker side of `attentionParallel` (parallel-attention.ts): the query blocks of a softmax
 * attention call that this worker claims from the call's shared counter (guided sizes:
 * `guidedBlockRows`), run through the same fused kernel (`fusedSoftmaxAttention`,
 * kernels/softmaxWasm.ts) that `attention` / `streamingAttention` run on the whole call. Q, K, V,
 * Y and the per-row normalizers are SharedArrayBuffers; a block reads its rows of Q in place and
 * writes its rows of Y and of the normalizer (disjoint ranges, so no locking). The calling thread
 * checks the normalizers (empty rows, overflow) in row order afterwards, so errors name the rows
 * of the whole call. Kept apart from parallel-attention.ts so the worker imports only the kernel
 * and mask modules.
 */
import { CompiledMask, type CompiledMaskParts } from "../attention/mask.js";
import type { KernelArithmetic } from "../kernels/gemm.js";
import { fusedSoftmaxAttention } from "../kernels/softmaxWasm.js";

/** One block of query rows [row0, row0 + rows) of an attention call (plain data + SharedArrayBuffers). */
export interface RowTask {
  kind: "rows";
  id: number;
  backend: string;
  /** The caller's GEMM arithmetic (`setKernelArithmetic`): bit-identical to one thread needs the same kernels. */
  arithmetic: KernelArithmetic;
  precision: "float32" | "float64";
  /** Resolved logit scale (1/√d_QK unless the kernel set one). */
  scale: number;
  row0: number;
  rows: number;
  nKV: number;
  d: number;
  dV: number;
  /** Keys per block (streaming) or undefined (materialized: one N_KV-wide block). */
  keyBlock?: number;
  /** Queries per block inside the fused driver (streaming only). */
  queryBlock?: number;
  queries: SharedArrayBuffer;
  keys: SharedArrayBuffer;
  values: SharedArrayBuffer;
  out: SharedArrayBuffer;
  normalizer: SharedArrayBuffer;
  /** The compiled mask's parts for these rows only (`CompiledMask.rowParts`), or undefined. */
  mask?: CompiledMaskParts;
  /**
   * A shared Int32Array(1) counter: the task's rows are claimed block by block with the other
   * workers of the call (`FusedSoftmaxSpec.claimBlock`) rather than run whole. Undefined: all rows.
   */
  claim?: SharedArrayBuffer;
  /** Workers sharing `claim` (the guided block sizes: `guidedBlockRows`). @default 2 */
  claimers?: number;
}

/** Fewest rows of a guided block (`guidedBlockRows`): a multiple of the kernels' row tiles (MR = 4). */
export const GUIDED_MIN_ROWS = 16;

/**
 * Rows of the next claimed block when `remaining` rows are unclaimed: guided self-scheduling
 * (Polychronopoulos & Kuck 1987) — the driver's qb while work is plentiful, then about
 * remaining / (2·workers), rounded up to 16 rows, so the workers finish within a 16-row block of
 * each other instead of within a whole qb block. Measured at N = 4096, d = 64 on two threads (16
 * calls each, alternating): the gap between the two finish times fell from 5.0 ms (mean; 1.3–11.6)
 * with 128-row blocks to 0.7 ms (0.0–1.5), the call's median wall time from 209 to 202 ms.
 */
export function guidedBlockRows(remaining: number, qb: number, workers: number): number {
  const share = Math.ceil(remaining / (2 * workers) / GUIDED_MIN_ROWS) * GUIDED_MIN_ROWS;
  return Math.min(remaining, qb, Math.max(GUIDED_MIN_ROWS, share));
}

/**
 * Runs one row block in this thread. Returns false (nothing written) when the fused kernel declines
 * (more kernel memory than it may take), true when Y and the normalizers of the block are written.
 */
export function runRowTask(t: RowTask): boolean {
  // Claimed blocks [i0, i0 + rows): only their normalizers are this worker's to write.
  const claimed: [number, number][] = [];
  const counter = t.claim ? new Int32Array(t.claim) : undefined;
  const workers = t.claimers ?? 2;
  const claimBlock = counter
    ? (qb: number) => {
        for (;;) {
          const i0 = Atomics.load(counter, 0);
          if (i0 >= t.rows) return { start: i0, rows: 0 };
          const rows = guidedBlockRows(t.rows - i0, qb, workers);
          // Another worker may have claimed since the load: then try again from its end.
          if (Atomics.compareExchange(counter, 0, i0, i0 + rows) === i0) {
            claimed.push([i0, i0 + rows]);
            return { start: i0, rows };
          }
        }
      }
    : undefined;
  const stats = fusedSoftmaxAttention({
    queries: new Float64Array(t.queries, t.row0 * t.d * 8, t.rows * t.d),
    // explicit lengths: the buffers may be reused staging buffers larger than this call (parallel-attention.ts)
    keys: new Float64Array(t.keys, 0, t.nKV * t.d),
    values: new Float64Array(t.values, 0, t.nKV * t.dV),
    nQ: t.rows,
    nKV: t.nKV,
    d: t.d,
    dV: t.dV,
    scale: t.scale,
    mask: t.mask ? new CompiledMask(t.rows, t.nKV, t.mask) : undefined,
    keyBlock: t.keyBlock,
    queryBlock: t.queryBlock,
    out: new Float64Array(t.out, t.row0 * t.dV * 8, t.rows * t.dV),
    precision: t.precision,
    claimBlock,
  });
  if (stats === null) return false;
  const l = new Float64Array(t.normalizer, t.row0 * 8, t.rows);
  if (!counter) l.set(stats.normalizer);
  else for (const [a, b] of claimed) l.set(stats.normalizer.subarray(a, b), a);
  return true;
}
