/**
 * The Web Worker that runs a sweep: the config is validated and expanded exactly as the CLI does,
 * every task runs through the experiments' `executeTask` (WebAssembly SIMD128 kernels where the
 * browser has them), and after each task the worker posts progress, the figures and results.csv.
 */
import {
  executeTask,
  expandPlan,
  type JournalRecord,
  loadConfigObject,
  planTasks,
  resultsCsv,
  taskSpec,
} from "@randattn/experiments/browser";
import { wasmSimdAvailable } from "@randattn/core";
import { figureSvgs } from "./sweep.js";

export type WorkerReply =
  | { type: "progress"; done: number; total: number; svgs: string[]; csv: string; failed: number }
  | { type: "done"; done: number; total: number; svgs: string[]; csv: string; failed: number; ms: number; simd: boolean }
  | { type: "error"; message: string };

const post = (m: WorkerReply) => (self as unknown as Worker).postMessage(m);

self.onmessage = (event: MessageEvent<{ config: unknown }>) => {
  const t0 = performance.now();
  try {
    const plan = expandPlan(loadConfigObject(event.data.config, "/", "playground"));
    const tasks = planTasks(plan);
    const records = new Map<string, JournalRecord>();
    let failed = 0;
    let lastPost = 0;
    // results.csv of the tasks finished so far (plan order, as the CLI writes it at the end).
    const partialCsv = () =>
      resultsCsv(
        plan,
        tasks.filter((t) => records.has(t.key)),
        records,
      );
    for (const [i, task] of tasks.entries()) {
      const outcome = executeTask(taskSpec(plan, task));
      if (outcome.status !== "ok") failed++;
      records.set(task.key, { ...outcome, type: "task", session: "playground" });
      const now = performance.now();
      if (now - lastPost > 150 && i + 1 < tasks.length) {
        lastPost = now;
        post({ type: "progress", done: i + 1, total: tasks.length, svgs: figureSvgs(plan, tasks, records), csv: partialCsv(), failed });
      }
    }
    post({
      type: "done",
      done: tasks.length,
      total: tasks.length,
      svgs: figureSvgs(plan, tasks, records),
      csv: resultsCsv(plan, tasks, records),
      failed,
      ms: performance.now() - t0,
      simd: wasmSimdAvailable(),
    });
  } catch (e) {
    post({ type: "error", message: e instanceof Error ? `${e.name}: ${e.message}` : String(e) });
  }
};
