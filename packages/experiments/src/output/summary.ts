/**
 * summary.csv: per cell and value column, n (ok trials), n_failed, mean, std, median, the 95%
 * Student-t confidence interval of the mean, min and max. Tidy long format (one row per cell ×
 * metric), rows in plan order, numbers formatted like results.csv.
 */
import type { Plan, Task } from "../plan/expand.js";
import type { JournalRecord } from "../base/records.js";
import { formatNumber, toCsv } from "../base/format.js";
import { cellColumns, cellValues, VALUE_COLUMNS } from "./results.js";
import { type SampleSummary, summarize } from "../base/stats.js";

/** One summary row in structured form (for tables and figures). */
export interface SummaryRow {
  readonly cell: number;
  readonly metric: string;
  readonly nFailed: number;
  readonly stats: SampleSummary;
}

/** The value of a value column in a record (null when absent). */
export function recordValue(r: JournalRecord, column: string): number | null {
  switch (column) {
    case "rel_frobenius_error":
      return r.metrics.rel_frobenius_error;
    case "rel_spectral_error":
      return r.metrics.rel_spectral_error;
    case "max_abs_error":
      return r.metrics.max_abs_error;
    case "mean_kl_divergence_nats":
      return r.metrics.mean_kl_divergence;
    case "flops":
      return r.flops;
    case "floats_stored":
      return r.floatsStored;
    case "wall_time_ms":
      return r.wallMs;
    default:
      return r.extras?.[column] ?? null;
  }
}

/**
 * Structured summary rows: for every cell, every value column (the fixed ones, then `extraColumns`)
 * that has at least one value.
 */
export function summaryRows(
  tasks: readonly Task[],
  records: ReadonlyMap<string, JournalRecord>,
  extraColumns: readonly string[] = [],
): SummaryRow[] {
  const byCell = new Map<number, JournalRecord[]>();
  for (const t of tasks) {
    const list = byCell.get(t.cell) ?? [];
    list.push(records.get(t.key)!);
    byCell.set(t.cell, list);
  }
  const rows: SummaryRow[] = [];
  for (const [cell, recs] of [...byCell.entries()].sort((a, b) => a[0] - b[0])) {
    const ok = recs.filter((r) => r.status === "ok");
    const nFailed = recs.length - ok.length;
    for (const metric of [...VALUE_COLUMNS, ...extraColumns]) {
      const values = ok.map((r) => recordValue(r, metric)).filter((v): v is number => v !== null);
      if (values.length === 0 && ok.length > 0) continue;
      rows.push({ cell, metric, nFailed, stats: summarize(values) });
    }
  }
  return rows;
}

/** summary.csv header. */
export function summaryColumns(plan: Plan): string[] {
  return [...cellColumns(plan), "metric", "n", "n_failed", "mean", "std", "median", "ci95_low", "ci95_high", "min", "max"];
}

/** summary.csv text. */
export function summaryCsv(plan: Plan, rows: readonly SummaryRow[]): string {
  return toCsv(
    summaryColumns(plan),
    rows.map((r) => [
      ...cellValues(plan, r.cell),
      r.metric,
      String(r.stats.n),
      String(r.nFailed),
      formatNumber(r.stats.mean),
      formatNumber(r.stats.std),
      formatNumber(r.stats.median),
      formatNumber(r.stats.ciLow),
      formatNumber(r.stats.ciHigh),
      formatNumber(r.stats.min),
      formatNumber(r.stats.max),
    ]),
  );
}
