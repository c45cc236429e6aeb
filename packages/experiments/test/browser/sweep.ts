/**
 * A tiny sweep through `@randattn/experiments/browser` only: what the browser-bundle test runs in
 * a context with only browser globals, and in Node for the reference. Returns results.csv text.
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

export const TINY_CONFIG = {
  experiment: "browser-tiny",
  seed: 7,
  trials: 2,
  problem: { generator: "gaussian", params: { n: 48, d: 8 } },
  methods: [
    { method: "exact" },
    { method: "row-sampling", params: { scheme: "uniform" } },
    { method: "random-features", params: { features: "positive" } },
  ],
  sweep: { "row-sampling.samples": [8, 16], "random-features.numFrequencies": [8, 16] },
};

export function runTinySweep(config: unknown = TINY_CONFIG): string {
  const plan = expandPlan(loadConfigObject(config, "/"));
  const tasks = planTasks(plan);
  const records = new Map<string, JournalRecord>();
  for (const t of tasks) records.set(t.key, { ...executeTask(taskSpec(plan, t)), type: "task", session: "browser" });
  return resultsCsv(plan, tasks, records);
}
