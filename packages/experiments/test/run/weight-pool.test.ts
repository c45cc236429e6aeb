// The runner's reused N_Q × N_KV weight buffers (run/weight-pool.ts, issue 14): a buffer goes back
// only when the pool lent it, once; and the tasks' numbers do not depend on which buffers they got
// (the order of the tasks decides that).
import { describe, expect, it } from "vitest";
import { Matrix } from "@randattn/core";
import { MAX_MATERIALIZED_SCORES, type TaskSpec, WeightPool, executeTask } from "@randattn/experiments/internal";

describe("WeightPool", () => {
  it("lends a returned buffer again, by identity and exact length", () => {
    const pool = new WeightPool();
    const a = pool.take(12);
    expect(a.length).toBe(12);
    pool.give([new Matrix(3, 4, a)]);
    expect(pool.take(6)).not.toBe(a); // another length: a fresh one
    const b = pool.take(12);
    expect(b.buffer).toBe(a.buffer);
    expect(pool.take(12).buffer).not.toBe(a.buffer); // lent out again: not twice
  });

  it("takes back only what it lent, and only once", () => {
    const pool = new WeightPool();
    const own = new Float64Array(12); // a method's own weights: never reused
    pool.give([new Matrix(3, 4, own)]);
    expect(pool.take(12).buffer).not.toBe(own.buffer);
    const a = pool.take(8);
    pool.give([new Matrix(2, 4, a)]);
    pool.give([new Matrix(2, 4, a)]); // a second give of the same buffer is ignored
    const x = pool.take(8);
    const y = pool.take(8);
    expect(x.buffer).toBe(a.buffer);
    expect(y.buffer).not.toBe(a.buffer);
    pool.give(null);
    pool.give(undefined);
  });

  it("keeps at most maxFloats", () => {
    const pool = new WeightPool(20);
    const a = pool.take(16);
    const b = pool.take(16);
    pool.give([new Matrix(4, 4, a), new Matrix(4, 4, b)]); // 32 > 20: b is left to the collector
    expect(pool.take(16).buffer).toBe(a.buffer);
    expect(pool.take(16).buffer).not.toBe(b.buffer);
  });
});

describe("tasks sharing the runner's weight buffers", () => {
  const metrics = ["rel_frobenius_error", "max_abs_error", "mean_kl_divergence"] as const;
  const spec = (method: string, params: Record<string, unknown>, trial: number, index: number): TaskSpec => ({
    key: `${method}/${trial}`,
    index,
    trial,
    rootSeed: 7,
    problem: { generator: "gaussian", params: { n: 40, nQueries: 0, d: 6, dv: 3, scale: 1 } },
    kernel: { kind: "softmax" },
    mask: null,
    method: { name: method, params },
    metrics: [...metrics],
    baseDir: "/tmp",
  });
  const tasks = [0, 1, 2].flatMap((trial) => [
    spec("exact", {}, trial, 2 * trial),
    spec(
      "row-sampling",
      { samples: 8, scheme: "attention", design: "with-replacement", normalizer: "estimated", blockSize: 256 },
      trial,
      2 * trial + 1,
    ),
  ]);
  const numbers = (t: TaskSpec) => {
    const o = executeTask(t);
    expect(o.status, o.error).toBe("ok");
    return { metrics: o.metrics, extras: o.extras };
  };

  it("give the same numbers in any order (weights reused, stripped from older references, recomputed)", () => {
    // In order: each exact task's reference forms weights into pool buffers, the row-sampling task
    // after it reads them; then reversed and interleaved, so that references lose their weights to
    // newer ones and buffers come back holding another trial's P.
    const inOrder = tasks.map(numbers);
    const order = [5, 0, 3, 4, 1, 2, 0, 5];
    for (const i of order) expect(numbers(tasks[i])).toEqual(inOrder[i]);
    for (const o of inOrder.filter((_, i) => i % 2 === 0)) expect(o.metrics.mean_kl_divergence).toBe(0);
    for (const o of inOrder.filter((_, i) => i % 2 === 1)) expect(o.extras.dkm_expected_rel_error).toBeGreaterThan(0);
  });
});

describe("the exact method's result adopted as the reference (execute.ts)", () => {
  // The cache key holds baseDir, which the gaussian generator never reads: each scenario gets keys
  // of its own while its numbers stay comparable bit for bit.
  const spec = (method: string, params: Record<string, unknown>, baseDir: string, n = 40): TaskSpec => ({
    key: `${method}@${baseDir}`,
    index: 0,
    trial: 0,
    rootSeed: 11,
    problem: { generator: "gaussian", params: { n, nQueries: 0, d: 6, dv: 3, scale: 1 } },
    kernel: { kind: "softmax" },
    mask: null,
    method: { name: method, params },
    metrics: ["rel_frobenius_error", "rel_spectral_error", "max_abs_error", "mean_kl_divergence"],
    baseDir,
  });
  const rowSampling = { samples: 8, scheme: "attention", design: "with-replacement", normalizer: "estimated", blockSize: 256 };
  const ok = (t: TaskSpec) => {
    const o = executeTask(t);
    expect(o.status, o.error).toBe("ok");
    return o;
  };

  it("exact first: no reference computed apart, and every later number as when the reference was computed by another task first", () => {
    const exactFirst = ok(spec("exact", {}, "/tmp/adopt-a"));
    const rsAfter = ok(spec("row-sampling", rowSampling, "/tmp/adopt-a"));
    expect(exactFirst.referenceMs).toBe(0); // adopted: the method's run was the reference
    expect(rsAfter.referenceMs).toBe(0); // and the next task of the point found it cached
    const rsFirst = ok(spec("row-sampling", rowSampling, "/tmp/adopt-b"));
    const exactAfter = ok(spec("exact", {}, "/tmp/adopt-b"));
    expect(rsFirst.referenceMs).toBeGreaterThan(0); // computed by the reference path
    expect(exactAfter.referenceMs).toBe(0);
    expect(rsAfter.metrics).toEqual(rsFirst.metrics);
    expect(rsAfter.extras).toEqual(rsFirst.extras);
    expect(exactFirst.metrics).toEqual(exactAfter.metrics);
    expect(exactFirst.metrics).toEqual({ rel_frobenius_error: 0, rel_spectral_error: 0, max_abs_error: 0, mean_kl_divergence: 0 });
  });

  it("not past MAX_MATERIALIZED_SCORES: the streamed reference is computed apart (its bits differ from materialized attention)", () => {
    const n = Math.floor(Math.sqrt(MAX_MATERIALIZED_SCORES)) + 1; // N_Q·N_KV just past 2²⁴
    const big = { ...spec("exact", {}, "/tmp/adopt-c", n), metrics: ["rel_frobenius_error" as const] };
    const o = ok(big);
    expect(o.referenceMs).toBeGreaterThan(0);
    expect(o.metrics.rel_frobenius_error).toBeLessThan(1e-14);
  });
});
