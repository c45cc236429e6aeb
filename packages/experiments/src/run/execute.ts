/**
 * Runs one (cell, trial) task: generate the inputs, compute (or reuse) the exact reference, run
 * the method, measure its error. Used by worker threads and by the in-process runner (workers 0),
 * so both give the same numbers. Never throws: a failure becomes `status: "failed"` with a message.
 */
import { concatCols, type Matrix, streamingAttention } from "@randattn/core";
import type { MetricName, MetricValues, TaskOutcome } from "../base/records.js";
import type { ConfigMetricName } from "../config/schema.js";
import { literatureMetrics } from "../metrics/literature.js";
import type { Plan, Task } from "../plan/expand.js";
import { exact, exactAttention } from "../registry/exact.js";
import { getMethod } from "../registry/methods.js";
import { getProblem } from "../registry/problems.js";
import type { KernelSpec, MaskSpec, Params, ProblemInstance } from "../registry/types.js";
import { inputSeed, methodSeed } from "../plan/seeds.js";
import { maxAbsError, meanKlDivergence, relativeFrobenius, relativeSpectral, spectralNorm } from "../base/metrics.js";
import { attentionOptions } from "../registry/kernel.js";
import { WeightPool } from "./weight-pool.js";

/** Everything a worker needs to run one task (plain data: structured-cloneable). */
export interface TaskSpec {
  readonly key: string;
  readonly index: number;
  readonly trial: number;
  readonly rootSeed: number;
  readonly problem: { readonly generator: string; readonly params: Params };
  readonly kernel: KernelSpec;
  readonly mask: MaskSpec | null;
  readonly method: { readonly name: string; readonly params: Params };
  readonly metrics: readonly ConfigMetricName[];
  readonly baseDir: string;
}

export type { MetricValues, TaskOutcome } from "../base/records.js";

/** The TaskSpec a worker receives for `task`. */
export function taskSpec(plan: Plan, task: Task): TaskSpec {
  const c = plan.cells[task.cell];
  const { loaded } = plan;
  return {
    key: task.key,
    index: task.index,
    trial: task.trial,
    rootSeed: loaded.config.seed,
    problem: c.problem,
    kernel: loaded.problems[c.problemIndex].kernel,
    mask: loaded.problems[c.problemIndex].mask,
    method: { name: c.method.name, params: c.method.params },
    metrics: loaded.metrics,
    baseDir: loaded.baseDir,
  };
}

/** Largest N_Q·N_KV for which the reference is materialized (and KL available); beyond, streaming. */
export const MAX_MATERIALIZED_SCORES = 1 << 24;

interface Reference {
  instance: ProblemInstance;
  output: Matrix | null;
  weights: Matrix[] | null;
  /** ‖output‖₂, computed by the first task that wants rel_spectral_error (`spectralNorm`). */
  outputNorm?: number;
}

// A tiny cache: consecutive tasks of one problem point and trial (every method of a cell row)
// reuse the inputs and the reference instead of recomputing them.
const cache = new Map<string, Reference>();
/** The weight buffers this thread's runner lends and reuses (weight-pool.ts). */
const pool = new WeightPool();
const CACHE_SIZE = 4;
/** Wall time of the exact reference the current task computed, ms (0 on a cache hit or an adopted one). */
let lastReferenceMs = 0;

/** The cache key of a task's reference: everything its inputs and exact output depend on. */
function referenceKey(spec: TaskSpec): string {
  return JSON.stringify([
    spec.rootSeed,
    spec.problem,
    spec.kernel.kind === "dot" ? spec.kernel.formula : "",
    spec.kernel.scale ?? null,
    spec.mask,
    spec.trial,
    spec.baseDir,
  ]);
}

/**
 * The reference cached under `key` when it serves (it has the weights now wanted, or cannot have
 * any); else undefined, and when weights are wanted the cached references' weights go back to the
 * pool first (only the newest reference keeps weights: the others' buffers serve this one — a later
 * task of an older point still gets its reference, and a row-sampling reference value forms P
 * itself, into a reused buffer — the same bits; only the exact method wants weights, once per point
 * and trial). Without this the quickstart's three trials kept 3 × 16 MiB of fresh weights.
 */
function cachedReference(key: string, wantWeights: boolean): Reference | undefined {
  const hit = cache.get(key);
  if (hit && (!wantWeights || hit.weights !== null || hit.output === null)) return hit;
  if (wantWeights) {
    for (const other of cache.values()) {
      pool.give(other.weights);
      other.weights = null;
    }
  }
  return undefined;
}

/** The task's inputs: those of the cached reference under `key` when there is one (same bits), else generated. */
function instanceFor(spec: TaskSpec, key: string, wantWeights: boolean): ProblemInstance {
  const hit = cache.get(key);
  if (hit) return hit.instance;
  const gen = getProblem(spec.problem.generator);
  const seed = inputSeed(spec.rootSeed, gen.name, spec.problem.params, gen.structuralParams, spec.trial);
  return gen.generate(spec.problem.params, { baseDir: spec.baseDir, wantWeights, kernel: spec.kernel, mask: spec.mask }, seed);
}

/** Whether the reference of `instance` is materialized attention (`exactAttention`), not streamed. */
function materialized(instance: ProblemInstance): boolean {
  return instance.heads.every((h) => h.queries.rows * h.keys.rows <= MAX_MATERIALIZED_SCORES);
}

/** Caches `ref` under `key` as the newest reference (the oldest beyond CACHE_SIZE goes, its weights to the pool). */
function remember(key: string, ref: Reference): Reference {
  cache.delete(key);
  cache.set(key, ref);
  while (cache.size > CACHE_SIZE) {
    const oldest = cache.keys().next().value as string;
    pool.give(cache.get(oldest)?.weights);
    cache.delete(oldest);
  }
  return ref;
}

/**
 * The exact output (and weights when wanted) of `instance`, cached under `key`; its time in
 * `lastReferenceMs`. On a hit without the weights now wanted it is recomputed: the output is the
 * same bits either way (see exactAttention).
 */
function computeReference(key: string, instance: ProblemInstance, wantWeights: boolean): Reference {
  let ref: Reference;
  const tRef = performance.now();
  if (instance.heads.length === 0) ref = { instance, output: null, weights: null };
  else if (materialized(instance)) {
    const r = exactAttention(instance, wantWeights, (_h, n) => pool.take(n));
    ref = { instance, output: r.output, weights: r.weights ? [...r.weights] : null };
  } else {
    const opts = attentionOptions(instance.kernel, instance.mask);
    ref = {
      instance,
      output: concatCols(instance.heads.map((h) => streamingAttention(h.queries, h.keys, h.values, opts))),
      weights: null,
    };
  }
  lastReferenceMs = performance.now() - tRef;
  return remember(key, ref);
}

/** One line, bounded: `Name: message`. Deterministic for deterministic failures. */
export function errorText(e: unknown): string {
  const text = e instanceof Error ? `${e.name}: ${e.message}` : `Error: ${String(e)}`;
  const line = text.replace(/\s+/g, " ").trim();
  return line.length > 500 ? `${line.slice(0, 497)}...` : line;
}

const NO_METRICS: MetricValues = { rel_frobenius_error: null, rel_spectral_error: null, max_abs_error: null, mean_kl_divergence: null };

/** Runs a task. Never throws. */
export function executeTask(spec: TaskSpec): TaskOutcome {
  const t0 = performance.now();
  let setupMs = 0;
  try {
    const method = getMethod(spec.method.name);
    const wantWeights = method.exposesWeights && spec.metrics.includes("mean_kl_divergence");
    // The exact method computes the reference itself: `exactAttention` with the same arguments (it
    // takes no params; its weights come from the same pool). When its task is the first of a
    // (problem point, trial) here, its result becomes the reference rather than the same attention
    // being formed twice — a tenth of the quickstart's task time (issue 14, stop 38). Not for a
    // streamed reference (N_Q·N_KV past MAX_MATERIALIZED_SCORES), whose bits differ from it.
    const key = referenceKey(spec);
    lastReferenceMs = 0;
    let ref = cachedReference(key, wantWeights);
    let adopt: ProblemInstance | null = null;
    if (!ref) {
      const generated = instanceFor(spec, key, wantWeights);
      if (method === exact && generated.heads.length > 0 && materialized(generated)) adopt = generated;
      else ref = computeReference(key, generated, wantWeights);
    }
    const instance = adopt ?? (ref as Reference).instance;
    const t1 = performance.now();
    setupMs = t1 - t0;
    const seed = methodSeed(spec.rootSeed, spec.method.name, spec.method.params, spec.trial);
    const weightsBuffer = wantWeights ? (_h: number, n: number) => pool.take(n) : undefined;
    const result = method.run(instance, spec.method.params, { baseDir: spec.baseDir, wantWeights, weightsBuffer }, seed);
    const t2 = performance.now();
    const wallMs = t2 - t1;
    // Adopted: the reference keeps the method's output and weights (their buffers stay lent).
    if (adopt)
      ref = remember(key, { instance: adopt, output: result.output ?? null, weights: result.weights ? [...result.weights] : null });
    if (ref === undefined) throw new Error("internal: a task without its reference");
    const referenceMs = lastReferenceMs;
    const references = method.references?.(ref.instance, spec.method.params, ref.weights ? { weights: ref.weights } : {}) ?? {};
    const metrics: MetricValues = { ...NO_METRICS };
    if (result.output && ref.output) {
      const want = (m: MetricName) => spec.metrics.includes(m);
      if (want("rel_frobenius_error")) metrics.rel_frobenius_error = relativeFrobenius(result.output, ref.output);
      if (want("rel_spectral_error")) {
        ref.outputNorm ??= spectralNorm(ref.output);
        metrics.rel_spectral_error = relativeSpectral(result.output, ref.output, ref.outputNorm);
      }
      if (want("max_abs_error")) metrics.max_abs_error = maxAbsError(result.output, ref.output);
      if (wantWeights && result.weights && ref.weights) metrics.mean_kl_divergence = meanKlDivergence(result.weights, ref.weights);
    }
    // The method's weights are read: its buffers that the pool lent go back (the others stay its
    // own) — unless the reference adopted them.
    if (!adopt) pool.give(result.weights);
    const extras: Record<string, number | null> = {};
    const literature = result.output && ref.output ? literatureMetrics(spec.metrics, result.output, ref.output, ref.instance) : {};
    for (const name of [...(method.extraMetrics ?? []).map((e) => e.name), ...Object.keys(literature)]) {
      const v =
        name in literature ? literature[name as keyof typeof literature] : name in references ? references[name] : result.extras?.[name];
      // JSON (the journal) cannot hold ±Inf/NaN, and a reference that is not finite is not plotted.
      extras[name] = typeof v === "number" && Number.isFinite(v) ? v : null;
    }
    return {
      key: spec.key,
      index: spec.index,
      status: "ok",
      error: "",
      metrics,
      flops: result.cost.flops,
      floatsStored: result.cost.floatsStored,
      extras,
      wallMs,
      setupMs,
      referenceMs,
      metricsMs: performance.now() - t2,
    };
  } catch (e) {
    return failedOutcome(spec, errorText(e), performance.now() - t0 - setupMs, setupMs);
  }
}

/** The outcome recorded for a task that failed outside `executeTask` (e.g. its worker crashed). */
export function failedOutcome(spec: Pick<TaskSpec, "key" | "index">, error: string, wallMs = 0, setupMs = 0): TaskOutcome {
  return {
    key: spec.key,
    index: spec.index,
    status: "failed",
    error,
    metrics: { ...NO_METRICS },
    flops: null,
    floatsStored: null,
    wallMs,
    setupMs,
  };
}

/** The outcome of a task stopped before it finished (not a result: it is run again on resume). */
export function cancelledOutcome(spec: Pick<TaskSpec, "key" | "index">, why: string): TaskOutcome {
  return { ...failedOutcome(spec, `Cancelled: ${why}`), status: "cancelled" };
}
