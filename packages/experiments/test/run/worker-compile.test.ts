/**
 * Where a sweep worker compiles (WorkerPool's `compile`, pool.ts `WorkerCompileMode`): "auto" moves
 * V8's optimizing compiler into the workers only when they take every core; a pool of each mode
 * really gives its workers that placement (V8's own trace says so); and the results are the same
 * bytes either way.
 */
import { spawnSync } from "node:child_process";
import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import { WorkerPool, expandPlan, loadConfigObject, resolveCompileMode, runPlan } from "@randattn/experiments/internal";
import { requireBuild, tempDir, tinyConfig } from "../helpers.js";

const workerUrl = new URL("../../dist/run/worker.js", import.meta.url);
const poolJs = fileURLToPath(new URL("../../dist/run/pool.js", import.meta.url));

describe("WorkerPool compile placement", () => {
  it('"auto": in the workers exactly when the pool has a worker for every core; explicit modes as given', () => {
    expect(resolveCompileMode("auto", 2, 2)).toBe("in-worker");
    expect(resolveCompileMode("auto", 3, 2)).toBe("in-worker");
    expect(resolveCompileMode("auto", 1, 2)).toBe("concurrent");
    expect(resolveCompileMode("auto", 7, 8)).toBe("concurrent");
    expect(resolveCompileMode("concurrent", 4, 2)).toBe("concurrent");
    expect(resolveCompileMode("in-worker", 1, 8)).toBe("in-worker");
  });

  it("a pool's workers compile where its mode says (V8's --trace-opt, in a child process)", () => {
    requireBuild();
    const dir = tempDir();
    // A stand-in worker: one hot function, optimized while the task runs, then the reply the pool waits for.
    const worker = join(dir, "hot-worker.mjs");
    writeFileSync(
      worker,
      `import { parentPort } from "node:worker_threads";
function hotLoop(n) { let s = 0; for (let i = 0; i < n; i++) s += Math.sqrt(i); return s; }
parentPort.on("message", ({ id }) => { let t = 0; for (let k = 0; k < 3000; k++) t += hotLoop(2000); parentPort.postMessage({ id, outcome: { t } }); });
`,
    );
    const main = join(dir, "main.mjs");
    writeFileSync(
      main,
      `import { WorkerPool } from ${JSON.stringify(poolJs)};
const pool = new WorkerPool(1, new URL(${JSON.stringify(`file://${worker}`)}), process.argv[2]);
await pool.run({ key: "k", index: 0 });
await pool.destroy();
`,
    );
    const compiles = (mode: string) => {
      const r = spawnSync(process.execPath, ["--trace-opt", main, mode], { encoding: "utf8" });
      expect(r.status, r.stderr).toBe(0);
      // V8 prints "compiling method … hotLoop … mode: ConcurrencyMode::k…" for each compile of it.
      return [...r.stdout.matchAll(/compiling method [^\n]*hotLoop[^\n]*mode: ConcurrencyMode::(k\w+)/g)].map((m) => m[1]);
    };
    const inWorker = compiles("in-worker");
    expect(inWorker.length).toBeGreaterThan(0);
    expect(new Set(inWorker)).toEqual(new Set(["kSynchronous"]));
    const concurrent = compiles("concurrent");
    expect(concurrent.length).toBeGreaterThan(0);
    expect(new Set(concurrent)).toEqual(new Set(["kConcurrent"]));
  });

  it("the same results.csv, byte for byte, whichever placement the workers compile with", async () => {
    requireBuild();
    const dir = tempDir();
    const plan = () => expandPlan(loadConfigObject(tinyConfig(), "/tmp", "tiny.yaml"));
    const quiet = { progress: "none", report: false, log: () => {} } as const;
    await runPlan(plan(), { ...quiet, outRoot: join(dir, "inline"), workers: 0 });
    // "concurrent" last: the process's flag is V8's default again for the tests after this one.
    for (const mode of ["in-worker", "concurrent"] as const) {
      const pool = new WorkerPool(2, workerUrl, mode).start();
      await runPlan(plan(), { ...quiet, outRoot: join(dir, mode), workers: 2, pool });
      const csv = (sub: string) => readFileSync(join(dir, sub, "tiny", "results.csv"), "utf8");
      expect(csv(mode)).toBe(csv("inline"));
    }
  });
});
