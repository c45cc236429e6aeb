/**
 * Figures, tables and the static HTML report of an experiment folder, and the index page of a
 * results root. Every file is written atomically; the HTML references the SVGs and CSVs by
 * relative links, so a results folder can be browsed from disk or any static host.
 */
import { existsSync, readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import type { Plan, Task } from "../plan/expand.js";
import { writeFileAtomic } from "../output/atomic.js";
import type { Manifest } from "../output/manifest.js";
import type { SummaryRow } from "../output/summary.js";
import type { JournalRecord } from "../base/records.js";
import { buildFigure, defaultFigures } from "./data.js";
import { panelsSvg } from "./svg.js";
import { htmlTable, latexTable, markdownTable, summaryTable } from "./tables.js";

const esc = (s: string) => s.replace(/&/g, "&amp;").replace(/</g, "&lt;").replace(/>/g, "&gt;").replace(/"/g, "&quot;");

const STYLE = `body{font-family:Helvetica,Arial,sans-serif;max-width:1360px;margin:1.5em auto;padding:0 1em;color:#222}
figure{margin:1em 0}figcaption{font-size:13px;color:#444;max-width:1100px;margin-top:4px}
table{border-collapse:collapse;margin:1em 0;font-size:13px}th,td{border:1px solid #ccc;padding:3px 8px;text-align:right}
th:first-child,td:first-child{text-align:left}caption{caption-side:bottom;font-style:italic;padding-top:4px}
code{background:#f4f4f4;padding:1px 4px}img{max-width:100%;border:1px solid #eee}`;

/**
 * Writes figures/*.svg, tables/summary.{md,tex} and report.html into `dir`.
 * @returns the relative paths written.
 */
export function writeReport(
  plan: Plan,
  dir: string,
  tasks: readonly Task[],
  records: ReadonlyMap<string, JournalRecord>,
  summary: readonly SummaryRow[],
  manifest: Manifest,
): string[] {
  const written: string[] = [];
  const figures = plan.loaded.config.report?.figures ?? defaultFigures(plan);
  const figureHtml: string[] = [];
  for (const fig of figures) {
    const data = buildFigure(plan, tasks, records, fig);
    const svg = panelsSvg(data.panels, {
      title: fig.title ?? `${data.yLabel} against ${data.xLabel}`,
      xLabel: data.xLabel,
      yLabel: data.yLabel,
      logX: fig.logX ?? true,
      logY: fig.logY ?? true,
      note: bandNote(fig),
      styles: data.styles,
    });
    const rel = `figures/${fig.name}.svg`;
    writeFileAtomic(join(dir, rel), svg);
    written.push(rel);
    figureHtml.push(
      `<figure><img src="${esc(rel)}" alt="${esc(fig.title ?? fig.name)}"/><figcaption>${esc(data.caption)}</figcaption></figure>`,
    );
  }
  const table = summaryTable(plan, summary);
  writeFileAtomic(join(dir, "tables/summary.md"), markdownTable(table));
  writeFileAtomic(join(dir, "tables/summary.tex"), latexTable(table));
  written.push("tables/summary.md", "tables/summary.tex");
  const cfg = plan.loaded.config;
  const html = `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>${esc(cfg.experiment)} — RandAttn</title><style>${STYLE}</style></head>
<body>
<p><a href="../index.html">← all experiments</a></p>
<h1>${esc(cfg.experiment)}</h1>
<p>${esc(cfg.description ?? "")}</p>
<ul>
<li>${plan.loaded.problems.length > 1 ? "problems" : "problem"}: ${plan.loaded.problems.map((p) => `<code>${esc(p.named ? `${p.label} (${p.problem.generator})` : p.problem.generator)}</code>`).join(", ")}; methods: ${cfg.methods.map((m) => `<code>${esc(m.label ?? m.method)}</code>`).join(", ")}</li>
<li>${plan.cells.length} cells × ${plan.trials} trial(s); ${manifest.status.ok} ok, ${manifest.status.failed} failed; root seed ${cfg.seed}</li>
<li>config sha256 <code>${esc(manifest.config_sha256)}</code>; results.csv sha256 <code>${esc(manifest.results_sha256)}</code></li>
<li>git ${manifest.git ? `<code>${esc(manifest.git.commit.slice(0, 12))}</code>${manifest.git.dirty ? " (dirty)" : ""}` : "unknown"}; Node ${esc(String(manifest.versions.node))}</li>
</ul>
<p>Files: <a href="results.csv">results.csv</a> · <a href="summary.csv">summary.csv</a> · <a href="timings.csv">timings.csv</a> · <a href="manifest.json">manifest.json</a> · <a href="tables/summary.md">summary.md</a> · <a href="tables/summary.tex">summary.tex</a></p>
<h2>Figures</h2>
${figureHtml.join("\n")}
<h2>Summary</h2>
${htmlTable(table)}
</body></html>
`;
  writeFileAtomic(join(dir, "report.html"), html);
  written.push("report.html");
  return written;
}

/** Rewrites `<root>/index.html` listing every experiment folder with a manifest. */
export function writeIndex(root: string): void {
  const rows: string[] = [];
  const names = existsSync(root)
    ? readdirSync(root, { withFileTypes: true })
        .filter((d) => d.isDirectory())
        .map((d) => d.name)
        .sort()
    : [];
  for (const name of names) {
    const path = join(root, name, "manifest.json");
    if (!existsSync(path)) continue;
    try {
      const m = JSON.parse(readFileSync(path, "utf8")) as Manifest & { description?: string };
      const link = existsSync(join(root, name, "report.html")) ? `<a href="${esc(name)}/report.html">${esc(name)}</a>` : esc(name);
      rows.push(
        `<tr><td>${link}</td><td>${esc(m.description ?? "")}</td><td>${m.cell_count}</td><td>${m.status.ok}</td><td>${m.status.failed}</td><td><code>${esc(m.results_sha256.slice(0, 12))}</code></td></tr>`,
      );
    } catch {
      rows.push(`<tr><td>${esc(name)}</td><td colspan="5">unreadable manifest</td></tr>`);
    }
  }
  const html = `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>RandAttn experiments</title><style>${STYLE}</style></head>
<body>
<h1>RandAttn experiments</h1>
<table>
<thead><tr><th>experiment</th><th>description</th><th>cells</th><th>ok</th><th>failed</th><th>results.csv sha256</th></tr></thead>
<tbody>
${rows.join("\n")}
</tbody>
</table>
</body></html>
`;
  writeFileAtomic(join(root, "index.html"), html);
}

/** The figure's band legend: what the band is, and over what (trials, and any averaged columns). */
function bandNote(fig: { band?: "ci" | "minmax" | "none"; average?: string | readonly string[] }): string {
  const over = fig.average !== undefined && fig.average.length > 0 ? "trials and the averaged values" : "trials";
  if (fig.band === "none") return "";
  return fig.band === "minmax" ? `band: min–max over ${over}` : `band: 95 % CI of the mean over ${over}`;
}
