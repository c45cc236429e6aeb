/**
 * A worker_threads pool that survives crashing workers.
 *
 * tinypool 2.2 was tried first and rejected: a task whose worker thread exits (process.exit in the
 * worker, a fatal error) never settles, so one crashing cell would hang the whole sweep. This pool
 * gives each worker one task at a time; if the worker exits or errors mid-task, that task resolves
 * as failed ("WorkerCrash: …"), the worker is replaced and the other tasks go on.
 */
import { availableParallelism } from "node:os";
import { setFlagsFromString } from "node:v8";
import { Worker } from "node:worker_threads";
import { currentBundle } from "../platform/bundle.js";
import { type TaskOutcome, type TaskSpec, cancelledOutcome, failedOutcome } from "./execute.js";

interface Job {
  id: number;
  spec: TaskSpec;
  /** The worker slot this task is meant for (the runner's lanes), or -1: any. */
  lane: number;
  resolve: (o: TaskOutcome) => void;
}

interface Slot {
  worker: Worker | null;
  job: Job | null;
}

let sweepWorker: URL | undefined;

/**
 * The sweep worker's entry: dist/run/worker.bundle.js — the worker and everything it imports in one
 * esbuild bundle, written by the root `pnpm run build` (packages/experiments/scripts/bundle.mjs)
 * — when {@link currentBundle} finds it current, else dist/run/worker.js. Why: a worker thread loads
 * the bundle in ≈ 65 ms against ≈ 260 ms for the ≈ 240 modules (issue 14: on a 2-second sweep with
 * two workers that was 0.4 s of the two cores). Decided once per process.
 */
export function sweepWorkerUrl(): URL {
  sweepWorker ??= currentBundle(new URL("./", import.meta.url), "worker.bundle.json") ?? new URL("./worker.js", import.meta.url);
  return sweepWorker;
}

/**
 * Where a sweep worker's isolate runs V8's optimizing compiler (TurboFan): `"concurrent"` — V8's
 * default, on the process's background threads while the worker goes on in its slower tiers;
 * `"in-worker"` — in the worker's own thread, which waits for each compile; `"auto"` —
 * `"in-worker"` when the pool has a worker for every core ({@link defaultWorkerCount}), else
 * `"concurrent"`.
 *
 * Why (issue 14, stop 41; a 2-vCPU host): with a worker on every core the background compiles get
 * no core of their own — they take slices from the workers, which meanwhile run unoptimized code for
 * longer. Two workers, this build against the one before it (medians of alternating runs): quickstart
 * 1.37 → 1.23 s (8 rounds), frontier 6.09 → 5.53 s, kv-compression 5.07 → 4.69 s, scaling 5.51 →
 * 5.22 s (4 rounds each); results.csv byte-identical (compiled code computes what the interpreter
 * does). With a core left over the default is better: V8's flag alone, one worker compiling in its
 * thread took the quickstart 1.20 → 1.37 s.
 */
export type WorkerCompileMode = "auto" | "concurrent" | "in-worker";

/** The compile placement `mode` gives a pool of `size` workers on a machine with `cores` (see {@link WorkerCompileMode}). */
export function resolveCompileMode(mode: WorkerCompileMode, size: number, cores: number): "concurrent" | "in-worker" {
  if (mode !== "auto") return mode;
  return size >= cores ? "in-worker" : "concurrent";
}

/** The placement the process's V8 flag gives isolates created from now on (V8's default: concurrent). */
let isolateCompile: "concurrent" | "in-worker" = "concurrent";

/**
 * Sets V8's `--concurrent-recompilation` for the isolates created from now on. V8 reads it once, when
 * an isolate starts (without it the isolate gets no background compile queue and compiles where it
 * runs), so isolates already running — the main thread's, other pools' workers — keep theirs.
 */
function compileNewIsolates(where: "concurrent" | "in-worker"): void {
  if (where === isolateCompile) return;
  setFlagsFromString(where === "in-worker" ? "--no-concurrent-recompilation" : "--concurrent-recompilation");
  isolateCompile = where;
}

/** Default worker count: the machine's available parallelism (at least 1). */
export function defaultWorkerCount(): number {
  return Math.max(1, availableParallelism());
}

/** A fixed-size pool of worker threads running `executeTask`. */
export class WorkerPool {
  private readonly slots: Slot[];
  private readonly queue: Job[] = [];
  private readonly workerUrl: URL;
  private readonly compile: "concurrent" | "in-worker";
  private nextId = 0;
  private closed = false;

  /**
   * @param size number of worker threads.
   * @param workerUrl the worker entry. @default {@link sweepWorkerUrl}()
   * @param compile where each worker's isolate runs V8's optimizing compiler. @default "auto"
   */
  constructor(size: number, workerUrl: URL = sweepWorkerUrl(), compile: WorkerCompileMode = "auto") {
    this.workerUrl = workerUrl;
    this.compile = resolveCompileMode(compile, size, defaultWorkerCount());
    this.slots = Array.from({ length: size }, () => ({ worker: null, job: null }));
  }

  /**
   * Runs a task on the next free worker — on worker `lane` (0 … size − 1) when that one is free
   * or frees up first, else on whichever is free (an idle worker takes other lanes' tasks rather
   * than wait). Resolves (never rejects) with its outcome.
   */
  run(spec: TaskSpec, lane = -1): Promise<TaskOutcome> {
    return new Promise((resolve) => {
      if (this.closed) {
        resolve(cancelledOutcome(spec, "the pool was closed"));
        return;
      }
      this.queue.push({ id: this.nextId++, spec, lane, resolve });
      this.pump();
    });
  }

  /**
   * Starts every worker now rather than at its first task, so that their start-up — a thread, an
   * isolate, the sweep bundle parsed and compiled: ≈ 150 ms each — overlaps whatever the caller
   * does next (the CLI reads and validates the config and the journal meanwhile). Returns this.
   */
  start(): this {
    if (!this.closed) for (const slot of this.slots) slot.worker ??= this.spawn(slot);
    return this;
  }

  /** Tasks waiting for a worker. */
  get pending(): number {
    return this.queue.length;
  }

  /** Drops tasks not yet started (they resolve as cancelled). */
  cancelPending(): void {
    for (const job of this.queue.splice(0)) job.resolve(cancelledOutcome(job.spec, "not started"));
  }

  private spawn(slot: Slot): Worker {
    compileNewIsolates(this.compile);
    const worker = new Worker(this.workerUrl);
    worker.on("message", (msg: { id: number; outcome: TaskOutcome }) => {
      const job = slot.job;
      if (!job || job.id !== msg.id) return;
      slot.job = null;
      job.resolve(msg.outcome);
      this.pump();
    });
    const crashed = (why: string) => {
      if (slot.worker !== worker) return;
      slot.worker = null;
      const job = slot.job;
      slot.job = null;
      if (job) job.resolve(failedOutcome(job.spec, `WorkerCrash: the worker thread running this cell ${why}`));
      this.pump();
    };
    worker.on("error", (e) => crashed(`threw ${e instanceof Error ? `${e.name}: ${e.message}` : String(e)}`));
    worker.on("exit", (code) => crashed(`exited with code ${code}`));
    return worker;
  }

  private pump(): void {
    if (this.closed) return;
    for (let s = 0; s < this.slots.length; s++) {
      const slot = this.slots[s];
      if (this.queue.length === 0) return;
      if (slot.job) continue;
      // This slot's own lane first (its worker caches that lane's inputs and references), else the
      // oldest task of any lane.
      const own = this.queue.findIndex((j) => j.lane === s);
      const job = this.queue.splice(Math.max(own, 0), 1)[0];
      slot.worker ??= this.spawn(slot);
      slot.job = job;
      slot.worker.postMessage({ id: job.id, spec: job.spec });
    }
  }

  /** Stops every worker; tasks in flight or queued resolve as cancelled. */
  async destroy(): Promise<void> {
    this.closed = true;
    this.cancelPending();
    const stops: Promise<number>[] = [];
    for (const slot of this.slots) {
      const w = slot.worker;
      const job = slot.job;
      slot.worker = null;
      slot.job = null;
      if (job) job.resolve(cancelledOutcome(job.spec, "interrupted"));
      if (w) stops.push(w.terminate());
    }
    await Promise.all(stops);
  }
}
