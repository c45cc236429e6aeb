/**
 * A worker pool started before the plan is read (`new WorkerPool(n).start()`, what the CLI does so
 * that the workers load while it validates the config; issue 14) runs the sweep like runPlan's own
 * pool — the same results.csv, byte for byte — and runPlan closes it in every case: after a run,
 * when nothing is left to run, and when it throws before running anything.
 */
import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { type TaskSpec, WorkerPool, expandPlan, loadConfigObject, runPlan } from "@randattn/experiments/internal";
import { requireBuild, tempDir, tinyConfig } from "../helpers.js";

/** The built worker (vitest resolves the package to src/, where there is no worker.js). */
const workerUrl = new URL("../../dist/run/worker.js", import.meta.url);
const plan = () => expandPlan(loadConfigObject(tinyConfig(), "/tmp", "tiny.yaml"));
const quiet = { progress: "none", report: false, log: () => {} } as const;
const spec: TaskSpec = {
  key: "k",
  index: 0,
  trial: 0,
  rootSeed: 1,
  problem: { generator: "gaussian", params: { n: 5, nQueries: 0, d: 3, dv: 2, scale: 1 } },
  kernel: { kind: "softmax" },
  mask: null,
  method: { name: "exact", params: {} },
  metrics: ["rel_frobenius_error"],
  baseDir: "/tmp",
};
const closed = async (pool: WorkerPool) => expect((await pool.run(spec)).error).toMatch(/the pool was closed/);

describe("runPlan with a pre-started pool", () => {
  it("the same results as in-process, and the pool is closed afterwards — also when nothing was left to run", async () => {
    requireBuild();
    const dir = tempDir();
    await runPlan(plan(), { ...quiet, outRoot: join(dir, "inline"), workers: 0 });
    const pool = new WorkerPool(2, workerUrl).start();
    const r = await runPlan(plan(), { ...quiet, outRoot: join(dir, "pool"), workers: 2, pool });
    expect(r.ran).toBe(8);
    const csv = (sub: string) => readFileSync(join(dir, sub, "tiny", "results.csv"), "utf8");
    expect(csv("pool")).toBe(csv("inline"));
    await closed(pool);
    const again = new WorkerPool(2, workerUrl).start();
    expect((await runPlan(plan(), { ...quiet, outRoot: join(dir, "pool"), workers: 2, pool: again })).ran).toBe(0);
    await closed(again);
  });

  it("keepPool: the pool outlives the plan, serves the next one on the same workers (the same bytes), and the caller closes it", async () => {
    requireBuild();
    const dir = tempDir();
    await runPlan(plan(), { ...quiet, outRoot: join(dir, "inline"), workers: 0 });
    const pool = new WorkerPool(2, workerUrl).start();
    for (const sub of ["first", "second"]) {
      const r = await runPlan(plan(), { ...quiet, outRoot: join(dir, sub), workers: 2, pool, keepPool: true });
      expect(r.ran).toBe(8);
      expect(readFileSync(join(dir, sub, "tiny", "results.csv"), "utf8")).toBe(
        readFileSync(join(dir, "inline", "tiny", "results.csv"), "utf8"),
      );
    }
    // Also kept when runPlan throws; still open here, then closed by its owner.
    const file = join(dir, "not-a-folder");
    writeFileSync(file, "");
    await expect(runPlan(plan(), { ...quiet, outRoot: file, workers: 2, pool, keepPool: true })).rejects.toThrow();
    expect((await pool.run(spec)).status).toBe("ok");
    await pool.destroy();
    await closed(pool);
  });

  it("closed when runPlan throws before running anything", async () => {
    const dir = tempDir();
    const file = join(dir, "not-a-folder");
    writeFileSync(file, "");
    const pool = new WorkerPool(1, workerUrl).start();
    await expect(runPlan(plan(), { ...quiet, outRoot: file, workers: 1, pool })).rejects.toThrow();
    await closed(pool);
  });
});
