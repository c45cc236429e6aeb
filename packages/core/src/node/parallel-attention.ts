/**
 * One exact attention call Y = Z⁻¹AV on several worker threads (issue 14): every worker runs the
 * same fused softmax kernel that `attention` (materialized) or `streamingAttention` (online softmax)
 * runs on the whole call, claiming the driver's query blocks one at a time from a shared counter —
 * whole blocks first, smaller ones near the end (row-task.ts' `guidedBlockRows`), so a core the
 * host slows takes fewer and the workers finish together (before stop 20 each worker had one fixed
 * half) — reading Q, K, V and writing its rows of Y in SharedArrayBuffers (row-task.ts). The rows of Y are
 * independent given K and V (§2.1: Y[i,:] = Σ_j A[i,j]V[j,:] / Σ_j A[i,j]), and the kernel computes
 * each row with the same operations in the same order wherever the row sits in its block — the
 * score and value products accumulate over d_QK / keys in a fixed order per output entry, the row
 * max, exp and sums run along the row, and a fully masked tile changes nothing in a row (exp(−∞) =
 * 0 is added, α = 1) — so the result is bit-for-bit the single-thread one. The decisions the kernel
 * takes per call rather than per row come out as for the whole call because every worker's driver
 * sees the whole call (Q, K, V, the mask) and only claims which of its query blocks to run: the
 * fused path and the backend's size rule, the kernel memory limit (`FUSED_MAX_BYTES`) and float32's
 * safe range (range32.ts) are the whole call's. Decided here: whether to split at all (softmax
 * kernel, SIMD available, ≥ 2 workers with ≥ MIN_BLOCK_ROWS rows each), and float32 → float64 when
 * the float32 result is not finite — if any row of Y is, every row is recomputed in float64, as
 * `attention` recomputes the whole call.
 * The calling thread then runs `attention`'s own row checks on the collected normalizers, so a
 * fully masked row or an overflow throws the same error naming the same row.
 */
import { availableParallelism } from "node:os";
import { attention } from "../attention/attend.js";
import { type AttentionOptions, checkQueriesKeys, checkValues, resolveAttention } from "../attention/options.js";
import { allFinite } from "../attention/fast.js";
import { checkFusedRows } from "../attention/rows.js";
import { DEFAULT_KEY_BLOCK_SIZE, DEFAULT_QUERY_BLOCK_SIZE, streamingAttention } from "../attention/streaming.js";
import { getKernelArithmetic, getKernelBackend } from "../kernels/gemm.js";
import { useFusedSoftmax } from "../kernels/softmaxWasm.js";
import { Matrix } from "../matrix.js";
import { assertInteger, assertOneOf, assertRequiredOptions } from "../validate.js";
import { nextTaskId, resolveWorkerUrl, runTask, workersFor } from "./parallel.js";
import type { RowTask } from "./row-task.js";

/** Fewest query rows in one worker's block (materialized; streaming uses max(this, queryBlockSize)). */
export const MIN_BLOCK_ROWS = 256;
/**
 * Least work N_Q·N_KV·(d_QK + d_V) (multiply-adds of the two products) worth splitting: below it
 * the messages and each worker's packing of K and V cost more than the second core saves.
 */
export const MIN_PARALLEL_WORK = 1 << 22;

/** Options of `attentionParallel`: those of `attention` (softmax), the streaming tiles, and the workers. */
export interface ParallelAttentionOptions extends AttentionOptions {
  /**
   * `"materialized"` gives `attention(q, k, v, options)` bit for bit, `"streaming"` gives
   * `streamingAttention(q, k, v, options)` (online softmax over `blockSize` keys). @default "materialized"
   */
  mode?: "materialized" | "streaming";
  /** Streaming only: keys per block, as `streamingAttention`. @default 256 */
  blockSize?: number;
  /** Streaming only: queries per block, as `streamingAttention`. @default 128 */
  queryBlockSize?: number;
  /** Worker threads (the call uses fewer when N_Q is small: see `attentionSplit`). @default os.availableParallelism() */
  workers?: number;
  /** The compiled worker script. @default dist/node/worker.js next to this module */
  workerUrl?: URL | string;
}

/**
 * Whether `attentionParallel` splits a call: one balanced block of rows per worker it would use, or
 * why it stays in this thread. (The workers then claim the driver's query blocks at run time; these
 * bounds decide the worker count and that every worker could take a block of ≥ 256 rows.)
 */
export interface AttentionSplit {
  /** Block boundaries: block b is rows [bounds[b], bounds[b + 1]); empty when the call runs in this thread. */
  bounds: number[];
  /** Why the call runs in the calling thread (undefined when it is split). */
  reason?: string;
}

interface Resolved {
  r: ReturnType<typeof resolveAttention>;
  mode: "materialized" | "streaming";
  blockSize: number;
  queryBlockSize: number;
  workers: number;
  rest: AttentionOptions & { blockSize?: number; queryBlockSize?: number };
}

function resolve(queries: Matrix, keys: Matrix, values: Matrix, options: ParallelAttentionOptions): Resolved {
  assertRequiredOptions(options, "options");
  const { workers, workerUrl, mode: modeOpt, ...rest } = options;
  void workerUrl; // resolved only when the call is split
  checkQueriesKeys(queries, keys);
  checkValues(values, keys);
  const r = resolveAttention(rest, queries.rows, keys.rows, queries.cols);
  const mode = modeOpt ?? "materialized";
  assertOneOf(mode, "options.mode", ["materialized", "streaming"] as const);
  const blockSize = rest.blockSize ?? DEFAULT_KEY_BLOCK_SIZE;
  const queryBlockSize = rest.queryBlockSize ?? DEFAULT_QUERY_BLOCK_SIZE;
  if (mode === "streaming") {
    assertInteger(blockSize, "options.blockSize");
    assertInteger(queryBlockSize, "options.queryBlockSize");
  }
  const count = workers ?? availableParallelism();
  assertInteger(count, "options.workers", 1);
  return { r, mode, blockSize, queryBlockSize, workers: count, rest };
}

/** Contiguous blocks of ≥ minRows rows with about equal work (row weights w), at most `count`. */
function blockBounds(weights: Float64Array, count: number, minRows: number): number[] {
  const n = weights.length;
  let total = 0;
  for (let i = 0; i < n; i++) total += weights[i];
  const bounds = [0];
  let acc = 0;
  let i = 0;
  for (let b = 1; b < count; b++) {
    const target = (total * b) / count;
    while (i < n && acc + weights[i] / 2 < target) acc += weights[i++];
    // Every block keeps ≥ minRows rows: after the previous cut, and before the remaining blocks.
    const cut = Math.max(bounds[b - 1] + minRows, Math.min(i, n - (count - b) * minRows));
    while (i < cut) acc += weights[i++];
    while (i > cut) acc -= weights[--i];
    bounds.push(cut);
  }
  bounds.push(n);
  return bounds;
}

function plan(queries: Matrix, keys: Matrix, values: Matrix, z: Resolved): AttentionSplit {
  const { r, mode } = z;
  const nQ = queries.rows;
  const nKV = keys.rows;
  const d = queries.cols;
  const dV = values.cols;
  if (r.kernel.kind !== "softmax") return { bounds: [], reason: `kernel "${r.kernel.name}" (callbacks cannot cross threads)` };
  if (!useFusedSoftmax(nQ, nKV, d)) return { bounds: [], reason: `no fused kernel (backend "${getKernelBackend()}")` };
  if (nQ * nKV * (d + dV) < MIN_PARALLEL_WORK) return { bounds: [], reason: `small call (N_Q·N_KV·(d_QK + d_V) < ${MIN_PARALLEL_WORK})` };
  const minRows = mode === "streaming" ? Math.max(MIN_BLOCK_ROWS, z.queryBlockSize) : MIN_BLOCK_ROWS;
  const count = Math.min(z.workers, Math.floor(nQ / minRows));
  if (z.workers < 2) return { bounds: [], reason: "workers: 1" };
  if (count < 2) return { bounds: [], reason: `N_Q < ${2 * minRows} rows (two blocks of ≥ ${minRows})` };
  // Work per row: the whole N_KV-wide tile when materialized; in streaming mode the key blocks
  // up to the row's last allowed key (fully masked tiles are skipped — a causal mask's late rows
  // cost more).
  const weights = new Float64Array(nQ).fill(nKV);
  if (mode === "streaming" && r.mask) {
    const bk = Math.min(z.blockSize, nKV);
    for (let i = 0; i < nQ; i++) weights[i] = Math.ceil(r.mask.allowedCount[i] / bk) * bk + 1;
  }
  // No per-block checks of the backend's size rule or of float32's safe range: every worker runs
  // the driver on the whole call (claiming its blocks), so it takes the whole call's decisions.
  return { bounds: blockBounds(weights, count, minRows) };
}

/**
 * How `attentionParallel(queries, keys, values, options)` would run: its query-row blocks, or why
 * it stays in the calling thread (a kernel other than softmax, the scalar backend, a small call,
 * fewer than two blocks of ≥ 256 rows, …). Validates like `attentionParallel`.
 * @throws as `attention` for bad inputs; ValueError for bad `workers`, `mode` or block sizes.
 */
export function attentionSplit(queries: Matrix, keys: Matrix, values: Matrix, options: ParallelAttentionOptions): AttentionSplit {
  return plan(queries, keys, values, resolve(queries, keys, values, options));
}

/**
 * Exact attention Y = Z⁻¹AV (§2.1) of one call with its query rows split over worker threads —
 * bit-for-bit `attention(queries, keys, values, options)` (or `streamingAttention` with `mode:
 * "streaming"`), with the same errors, for every mask kind and form, `onEmptyRow`, a softmax
 * `scale` and `precision: "float32"`. Q, K, V and Y travel in SharedArrayBuffers (one copy each,
 * never one per worker); the workers stay in the pool of `parallelMultiHeadAttention` between calls
 * (≈ 30 ms to start each the first time) and `closeAttentionWorkers()` ends them. A call that
 * cannot be split identically — see `attentionSplit` — runs in the calling thread.
 * @throws as `attention` / `streamingAttention`; ValueError for bad `workers` or a missing worker script.
 * @example
 * ```ts
 * import { attention, randomMatrix } from "@randattn/core";
 * import { attentionParallel, closeAttentionWorkers } from "@randattn/core/node";
 *
 * const q = randomMatrix(1024, 64, {}, [3, "q"]);
 * const k = randomMatrix(1024, 64, {}, [3, "k"]);
 * const v = randomMatrix(1024, 64, {}, [3, "v"]);
 * const y = await attentionParallel(q, k, v, { mask: { kind: "causal" }, workers: 2 }); // rows 0–511, 512–1023
 * const ref = attention(q, k, v, { mask: { kind: "causal" } });
 * console.log(y.data.every((x, i) => x === ref.data[i])); // true: bit-identical
 * await closeAttentionWorkers();
 * ```
 */
export async function attentionParallel(queries: Matrix, keys: Matrix, values: Matrix, options: ParallelAttentionOptions): Promise<Matrix> {
  const z = resolve(queries, keys, values, options);
  const single = (): Matrix =>
    z.mode === "streaming"
      ? streamingAttention(queries, keys, values, { ...z.rest, blockSize: z.blockSize, queryBlockSize: z.queryBlockSize })
      : attention(queries, keys, values, z.rest);
  const { bounds } = plan(queries, keys, values, z);
  if (bounds.length === 0) return single();
  const url = resolveWorkerUrl(options.workerUrl);
  const staging = acquireStaging(queries.rows, keys.rows, queries.cols, values.cols);
  try {
    return await runSplit(queries, keys, values, z, bounds, url, staging, single);
  } finally {
    releaseStaging(staging);
  }
}

/**
 * The shared buffers of one split call. A call copies Q, K, V into SharedArrayBuffers and the
 * workers write Y and the normalizers into two more; fresh buffers cost their first touch (page
 * faults: ≈ 7 ms per 8 MiB, here 10 MiB at N = 4096, d = 64 — ≈ 4 % of a 2-worker call, issue 14),
 * so the buffers of the last call are kept and reused by the next one that fits, unless a call is
 * still using them (concurrent calls take fresh ones). Every row of Y and of the normalizers is
 * written by its block, so nothing of an earlier call can leak into a later result.
 */
interface Staging {
  queries: SharedArrayBuffer;
  keys: SharedArrayBuffer;
  values: SharedArrayBuffer;
  out: SharedArrayBuffer;
  normalizer: SharedArrayBuffer;
}

let kept: Staging | null = null;
let keptInUse = false;

function sized(buffer: SharedArrayBuffer | undefined, floats: number): SharedArrayBuffer {
  return buffer && buffer.byteLength >= floats * 8 ? buffer : new SharedArrayBuffer(Math.max(floats, 1) * 8);
}

function acquireStaging(nQ: number, nKV: number, d: number, dV: number): Staging {
  const old = keptInUse ? null : kept;
  const s: Staging = {
    queries: sized(old?.queries, nQ * d),
    keys: sized(old?.keys, nKV * d),
    values: sized(old?.values, nKV * dV),
    out: sized(old?.out, nQ * dV),
    normalizer: sized(old?.normalizer, nQ),
  };
  if (!keptInUse) {
    kept = s;
    keptInUse = true;
  }
  return s;
}

function releaseStaging(s: Staging): void {
  if (s === kept) keptInUse = false;
}

/** Q, K or V into a staging buffer — or the caller's own SharedArrayBuffer when the array is one whole (no copy). */
function stage(data: Float64Array, buffer: SharedArrayBuffer): SharedArrayBuffer {
  if (data.buffer instanceof SharedArrayBuffer && data.byteOffset === 0 && data.byteLength === data.buffer.byteLength) return data.buffer;
  new Float64Array(buffer, 0, data.length).set(data);
  return buffer;
}

async function runSplit(
  queries: Matrix,
  keys: Matrix,
  values: Matrix,
  z: Resolved,
  bounds: number[],
  url: URL,
  staging: Staging,
  single: () => Matrix,
): Promise<Matrix> {
  const { r } = z;
  const nQ = queries.rows;
  const nKV = keys.rows;
  const d = queries.cols;
  const dV = values.cols;
  const { out, normalizer } = staging;
  const base = {
    kind: "rows" as const,
    backend: getKernelBackend(),
    arithmetic: getKernelArithmetic(),
    scale: r.kernel.scale,
    nKV,
    d,
    dV,
    keyBlock: z.mode === "streaming" ? z.blockSize : undefined,
    queryBlock: z.mode === "streaming" ? z.queryBlockSize : undefined,
    queries: stage(queries.data, staging.queries),
    keys: stage(keys.data, staging.keys),
    values: stage(values.data, staging.values),
    out,
    normalizer,
  };
  const team = workersFor(bounds.length - 1, url);
  // Every worker gets the whole call and claims its query blocks from one shared counter (dynamic
  // scheduling: on a host whose cores run at different, drifting speeds, a fixed half each waits
  // for the slower core); `bounds` decided only that the call is worth splitting.
  const mask = r.mask?.rowParts(0, nQ);
  // The caller's Y: a fresh (not shared) array, filled from `out` at the end. Its pages are
  // touched while the first pass runs, in this otherwise idle thread: a fresh N_Q·d_V array costs
  // its first touch (page faults, 5.7 ms for the 2 MiB of N = 4096, d_V = 64 on the stop-30 host)
  // — taken after the workers finish, as `y.slice()` did before stop 30, that is serial time the
  // single-thread call spends in its own kernel but a split cannot halve (Amdahl), ≈ 5 % of a
  // 2-worker call.
  let result: Float64Array | undefined;
  /** One pass over all rows in `precision`; false when the kernel declined (memory): nothing to use. */
  const pass = async (precision: "float32" | "float64"): Promise<boolean> => {
    const claim = new SharedArrayBuffer(4);
    const replies = Promise.all(
      team.map((pw) => {
        const task: RowTask = { ...base, id: nextTaskId(), precision, row0: 0, rows: nQ, mask, claim, claimers: team.length };
        return runTask(pw, task);
      }),
    );
    result ??= touchedArray(nQ * dV);
    return (await replies).every((x) => x.fused === true);
  };
  const y = new Float64Array(out, 0, nQ * dV);
  const l = new Float64Array(normalizer, 0, nQ);
  const collect = (): Matrix => {
    result!.set(y);
    return new Matrix(nQ, dV, result);
  };
  if (r.precision === "float32") {
    // attention's float32Attention: the row checks, then float64 when Y is not finite (issue #6).
    if (!(await pass("float32"))) return single();
    checkFusedRows(queries, keys, r, l);
    if (allFinite(y)) return collect();
  }
  if (!(await pass("float64"))) return single();
  checkFusedRows(queries, keys, r, l);
  return collect();
}

/** Bytes between two writes of `touchedArray`: the smallest page size of the platforms Node runs on. */
const PAGE_BYTES = 4096;

/** A new zeroed Float64Array of `length` with one element per page written, so its pages are mapped now. */
function touchedArray(length: number): Float64Array {
  const a = new Float64Array(length);
  // A write (not a read: that maps the shared zero page) to every page of the fresh allocation.
  for (let i = 0; i < length; i += PAGE_BYTES / 8) a[i] = 0;
  return a;
}
