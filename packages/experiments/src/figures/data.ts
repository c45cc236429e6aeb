/**
 * Figure data from results, built so a figure never misleads:
 * - a line joins only cells that differ in its x variable (or in one knob that moves together with
 *   x one-to-one, such as a method's sample count along flops, whose values label the points);
 *   every other swept column is a facet (default: every swept problem parameter), part of the
 *   series (default: the method label), or averaged only when the figure says so (`average`), and
 *   then the caption names it;
 * - the band is the two-sided 95 % Student-t confidence interval of the mean over trials (or
 *   min–max, or none, on request), and the caption says which;
 * - a series whose values are all zero on a log y axis (the exact method) is drawn as a vertical
 *   line at its x (its cost), so every sketch is read against what exact would cost.
 */
import { columnLabel, shortLabel } from "../base/labels.js";
import { parseNumber } from "../base/format.js";
import type { JournalRecord } from "../base/records.js";
import { summarize } from "../base/stats.js";
import type { FigureConfig } from "../config/schema.js";
import { cellColumns, cellValues } from "../output/results.js";
import { recordValue } from "../output/summary.js";
import type { Plan, Task } from "../plan/expand.js";
import type { Panel, Series, StyleLegend, VerticalLine } from "./svg.js";

/** Dash patterns of reference curves, by position in `references`. */
export const REFERENCE_DASHES = ["6 4", "2 3", "10 3 2 3", "1 5"] as const;

/** Columns that identify a cell but never vary meaningfully in a figure. */
const NOT_SWEPT = new Set(["experiment", "cell", "method", "trial"]);

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
    return [{ name: "cache-floats", x: "problem_tokens", y: "floats_stored", title: "KV-cache floats against tokens" }];
  }
  return [
    { name: "error-vs-flops", x: "flops", y: "rel_frobenius_error", title: "Relative Frobenius error against cost" },
    { name: "error-vs-memory", x: "floats_stored", y: "rel_frobenius_error", title: "Relative Frobenius error against floats stored" },
  ];
}

/** Everything a figure draws, and the caption that says what it shows. */
export interface FigureData {
  readonly panels: Panel[];
  readonly styles: StyleLegend[];
  readonly xLabel: string;
  readonly yLabel: string;
  readonly caption: string;
}

const list = (v: string | string[] | undefined, fallback: string[]): string[] => (v === undefined ? fallback : Array.isArray(v) ? v : [v]);

function toNumber(v: string | number | null): number | null {
  if (v === null) return null;
  if (typeof v === "number") return v;
  const n = parseNumber(v);
  return n === null || Number.isNaN(n) ? null : n;
}

interface Row {
  task: Task;
  record: JournalRecord;
  cellValues: Map<string, string>;
}

/** The columns (of `columns`) taking more than one value over `rows`. */
function varying(rows: readonly Row[], columns: readonly string[]): string[] {
  return columns.filter((c) => new Set(rows.map((r) => r.cellValues.get(c))).size > 1);
}

/** Builds a figure's panels, series, vertical lines and caption. */
export function buildFigure(
  plan: Plan,
  tasks: readonly Task[],
  records: ReadonlyMap<string, JournalRecord>,
  fig: FigureConfig,
): FigureData {
  const x = fig.x ?? "flops";
  const y = fig.y ?? "rel_frobenius_error";
  const logY = fig.logY ?? true;
  const band = fig.band ?? "ci";
  const cols = cellColumns(plan).filter((c) => !NOT_SWEPT.has(c));
  const rows: Row[] = [];
  for (const t of tasks) {
    const r = records.get(t.key);
    if (r?.status !== "ok") continue;
    if (fig.where && Object.entries(fig.where).some(([col, want]) => String(columnValue(plan, t, r, col) ?? "") !== String(want))) continue;
    const values = cellValues(plan, t.cell);
    const all = cellColumns(plan);
    rows.push({ task: t, record: r, cellValues: new Map(all.map((c, i) => [c, values[i]])) });
  }
  const swept = varying(rows, cols);
  const seriesCols = list(fig.series, ["method_label"]);
  // Default facets: the problem (several named problems: one panel each), then every swept
  // problem parameter that still varies within one problem (a parameter that only tells problems
  // apart, such as each named problem's checkpoint, would just repeat the problem's panels).
  const problemVaries = swept.includes("problem") && !seriesCols.includes("problem") && x !== "problem";
  const variesWithinProblem = (c: string) => {
    if (!problemVaries) return true;
    const seen = new Map<string, string>();
    return rows.some((r) => {
      const p = r.cellValues.get("problem") ?? "";
      const v = r.cellValues.get(c) ?? "";
      if ((seen.get(p) ?? v) !== v) return true;
      seen.set(p, v);
      return false;
    });
  };
  // A column the figure averages over is never also a default panel.
  const averageCols = list(fig.average, []);
  const facetCols = list(fig.facet, [
    ...(problemVaries ? ["problem"] : []),
    ...swept.filter(
      (c) => c.startsWith("problem_") && !seriesCols.includes(c) && !averageCols.includes(c) && c !== x && variesWithinProblem(c),
    ),
  ]);
  const keyOf = (r: Row, cs: readonly string[]) =>
    cs.map((c) => r.cellValues.get(c) ?? String(columnValue(plan, r.task, r.record, c) ?? "")).join("\u0000");
  const nameOf = (r: Row, cs: readonly string[]) =>
    cs.map((c) => r.cellValues.get(c) ?? String(columnValue(plan, r.task, r.record, c) ?? "")).join(", ");

  // Facets, in plan order.
  const facets = new Map<string, Row[]>();
  for (const r of rows) facets.set(keyOf(r, facetCols), [...(facets.get(keyOf(r, facetCols)) ?? []), r]);
  // Style index per line name, consistent across panels.
  const styleOf = new Map<string, number>();
  const style = (name: string) => {
    if (!styleOf.has(name)) styleOf.set(name, styleOf.size);
    return styleOf.get(name)!;
  };
  const splitUsed = new Set<string>();
  const ratesUsed = new Set<string>();
  const knobsUsed = new Set<string>();
  // x of a row: the mean over the cell's trials, so a method whose measured x varies by trial
  // (Scatterbrain's flops depend on its random LSH buckets) still gives one point per cell — the
  // trials' mean y at the trials' mean x — instead of one point per trial that splits its line.
  // The same holds for cells the figure averages over (`average`): a KDEformer whose flops differ
  // per head is one point at the heads' mean flops, not a line through the heads.
  const rawX = (r: Row) => toNumber(columnValue(plan, r.task, r.record, x));
  const pointOf = (r: Row) =>
    averageCols.length === 0
      ? String(r.task.cell)
      : [...r.cellValues.entries()]
          .filter(([c]) => c !== "cell" && !averageCols.includes(c))
          .map(([c, v]) => `${c}=${v}`)
          .join("\u0000");
  const pointX = new Map<string, number[]>();
  for (const r of rows) {
    const v = rawX(r);
    if (v !== null) pointX.set(pointOf(r), [...(pointX.get(pointOf(r)) ?? []), v]);
  }
  let xAveraged = false;
  const meanX = new Map<string, number>();
  for (const [point, xs] of pointX) {
    if (xs.some((v) => v !== xs[0])) xAveraged = true;
    meanX.set(point, xs.every((v) => v === xs[0]) ? xs[0] : xs.reduce((a, b) => a + b, 0) / xs.length);
  }
  const xOf = (r: Row) => (rawX(r) === null ? null : (meanX.get(pointOf(r)) ?? null));

  const lines = (facetRows: Row[], yCol: string) => {
    const groups = new Map<string, Row[]>();
    for (const r of facetRows) groups.set(keyOf(r, seriesCols), [...(groups.get(keyOf(r, seriesCols)) ?? []), r]);
    const out: { name: string; points: { x: number; ys: number[]; label?: string; size: number }[] }[] = [];
    for (const g of groups.values()) {
      const rest = varying(
        g,
        swept.filter((c) => !seriesCols.includes(c) && !facetCols.includes(c) && !averageCols.includes(c) && c !== x),
      );
      // A column that moves one-to-one with x along the line is its knob (it labels the points);
      // any other varying column splits the line, so no line joins cells that differ otherwise.
      const oneToOne = (c: string) => {
        const xc = new Map<string, string>();
        const cx = new Map<string, string>();
        for (const r of g) {
          const xv = String(xOf(r));
          const cv = r.cellValues.get(c) ?? "";
          if ((xc.get(xv) ?? cv) !== cv || (cx.get(cv) ?? xv) !== xv) return false;
          xc.set(xv, cv);
          cx.set(cv, xv);
        }
        return true;
      };
      const knobs = rest.filter(oneToOne);
      const split = rest.filter((c) => !knobs.includes(c));
      for (const c of split) splitUsed.add(c);
      const knob = knobs.length === 1 ? knobs[0] : undefined;
      if (knob) knobsUsed.add(knob);
      const sub = new Map<string, Row[]>();
      for (const r of g) sub.set(keyOf(r, split), [...(sub.get(keyOf(r, split)) ?? []), r]);
      for (const s of sub.values()) {
        const base = nameOf(s[0], seriesCols);
        const name = split.length ? `${base}, ${split.map((c) => shortLabel(c, s[0].cellValues.get(c) ?? "")).join(", ")}` : base;
        const byX = new Map<number, { ys: number[]; label?: string; size: number }>();
        for (const r of s) {
          const xv = xOf(r);
          const yv = toNumber(columnValue(plan, r.task, r.record, yCol));
          if (xv === null || yv === null) continue;
          const p = byX.get(xv) ?? {
            ys: [],
            label: knob && knob !== x ? shortLabel(knob, r.cellValues.get(knob) ?? "") : undefined,
            // The size a rate reference is a power of: the knob's value, or x itself.
            size: knob ? (toNumber(r.cellValues.get(knob) ?? null) ?? xv) : xv,
          };
          p.ys.push(yv);
          byX.set(xv, p);
        }
        out.push({ name, points: [...byX.entries()].sort((a, b) => a[0] - b[0]).map(([xv, p]) => ({ x: xv, ...p })) });
      }
    }
    return out;
  };

  const panels: Panel[] = [];
  const styles: StyleLegend[] = [];
  let verticalCount = 0;
  for (const facetRows of facets.values()) {
    const series: Series[] = [];
    const verticals: VerticalLine[] = [];
    for (const l of lines(facetRows, y)) {
      if (l.points.length === 0) continue;
      if (logY && l.points.length > 0 && l.points.every((p) => p.ys.every((v) => v <= 0))) {
        // Zero error has no place on a log axis: draw where this method's cost is instead.
        for (const p of l.points)
          verticals.push({ x: p.x, label: `${l.name}: y = 0 at this ${columnLabel(x).split(" (")[0]}`, colorIndex: style(l.name) });
        verticalCount++;
        continue;
      }
      series.push({
        name: l.name,
        colorIndex: style(l.name),
        points: l.points.map((p) => {
          const st = summarize(p.ys);
          const mean = st.mean ?? Number.NaN;
          const [lo, hi] =
            band === "minmax"
              ? [st.min ?? mean, st.max ?? mean]
              : band === "ci" && st.ciLow !== null && st.ciHigh !== null
                ? [st.ciLow, st.ciHigh]
                : [mean, mean];
          return { x: p.x, y: mean, lo, hi, ...(p.label ? { label: p.label } : {}) };
        }),
      });
    }
    (fig.references ?? []).forEach((ref, i) => {
      const dash = REFERENCE_DASHES[i % REFERENCE_DASHES.length];
      if ("rate" in ref) {
        const rate = ref.rate;
        const wanted = facetRows.filter((r) => !ref.methods || ref.methods.includes(r.cellValues.get("method_label") ?? ""));
        const mean = (ys: number[]) => ys.reduce((a, b) => a + b, 0) / ys.length;
        const drawn = lines(wanted, y).filter((l) => l.points.length >= 2 && l.points.every((p) => p.size > 0));
        if (drawn.length === 0) return;
        if (!styles.some((s) => s.label === ref.label)) styles.push({ label: ref.label, dash });
        ratesUsed.add(`${ref.label}: y ∝ s^${rate} through each line's point at its ${ref.anchor === "first" ? "smallest" : "largest"} s`);
        for (const l of drawn) {
          const bySize = [...l.points].sort((a, b) => a.size - b.size);
          const a = ref.anchor === "first" ? bySize[0] : bySize[bySize.length - 1];
          const ya = mean(a.ys);
          if (!(ya > 0) && logY) continue;
          series.push({
            name: l.name,
            colorIndex: style(l.name),
            dash,
            inLegend: false,
            points: l.points.map((p) => {
              const v = ya * (p.size / a.size) ** rate;
              return { x: p.x, y: v, lo: v, hi: v };
            }),
          });
        }
        return;
      }
      const refs = lines(facetRows, ref.y).filter((l) => l.points.length > 0);
      if (refs.length === 0) return;
      if (!styles.some((s) => s.label === ref.label)) styles.push({ label: ref.label, dash });
      for (const l of refs)
        series.push({
          name: l.name,
          colorIndex: style(l.name),
          dash,
          inLegend: false,
          points: l.points.map((p) => {
            const mean = p.ys.reduce((a, b) => a + b, 0) / p.ys.length;
            return { x: p.x, y: mean, lo: mean, hi: mean };
          }),
        });
    });
    const title = facetCols.length ? facetCols.map((c) => shortLabel(c, facetRows[0].cellValues.get(c) ?? "")).join(", ") : "";
    panels.push({ title, series, verticals });
  }

  const trials = plan.trials;
  const valuesOf = (c: string) => [...new Set(rows.map((r) => r.cellValues.get(c) ?? ""))].join(", ");
  const parts: string[] = [];
  parts.push(
    `Each line joins cells that differ only in ${columnLabel(x)}${knobsUsed.size ? ` (and the ${[...knobsUsed].map(columnLabel).join(", ")} that sets it, labelled at the points)` : ""}; lines by ${seriesCols.map(columnLabel).join(", ")}${splitUsed.size ? ` and ${[...splitUsed].map(columnLabel).join(", ")}` : ""}.`,
  );
  if (facetCols.length) parts.push(`One panel per ${facetCols.map(columnLabel).join(" × ")}.`);
  parts.push(
    `Points: mean over ${trials} trial(s)${averageCols.length ? ` and averaged over ${averageCols.map((c) => `${columnLabel(c)} ∈ {${valuesOf(c)}}`).join(", ")}` : ""}.`,
  );
  // Values behind each point: the trials times every combination of the averaged columns.
  const perPoint = trials * averageCols.reduce((n, c) => n * new Set(rows.map((r) => r.cellValues.get(c) ?? "")).size, 1);
  const pooled = averageCols.length ? ` × ${averageCols.map(columnLabel).join(" × ")}` : "";
  parts.push(
    band === "ci"
      ? `Band: two-sided 95 % Student-t confidence interval of the mean${
          averageCols.length === 0
            ? trials < 2
              ? " (none: one trial)"
              : ` (n = ${trials} trials)`
            : perPoint < 2
              ? " (none: one value per point)"
              : ` (n = ${perPoint}: trials${pooled})`
        }.`
      : band === "minmax"
        ? averageCols.length === 0
          ? "Band: min–max over trials."
          : `Band: min–max over the ${perPoint} values of each point (trials${pooled}).`
        : "No band.",
  );
  if (xAveraged)
    parts.push(
      averageCols.length === 0
        ? `Where ${columnLabel(x)} varies between a cell's trials, its point sits at the trials' mean.`
        : `Where ${columnLabel(x)} varies between the trials or the averaged values of a point, it sits at their mean ${columnLabel(x)}.`,
    );
  if (ratesUsed.size > 0)
    parts.push(`Rate references (theory, not data; s is each line's swept size, or x when it has none): ${[...ratesUsed].join("; ")}.`);
  if (verticalCount > 0) parts.push("Dotted vertical lines: methods with zero error (exact), drawn at their cost.");
  if (fig.where)
    parts.push(
      `Only rows with ${Object.entries(fig.where)
        .map(([k, v]) => `${columnLabel(k)} = ${v}`)
        .join(", ")}.`,
    );
  return {
    panels,
    styles,
    xLabel: fig.xLabel ?? columnLabel(x),
    yLabel: fig.yLabel ?? columnLabel(y),
    caption: parts.join(" "),
  };
}

/**
 * The series of a figure as one panel (facets merged into the series names), for callers that
 * draw a single chart (the playground). Prefer `buildFigure`, which facets by swept problem
 * parameters and writes the caption.
 */
export function figureSeriesWithReferences(
  plan: Plan,
  tasks: readonly Task[],
  records: ReadonlyMap<string, JournalRecord>,
  fig: FigureConfig,
): { series: Series[]; styles: StyleLegend[] } {
  const data = buildFigure(plan, tasks, records, { ...fig, facet: fig.facet ?? [] });
  return { series: data.panels.flatMap((p) => p.series), styles: data.styles };
}

/** The main series of a figure in one panel (see `figureSeriesWithReferences`). */
export function figureSeries(plan: Plan, tasks: readonly Task[], records: ReadonlyMap<string, JournalRecord>, fig: FigureConfig): Series[] {
  return figureSeriesWithReferences(plan, tasks, records, { ...fig, references: [] }).series;
}
