/** Figure data from results: series of (x, mean y, band = min–max over trials) per series value. */
import type { FigureConfig } from "../config/schema.js";
import type { Plan, Task } from "../plan/expand.js";
import { parseNumber } from "../base/format.js";
import { cellColumns, cellValues } from "../output/results.js";
import { recordValue } from "../output/summary.js";
import type { JournalRecord } from "../base/records.js";
import type { Series, StyleLegend } from "./svg.js";

/** Dash patterns of reference curves, by position in `references`. */
export const REFERENCE_DASHES = ["6 4", "2 3", "10 3 2 3", "1 5"] as const;

/** Value of a column (cell column, value column or wall_time_ms) for one task. */
export function columnValue(plan: Plan, task: Task, record: JournalRecord, column: string): string | number | null {
  if (column === "trial") return task.trial;
  const v = recordValue(record, column);
  if (v !== null) return v;
  const i = cellColumns(plan).indexOf(column);
  if (i < 0) return null;
  return cellValues(plan, task.cell)[i];
}

/** Default figures: error against flops and against floats stored (or cache floats for accounting). */
export function defaultFigures(plan: Plan): FigureConfig[] {
  if (plan.cells.every((c) => c.problem.generator === "model-preset")) {
    return [{ name: "cache-floats", x: "problem_tokens", y: "floats_stored", title: "KV-cache floats" }];
  }
  return [
    { name: "error-vs-flops", x: "flops", y: "rel_frobenius_error", title: "Relative Frobenius error against cost" },
    { name: "error-vs-memory", x: "floats_stored", y: "rel_frobenius_error", title: "Relative Frobenius error against floats stored" },
  ];
}

/** The series of a figure (ok rows only), series in plan order, points by x. */
export function figureSeries(plan: Plan, tasks: readonly Task[], records: ReadonlyMap<string, JournalRecord>, fig: FigureConfig): Series[] {
  return groupSeries(plan, tasks, records, fig, fig.y ?? "rel_frobenius_error");
}

/**
 * The figure's series followed by its reference curves (`fig.references`): per reference column,
 * one dashed series per main series that has values there, in the main series' colour and
 * without its own legend entry; `styles` are the legend entries of the dash patterns.
 */
export function figureSeriesWithReferences(
  plan: Plan,
  tasks: readonly Task[],
  records: ReadonlyMap<string, JournalRecord>,
  fig: FigureConfig,
): { series: Series[]; styles: StyleLegend[] } {
  const main = figureSeries(plan, tasks, records, fig);
  const colour = new Map(main.map((s, i) => [s.name, i]));
  const series: Series[] = main.map((s, i) => ({ ...s, colorIndex: i }));
  const styles: StyleLegend[] = [];
  (fig.references ?? []).forEach((ref, r) => {
    const dash = REFERENCE_DASHES[r % REFERENCE_DASHES.length];
    const refs = groupSeries(plan, tasks, records, fig, ref.y).filter((s) => s.points.length > 0);
    if (refs.length === 0) return;
    styles.push({ label: ref.label, dash });
    for (const s of refs) {
      // A reference group with no main series of the same name gets a colour after the main ones.
      if (!colour.has(s.name)) colour.set(s.name, colour.size);
      series.push({ ...s, colorIndex: colour.get(s.name), dash, inLegend: false });
    }
  });
  return { series, styles };
}

function groupSeries(
  plan: Plan,
  tasks: readonly Task[],
  records: ReadonlyMap<string, JournalRecord>,
  fig: FigureConfig,
  y: string,
): Series[] {
  const x = fig.x ?? "flops";
  const s = fig.series ?? "method_label";
  const groups = new Map<string, Map<number, number[]>>();
  for (const t of tasks) {
    const r = records.get(t.key);
    if (r?.status !== "ok") continue;
    if (fig.where && Object.entries(fig.where).some(([col, want]) => String(columnValue(plan, t, r, col) ?? "") !== String(want))) continue;
    const name = String(columnValue(plan, t, r, s) ?? "");
    const xv = toNumber(columnValue(plan, t, r, x));
    const yv = toNumber(columnValue(plan, t, r, y));
    if (xv === null || yv === null) continue;
    let g = groups.get(name);
    if (!g) groups.set(name, (g = new Map()));
    const list = g.get(xv) ?? [];
    list.push(yv);
    g.set(xv, list);
  }
  return [...groups.entries()].map(([name, g]) => ({
    name,
    points: [...g.entries()]
      .sort((a, b) => a[0] - b[0])
      .map(([xv, ys]) => ({ x: xv, y: ys.reduce((a, b) => a + b, 0) / ys.length, lo: Math.min(...ys), hi: Math.max(...ys) })),
  }));
}

function toNumber(v: string | number | null): number | null {
  if (v === null) return null;
  if (typeof v === "number") return v;
  const n = parseNumber(v);
  return n === null || Number.isNaN(n) ? null : n;
}
