/**
 * Markdown and LaTeX tables from the summary: one row per cell with the swept columns, the table
 * metric as mean ± CI half-width (n), and mean flops and floats stored.
 */
import type { Plan } from "../plan/expand.js";
import { formatDisplay } from "../base/format.js";
import { cellColumns, cellValues } from "../output/results.js";
import type { SummaryRow } from "../output/summary.js";

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
  const cols = cellColumns(plan);
  // Show only the identifying columns that vary across cells (plus the method label).
  const values = plan.cells.map((c) => cellValues(plan, c.index));
  const shown = cols
    .map((name, i) => ({ name, i }))
    .filter(
      ({ name, i }) =>
        name === "method_label" ||
        (name !== "cell" && name !== "experiment" && name !== "method" && new Set(values.map((v) => v[i])).size > 1),
    );
  const metric = defaultTableMetric(plan);
  const header = [...shown.map((s) => s.name), "n", `${metric} (mean ± 95% CI)`, "flops", "floats_stored"];
  const get = (cell: number, m: string) => rows.find((r) => r.cell === cell && r.metric === m);
  const out: string[][] = [];
  for (const c of plan.cells) {
    const v = cellValues(plan, c.index);
    const main = get(c.index, metric);
    const ci = main?.stats.ciHigh != null && main.stats.mean != null ? main.stats.ciHigh - main.stats.mean : null;
    const mainText =
      main?.stats.mean == null
        ? "–"
        : ci === null
          ? formatDisplay(main.stats.mean)
          : `${formatDisplay(main.stats.mean)} ± ${formatDisplay(ci)}`;
    out.push([
      ...shown.map((s) => v[s.i]),
      String(main?.stats.n ?? 0) + (main && main.nFailed > 0 ? ` (${main.nFailed} failed)` : ""),
      mainText,
      formatDisplay(get(c.index, "flops")?.stats.mean ?? null),
      formatDisplay(get(c.index, "floats_stored")?.stats.mean ?? null),
    ]);
  }
  return { header, rows: out, caption: `${plan.loaded.config.experiment}: ${metric} per cell (${plan.trials} trial(s) each)` };
}

/** GitHub-flavoured Markdown. */
export function markdownTable(t: Table): string {
  const esc = (s: string) => s.replace(/\|/g, "\\|");
  const lines = [`| ${t.header.map(esc).join(" | ")} |`, `| ${t.header.map(() => "---").join(" | ")} |`];
  for (const r of t.rows) lines.push(`| ${r.map(esc).join(" | ")} |`);
  return `${lines.join("\n")}\n\n*${esc(t.caption)}*\n`;
}

function latexEscape(s: string): string {
  return s
    .replace(/\\/g, "\\textbackslash{}")
    .replace(/([&%$#_{}])/g, "\\$1")
    .replace(/~/g, "\\textasciitilde{}")
    .replace(/\^/g, "\\textasciicircum{}")
    .replace(/±/g, "$\\pm$")
    .replace(/–/g, "--")
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
