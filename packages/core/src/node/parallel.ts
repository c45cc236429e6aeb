/**
 * Multi-head attention spread over worker threads for one large call (issue #5). Heads are
 * independent given X_Q and X_KV (paper §2.2), so each worker computes a contiguous range of heads
 * (contiguous so GQA groups are projected once per worker) with the same code as the calling thread
 * (`heads.ts`); the inputs and the concat_col(Y_h) output live in SharedArrayBuffers (no copies per
 * worker, disjoint columns written), and the calling thread finishes with concat·W_O. The result is
 * bit-for-bit identical to `multiHeadAttentionFast` (same kernels, same order per head), whatever
 * the number of workers.
 *
 * Workers run the compiled `dist/node/worker.js`, resolved next to this module; when this module
 * runs from `src/` (vitest), the build output `../../dist/node/worker.js` is used instead (the test
 * command builds with `tsc -b` first). The pool persists between calls and does not keep the
 * process alive; `closeAttentionWorkers()` ends it.
 */
import { existsSync } from "node:fs";
import { availableParallelism } from "node:os";
import { fileURLToPath } from "node:url";
import { Worker } from "node:worker_threads";
import { FormatError, NonFiniteError, NumericalError, type RandAttnError, ShapeError, ValueError } from "../errors.js";
import { matmulInto } from "../linalg/matmul.js";
import { Matrix } from "../matrix.js";
import { assertInteger, assertOptions } from "../validate.js";
import { type AttentionPlan, type FastAttentionFullOptions, attentionPlan } from "../attention/fast.js";
import { type KernelArithmetic, getKernelArithmetic, getKernelBackend } from "../kernels/gemm.js";
import { type HeadDims, type HeadWeights, checkMultiHead, computeHeads } from "../attention/fast-heads.js";

/** Options of `parallelMultiHeadAttention` (and `multiHeadAttentionFast`, which ignores the worker ones). */
export interface ParallelMultiHeadOptions extends FastAttentionFullOptions {
  /** Worker threads (capped at numHeads). @default min(numHeads, os.availableParallelism()) */
  workers?: number;
  /** The compiled worker script. @default dist/node/worker.js next to this module */
  workerUrl?: URL | string;
}

/**
 * Multi-head attention Y = concat_col(Y_h) W_O in the calling thread, on the fast kernels
 * (softmax kernel; optional causal/padding mask; float64 unless `precision: "float32"`).
 * The single-thread reference of `parallelMultiHeadAttention`.
 * @throws ShapeError / ValueError / NonFiniteError on bad inputs, NumericalError on an empty row.
 */
export function multiHeadAttentionFast(xQ: Matrix, xKV: Matrix, weights: HeadWeights, options: ParallelMultiHeadOptions = {}): Matrix {
  const plan = attentionPlan(options);
  const dims = checkMultiHead(xQ, xKV, weights);
  const concat = new Float64Array(dims.nQ * dims.numHeads * dims.dV);
  const heads = Array.from({ length: dims.numHeads }, (_, h) => h);
  computeHeads(
    plan,
    dims,
    {
      xQ: xQ.data,
      xKV: xKV.data,
      wq: weights.queries.map((w) => w.data),
      wk: weights.keys.map((w) => w.data),
      wv: weights.values.map((w) => w.data),
    },
    heads,
    concat,
  );
  return project(concat, dims, weights.output);
}

function project(concat: Float64Array, dims: HeadDims, wo: Matrix): Matrix {
  const out = new Matrix(dims.nQ, dims.dOut);
  matmulInto(concat, wo.data, out.data, dims.nQ, dims.numHeads * dims.dV, dims.dOut, false);
  return out;
}

/** Message sent to a worker: everything plain data or SharedArrayBuffer. */
export interface HeadTask {
  kind: "heads";
  id: number;
  backend: string;
  /** The caller's GEMM arithmetic (`setKernelArithmetic`), so the workers' sums are the caller's. */
  arithmetic: KernelArithmetic;
  plan: AttentionPlan;
  dims: HeadDims;
  xQ: SharedArrayBuffer;
  xKV: SharedArrayBuffer;
  wq: SharedArrayBuffer[];
  wk: SharedArrayBuffer[];
  wv: SharedArrayBuffer[];
  heads: number[];
  concat: SharedArrayBuffer;
}

/** A worker's reply (to any task kind: heads here, query rows in parallel-attention.ts). */
export interface HeadReply {
  id: number;
  error?: { name: string; argument?: string; expected?: string; actual?: string; message: string };
  /** Query-row tasks: false when the fused kernel declined the block (kernel memory), nothing written. */
  fused?: boolean;
}

/** One pooled worker thread and its tasks in flight. */
export interface PoolWorker {
  worker: Worker;
  url: string;
  pending: Map<number, { resolve: (reply: HeadReply) => void; reject: (e: Error) => void }>;
}

const pool: PoolWorker[] = [];
let nextId = 1;

/** Resolves the compiled worker script (see module doc). */
export function resolveWorkerUrl(explicit?: URL | string): URL {
  if (explicit !== undefined) return explicit instanceof URL ? explicit : new URL(explicit, "file://");
  const here = new URL("./worker.js", import.meta.url);
  if (here.protocol !== "file:" || existsSync(fileURLToPath(here))) return here;
  const dist = new URL("../../dist/node/worker.js", import.meta.url);
  if (existsSync(fileURLToPath(dist))) return dist;
  throw new ValueError(
    "workerUrl",
    "the compiled worker script (build it: npx tsc -b packages/core)",
    `none at ${fileURLToPath(here)} or ${fileURLToPath(dist)}`,
  );
}

const ERRORS: Record<string, new (a: string, e: string, x: string, m?: string) => RandAttnError> = {
  ShapeError,
  ValueError,
  NonFiniteError,
  NumericalError,
  FormatError,
};

function rebuildError(e: NonNullable<HeadReply["error"]>): Error {
  const Ctor = ERRORS[e.name];
  if (Ctor && e.argument !== undefined) return new Ctor(e.argument, e.expected ?? "", e.actual ?? "", e.message);
  const err = new Error(e.message);
  err.name = e.name;
  return err;
}

function spawn(url: URL): PoolWorker {
  const worker = new Worker(url);
  const pw: PoolWorker = { worker, url: url.href, pending: new Map() };
  worker.on("message", (reply: HeadReply) => {
    const p = pw.pending.get(reply.id);
    if (!p) return;
    pw.pending.delete(reply.id);
    if (pw.pending.size === 0) worker.unref();
    if (reply.error) p.reject(rebuildError(reply.error));
    else p.resolve(reply);
  });
  const fail = (err: Error) => {
    for (const p of pw.pending.values()) p.reject(err);
    pw.pending.clear();
    const i = pool.indexOf(pw);
    if (i >= 0) pool.splice(i, 1);
  };
  worker.on("error", fail);
  worker.on("exit", (code) => fail(new Error(`attention worker exited with code ${code}`)));
  worker.unref();
  return pw;
}

/** `count` pooled workers running `url`, started on first use (the pool of both parallel paths). */
export function workersFor(count: number, url: URL): PoolWorker[] {
  const matching = pool.filter((p) => p.url === url.href);
  while (matching.length < count) {
    const pw = spawn(url);
    pool.push(pw);
    matching.push(pw);
  }
  return matching.slice(0, count);
}

/** A fresh task id (unique in this thread). */
export function nextTaskId(): number {
  return nextId++;
}

/** Posts one task (plain data and SharedArrayBuffers) to a pooled worker; resolves with its reply. */
export function runTask<T extends { id: number; kind: string }>(pw: PoolWorker, task: T): Promise<HeadReply> {
  return new Promise((resolve, reject) => {
    pw.pending.set(task.id, { resolve, reject });
    pw.worker.ref(); // keep the process alive while a task is out
    pw.worker.postMessage(task);
  });
}

/**
 * The data as a whole SharedArrayBuffer the workers can map: the buffer itself when the array
 * already is one (no copy), else one memcpy into a new one (never a structured clone per worker).
 */
export function share(data: Float64Array): SharedArrayBuffer {
  if (data.buffer instanceof SharedArrayBuffer && data.byteOffset === 0 && data.byteLength === data.buffer.byteLength) {
    return data.buffer;
  }
  const sab = new SharedArrayBuffer(data.length * 8);
  new Float64Array(sab).set(data);
  return sab;
}

/**
 * Multi-head attention with the heads spread over `workers` threads (contiguous head ranges),
 * identical to `multiHeadAttentionFast` bit for bit. Worth it for one large call (each worker
 * costs ≈ 30 ms to start the first time, then stays in a pool); options are those of
 * `fastAttention` (plain data only: custom kernel functions cannot cross threads).
 * @throws as `multiHeadAttentionFast`; ValueError for a bad `workers` or a missing worker script.
 * @example
 * ```ts
 * import { randomMatrix } from "@randattn/core";
 * import { closeAttentionWorkers, multiHeadAttentionFast, parallelMultiHeadAttention } from "@randattn/core/node";
 *
 * const w = (rows: number, cols: number, tag: string) => randomMatrix(rows, cols, { scale: 1 / Math.sqrt(rows) }, [7, tag]);
 * const weights = {
 *   queries: [0, 1].map((h) => w(16, 8, `q${h}`)),
 *   keys: [0, 1].map((h) => w(16, 8, `k${h}`)),
 *   values: [0, 1].map((h) => w(16, 8, `v${h}`)),
 *   output: w(16, 16, "o"),
 * };
 * const x = randomMatrix(32, 16, {}, [7, "x"]);
 * const y = await parallelMultiHeadAttention(x, x, weights, { workers: 2 }); // heads over 2 threads
 * console.log(y.data.every((v, i) => v === multiHeadAttentionFast(x, x, weights).data[i])); // true: bit-identical
 * await closeAttentionWorkers();
 * ```
 */
export async function parallelMultiHeadAttention(
  xQ: Matrix,
  xKV: Matrix,
  weights: HeadWeights,
  options: ParallelMultiHeadOptions = {},
): Promise<Matrix> {
  assertOptions(options, "options");
  const { workers: workersOpt, workerUrl, ...rest } = options;
  const plan = attentionPlan(rest);
  const dims = checkMultiHead(xQ, xKV, weights);
  const requested = workersOpt ?? Math.min(dims.numHeads, availableParallelism());
  assertInteger(requested, "options.workers", 1);
  const count = Math.min(requested, dims.numHeads);
  const url = resolveWorkerUrl(workerUrl);
  const concat = new SharedArrayBuffer(dims.nQ * dims.numHeads * dims.dV * 8);
  const sharedQ = share(xQ.data);
  const base = {
    kind: "heads" as const,
    backend: getKernelBackend(),
    arithmetic: getKernelArithmetic(),
    plan,
    dims,
    xQ: sharedQ,
    xKV: xKV === xQ ? sharedQ : share(xKV.data), // self-attention: X shared once
    wq: weights.queries.map((w) => share(w.data)),
    wk: weights.keys.map((w) => share(w.data)),
    wv: weights.values.map((w) => share(w.data)),
    concat,
  };
  const team = workersFor(count, url);
  const jobs: Promise<HeadReply>[] = [];
  for (let w = 0; w < count; w++) {
    // Contiguous, balanced ranges: heads ⌊w·H/count⌋ … ⌊(w+1)·H/count⌋ − 1.
    const h0 = Math.floor((w * dims.numHeads) / count);
    const h1 = Math.floor(((w + 1) * dims.numHeads) / count);
    const heads = Array.from({ length: h1 - h0 }, (_, i) => h0 + i);
    jobs.push(runTask(team[w], { ...base, id: nextTaskId(), heads }));
  }
  await Promise.all(jobs);
  return project(new Float64Array(concat), dims, weights.output);
}

/** Worker threads in the pool now (0 before the first parallel call and after `closeAttentionWorkers`). */
export function attentionWorkerCount(): number {
  return pool.length;
}

/** Terminates the worker pool of `parallelMultiHeadAttention` and `attentionParallel` (a later call starts a new one). */
export async function closeAttentionWorkers(): Promise<void> {
  const all = pool.splice(0, pool.length);
  await Promise.all(all.map((p) => p.worker.terminate()));
}

/** Runs one task in this thread (the body of `worker.ts`). */
export function runHeadTask(task: HeadTask): void {
  computeHeads(
    task.plan,
    task.dims,
    {
      xQ: new Float64Array(task.xQ),
      xKV: new Float64Array(task.xKV),
      wq: task.wq.map((b) => new Float64Array(b)),
      wk: task.wk.map((b) => new Float64Array(b)),
      wv: task.wv.map((b) => new Float64Array(b)),
    },
    task.heads,
    new Float64Array(task.concat),
  );
}
