/**
 * The summary table (HTML, Markdown, LaTeX and the terminal): one row per cell with the method,
 * the swept parameters (the config's sweep axes — never a method's unswept defaults), the table
 * metric as mean ± 95 % CI half-width, n, and mean flops and floats stored. Few columns, the metric
 * early, so it is readable at 1400 px without scrolling.
 */
import { formatDisplay } from "../base/format.js";
import { columnLabel } from "../base/labels.js";
import type { SummaryRow } from "../output/summary.js";
import { cellAxes, type Plan, paramText } from "../plan/expand.js";

/** A table: header and display rows. */
export interface Table {
  header: string[];
  rows: string[][];
  caption: string;
}

/** The default table metric: rel_frobenius_error, or floats_stored for accounting-only plans. */
export function defaultTableMetric(plan: Plan): string {
  return (
    plan.loaded.config.report?.tableMetric ??
    (plan.cells.every((c) => c.problem.generator === "model-preset") ? "floats_stored" : "rel_frobenius_error")
  );
}

/** Builds the summary table of a plan. */
export function summaryTable(plan: Plan, rows: readonly SummaryRow[]): Table {
  const columns: string[] = [];
  for (const c of plan.cells)
    for (const a of cellAxes(plan, c.index)) {
      const col = a.column;
      if (!columns.includes(col)) columns.push(col);
    }
  // Problem parameters first (they group the rows), then method parameters, in name order.
  columns.sort((a, b) => Number(b.startsWith("problem_")) - Number(a.startsWith("problem_")) || (a < b ? -1 : a > b ? 1 : 0));
  const metric = defaultTableMetric(plan);
  // Several problems: each row names its problem (a label, not a swept parameter).
  const byProblem = plan.loaded.problems.length > 1;
  const header = [
    ...(byProblem ? ["problem"] : []),
    "method",
    ...columns.map(columnLabel),
    `${columnLabel(metric).replace(/ ‖.*$/, "")}: mean ± 95% CI`,
    "n",
    "flops",
    "floats stored",
  ];
  const get = (cell: number, m: string) => rows.find((r) => r.cell === cell && r.metric === m);
  const out: string[][] = [];
  for (const c of plan.cells) {
    const axes = new Map(cellAxes(plan, c.index).map((a) => [a.column, paramText(a.value)]));
    const main = get(c.index, metric);
    const ci = main?.stats.ciHigh != null && main.stats.mean != null ? main.stats.ciHigh - main.stats.mean : null;
    const mainText =
      main?.stats.mean == null
        ? "–"
        : ci === null
          ? formatDisplay(main.stats.mean)
          : `${formatDisplay(main.stats.mean)} ± ${formatDisplay(ci)}`;
    out.push([
      ...(byProblem ? [c.problemLabel] : []),
      c.method.label,
      ...columns.map((col) => axes.get(col) ?? "–"),
      mainText,
      String(main?.stats.n ?? 0) + (main && main.nFailed > 0 ? ` (${main.nFailed} failed)` : ""),
      formatDisplay(get(c.index, "flops")?.stats.mean ?? null),
      formatDisplay(get(c.index, "floats_stored")?.stats.mean ?? null),
    ]);
  }
  const caption =
    `${plan.loaded.config.experiment}: ${columnLabel(metric)} per cell, mean over ${plan.trials} trial(s) with the two-sided 95 % ` +
    "Student-t confidence interval of the mean (none for one trial); flops and floats stored are means over trials; – : not swept for this method.";
  return { header, rows: out, caption };
}

/** GitHub-flavoured Markdown. */
export function markdownTable(t: Table): string {
  const esc = (s: string) => s.replace(/\|/g, "\\|");
  const lines = [`| ${t.header.map(esc).join(" | ")} |`, `| ${t.header.map(() => "---").join(" | ")} |`];
  for (const r of t.rows) lines.push(`| ${r.map(esc).join(" | ")} |`);
  return `${lines.join("\n")}\n\n*${esc(t.caption)}*\n`;
}

/** Plain text with aligned columns (the table printed at the end of `randattn run`). */
export function textTable(t: Table, maxRows = 60): string {
  const rows = t.rows.length > maxRows ? t.rows.slice(0, maxRows) : t.rows;
  const width = t.header.map((h, i) => Math.max([...h].length, ...rows.map((r) => [...r[i]].length)));
  const pad = (s: string, i: number) => (i === 0 ? s + " ".repeat(width[i] - [...s].length) : " ".repeat(width[i] - [...s].length) + s);
  const lines = [t.header.map(pad).join("  "), width.map((w) => "─".repeat(w)).join("  "), ...rows.map((r) => r.map(pad).join("  "))];
  if (t.rows.length > maxRows) lines.push(`… ${t.rows.length - maxRows} more row(s) in tables/summary.md`);
  return lines.join("\n");
}

function latexEscape(s: string): string {
  return s
    .replace(/\\/g, "\\textbackslash{}")
    .replace(/([&%$#_{}])/g, "\\$1")
    .replace(/~/g, "\\textasciitilde{}")
    .replace(/\^/g, "\\textasciicircum{}")
    .replace(/±/g, "$\\pm$")
    .replace(/–/g, "--")
    .replace(/−/g, "$-$")
    .replace(/‖/g, "$\\|$")
    .replace(/Ŷ/g, "$\\hat{Y}$")
    .replace(/₂/g, "$_2$")
    .replace(/∞/g, "$\\infty$");
}

/** A booktabs LaTeX table. */
export function latexTable(t: Table): string {
  const lines = [
    "\\begin{table}[ht]",
    "\\centering",
    `\\begin{tabular}{${t.header.map((_, i) => (i === 0 ? "l" : "r")).join("")}}`,
    "\\toprule",
    `${t.header.map(latexEscape).join(" & ")} \\\\`,
    "\\midrule",
    ...t.rows.map((r) => `${r.map(latexEscape).join(" & ")} \\\\`),
    "\\bottomrule",
    "\\end{tabular}",
    `\\caption{${latexEscape(t.caption)}}`,
    "\\end{table}",
  ];
  return `${lines.join("\n")}\n`;
}

/** An HTML table (for the report page). */
export function htmlTable(t: Table): string {
  const esc = (s: string) => s.replace(/&/g, "&amp;").replace(/</g, "&lt;").replace(/>/g, "&gt;");
  return [
    "<table>",
    `<thead><tr>${t.header.map((h) => `<th>${esc(h)}</th>`).join("")}</tr></thead>`,
    "<tbody>",
    ...t.rows.map((r) => `<tr>${r.map((c) => `<td>${esc(c)}</td>`).join("")}</tr>`),
    "</tbody>",
    `<caption>${esc(t.caption)}</caption>`,
    "</table>",
  ].join("\n");
}
