/**
 * A worker_threads pool that survives crashing workers.
 *
 * tinypool 2.2 was tried first and rejected: a task whose worker thread exits (process.exit in the
 * worker, a fatal error) never settles, so one crashing cell would hang the whole sweep. This pool
 * gives each worker one task at a time; if the worker exits or errors mid-task, that task resolves
 * as failed ("WorkerCrash: …"), the worker is replaced and the other tasks go on.
 */
import { availableParallelism } from "node:os";
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

/** Default worker count: the machine's available parallelism (at least 1). */
export function defaultWorkerCount(): number {
  return Math.max(1, availableParallelism());
}

/** A fixed-size pool of worker threads running `executeTask`. */
export class WorkerPool {
  private readonly slots: Slot[];
  private readonly queue: Job[] = [];
  private readonly workerUrl: URL;
  private nextId = 0;
  private closed = false;

  /**
   * @param size number of worker threads.
   * @param workerUrl the worker entry. @default {@link sweepWorkerUrl}()
   */
  constructor(size: number, workerUrl: URL = sweepWorkerUrl()) {
    this.workerUrl = workerUrl;
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
