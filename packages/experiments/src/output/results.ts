/**
 * results.csv and timings.csv: one row per (cell, trial), in plan order, fixed columns.
 *
 * results.csv holds only what is a deterministic function of the config (no times, no hosts),
 * so it is byte-identical across reruns, worker counts and shard counts.
 */
import type { MetricName } from "../config/schema.js";
import { type Plan, type Task, paramText } from "../plan/expand.js";
import type { JournalRecord } from "../base/records.js";
import { formatNumber, snakeCase, toCsv } from "../base/format.js";

export { snakeCase } from "../base/format.js";

/** results.csv column of each error metric (units in the name where there are units). */
export const METRIC_COLUMNS: Record<MetricName, string> = {
  rel_frobenius_error: "rel_frobenius_error",
  rel_spectral_error: "rel_spectral_error",
  max_abs_error: "max_abs_error",
  mean_kl_divergence: "mean_kl_divergence_nats",
};

/** Numeric columns of results.csv summarized in summary.csv, in order. */
export const VALUE_COLUMNS = [...Object.values(METRIC_COLUMNS), "flops", "floats_stored"] as const;

/** The identifying columns of a cell (everything before `trial`). */
export function cellColumns(plan: Plan): string[] {
  return [
    "experiment",
    "cell",
    "problem",
    ...plan.problemParams.map((p) => `problem_${snakeCase(p)}`),
    "method",
    "method_label",
    ...plan.methodParams.map((p) => `param_${snakeCase(p)}`),
  ];
}

/**
 * The full header of results.csv: the cell columns, `trial, status, error`, the fixed value
 * columns, then the plan's extra metric columns (sorted by name; none for plans whose methods
 * declare no `extraMetrics`, so such results keep exactly the fixed columns).
 */
export function resultColumns(plan: Plan): string[] {
  return [...cellColumns(plan), "trial", "status", "error", ...VALUE_COLUMNS, ...plan.extraColumns];
}

/** The identifying values of a cell, aligned with `cellColumns`. */
export function cellValues(plan: Plan, cellIndex: number): string[] {
  const c = plan.cells[cellIndex];
  return [
    plan.loaded.config.experiment,
    c.id,
    c.problemLabel,
    ...plan.problemParams.map((p) => paramText(c.problem.params[p])),
    c.method.name,
    c.method.label,
    ...plan.methodParams.map((p) => paramText(c.method.params[p])),
  ];
}

/** One results.csv row. */
export function resultRow(plan: Plan, task: Task, record: JournalRecord): string[] {
  const m = record.metrics;
  return [
    ...cellValues(plan, task.cell),
    String(task.trial),
    record.status,
    record.error,
    formatNumber(m.rel_frobenius_error),
    formatNumber(m.rel_spectral_error),
    formatNumber(m.max_abs_error),
    formatNumber(m.mean_kl_divergence),
    formatNumber(record.flops),
    formatNumber(record.floatsStored),
    ...plan.extraColumns.map((c) => formatNumber(record.extras?.[c] ?? null)),
  ];
}

/** results.csv text for the given tasks (plan order) and their records. */
export function resultsCsv(plan: Plan, tasks: readonly Task[], records: ReadonlyMap<string, JournalRecord>): string {
  return toCsv(
    resultColumns(plan),
    tasks.map((t) => resultRow(plan, t, records.get(t.key)!)),
  );
}

/** timings.csv header. */
export const TIMING_COLUMNS = ["cell", "trial", "method_label", "status", "wall_time_ms", "setup_time_ms", "session"] as const;

/** timings.csv text (wall times and sessions: not reproducible, kept out of results.csv). */
export function timingsCsv(plan: Plan, tasks: readonly Task[], records: ReadonlyMap<string, JournalRecord>): string {
  return toCsv(
    [...TIMING_COLUMNS],
    tasks.map((t) => {
      const r = records.get(t.key)!;
      const c = plan.cells[t.cell];
      return [c.id, String(t.trial), c.method.label, r.status, r.wallMs.toFixed(3), r.setupMs.toFixed(3), r.session];
    }),
  );
}
