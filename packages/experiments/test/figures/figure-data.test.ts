import { describe, expect, it } from "vitest";
import {
  buildFigure,
  expandPlan,
  loadConfigObject,
  panelsSvg,
  planTasks,
  readJournal,
  runPlan,
  seriesStyle,
  summarize,
  summaryRows,
  summaryTable,
  textTable,
} from "@randattn/experiments/internal";
import { tempDir } from "../helpers.js";

// Two sequence lengths × row sampling at two sample counts, plus exact: the case where a naive
// error-vs-flops figure joins cells of different N into one zig-zag line.
const config = {
  experiment: "fig",
  seed: 3,
  trials: 3,
  problem: { generator: "gaussian", params: { d: 4, dv: 3 } },
  methods: [{ method: "exact" }, { method: "row-sampling", label: "rs", params: { scheme: "uniform" } }],
  sweep: { "problem.n": [8, 16], "rs.samples": [2, 4] },
  metrics: ["rel_frobenius_error"],
};

let cached:
  | Promise<{
      plan: ReturnType<typeof expandPlan>;
      tasks: ReturnType<typeof planTasks>;
      records: ReturnType<typeof readJournal>["records"];
    }>
  | undefined;
function finished() {
  cached ??= run();
  return cached;
}
async function run() {
  const plan = expandPlan(loadConfigObject(config, "/tmp"));
  const out = tempDir();
  const r = await runPlan(plan, { outRoot: out, workers: 0, progress: "none", report: false, log: () => {} });
  const records = readJournal(`${r.dir}/journal.jsonl`).records;
  return { plan, tasks: planTasks(plan), records };
}

describe("figures never mislead", () => {
  it("default: a panel per swept problem parameter; a line joins only cells of one N; exact is a vertical line", async () => {
    const { plan, tasks, records } = await finished();
    const fig = buildFigure(plan, tasks, records, { name: "f" });
    expect(fig.panels.map((p) => p.title)).toEqual(["N = 8", "N = 16"]);
    for (const [k, panel] of fig.panels.entries()) {
      expect(panel.series.map((s) => s.name)).toEqual(["rs"]);
      expect(panel.series[0].points.map((p) => p.label)).toEqual(["s = 2", "s = 4"]);
      expect(panel.verticals?.length).toBe(1);
      // The exact method's cost at this N: 2·N·N·d + 5·N·N + 2·N·N·dv + N·dv.
      const n = [8, 16][k];
      expect(panel.verticals?.[0].x).toBe(2 * n * n * 4 + 5 * n * n + 2 * n * n * 3 + n * 3);
    }
    expect(fig.xLabel).toBe("flops (analytic count)");
    expect(fig.yLabel).toContain("relative Frobenius error");
    expect(fig.caption).toContain("One panel per sequence length N");
    expect(fig.caption).toContain("95 % Student-t confidence interval of the mean (n = 3 trials)");
  });

  it("bands are the Student-t CI of the mean over trials (min–max on request)", async () => {
    const { plan, tasks, records } = await finished();
    const cell = plan.cells.find((c) => c.method.label === "rs" && c.problem.params.n === 8 && c.method.params.samples === 2)!;
    const ys = tasks.filter((t) => t.cell === cell.index).map((t) => records.get(t.key)!.metrics.rel_frobenius_error!);
    const st = summarize(ys);
    const ci = buildFigure(plan, tasks, records, { name: "f" }).panels[0].series[0].points[0];
    expect([ci.y, ci.lo, ci.hi]).toEqual([st.mean, st.ciLow, st.ciHigh]);
    const mm = buildFigure(plan, tasks, records, { name: "f", band: "minmax" }).panels[0].series[0].points[0];
    expect([mm.lo, mm.hi]).toEqual([Math.min(...ys), Math.max(...ys)]);
  });

  it("series by several columns; an averaged column is named in the caption", async () => {
    const { plan, tasks, records } = await finished();
    const fig = buildFigure(plan, tasks, records, { name: "f", series: ["method_label", "problem_n"], facet: [] });
    expect(fig.panels).toHaveLength(1);
    expect(fig.panels[0].series.map((s) => s.name)).toEqual(["rs, 8", "rs, 16"]);
    const avg = buildFigure(plan, tasks, records, { name: "f", x: "param_samples", facet: [], average: ["problem_n"] });
    expect(avg.caption).toContain("averaged over sequence length N ∈ {8, 16}");
    // Without `average` or a facet, N splits the line instead of being averaged silently.
    const split = buildFigure(plan, tasks, records, { name: "f", x: "param_samples", facet: [] });
    expect(split.panels[0].series.map((s) => s.name)).toEqual(["rs, N = 8", "rs, N = 16"]);
  });

  it("an averaged column is no default panel; a point pools its values at their mean x, with the band over all of them", async () => {
    const { plan, tasks, records } = await finished();
    // Averaging over N with flops on x: the flops differ by N, so each sample count must be one point
    // at the mean flops of N = 8 and 16 (not a line through the two N), banded over 2 N × 3 trials.
    const fig = buildFigure(plan, tasks, records, { name: "f", average: ["problem_n"], band: "minmax" });
    expect(fig.panels).toHaveLength(1);
    const rs = fig.panels[0].series.find((s) => s.name === "rs")!;
    expect(rs.points.map((p) => p.label)).toEqual(["s = 2", "s = 4"]);
    for (const [k, samples] of [2, 4].entries()) {
      const rows = tasks.filter((t) => {
        const c = plan.cells[t.cell];
        return c.method.label === "rs" && c.method.params.samples === samples;
      });
      const flops = rows.map((t) => records.get(t.key)!.flops!);
      const ys = rows.map((t) => records.get(t.key)!.metrics.rel_frobenius_error!);
      expect(rows).toHaveLength(6);
      expect(rs.points[k].x).toBeCloseTo(flops.reduce((a, b) => a + b, 0) / flops.length, 9);
      expect([rs.points[k].lo, rs.points[k].hi]).toEqual([Math.min(...ys), Math.max(...ys)]);
    }
    expect(fig.caption).toContain("min–max over the 6 values of each point (trials × sequence length N)");
    // A lone point's band is an error bar (no area to fill).
    const svg = panelsSvg([{ title: "", series: [{ name: "one", points: [{ x: 2, y: 1, lo: 0.5, hi: 2 }] }] }], {
      title: "t",
      xLabel: "x",
      yLabel: "y",
    });
    expect(svg).toMatch(/<line x1="([\d.]+)" y1="[\d.]+" x2="\1" y2="[\d.]+" stroke="[^"]+" stroke-width="1.5"/);
    expect(svg).not.toContain("<polygon");
  });

  it("32 series get 32 distinct styles; the SVG draws one legend entry per series", () => {
    const styles = Array.from({ length: 32 }, (_, i) => JSON.stringify(seriesStyle(i)));
    expect(new Set(styles).size).toBe(32);
    const svg = panelsSvg(
      [{ title: "", series: Array.from({ length: 10 }, (_, i) => ({ name: `m${i}`, points: [{ x: 1 + i, y: 1, lo: 0.5, hi: 2 }] })) }],
      { title: "t", xLabel: "x", yLabel: "y" },
    );
    expect(svg.match(/stroke-dasharray="7 3"/g)).toHaveLength(4); // series 8 and 9: line + legend
  });

  it("the summary table shows the method and the swept parameters, not unswept defaults", async () => {
    const { plan, tasks, records } = await finished();
    const t = summaryTable(plan, summaryRows(tasks, records, plan.extraColumns));
    expect(t.header.slice(0, 3)).toEqual(["method", "sequence length N", "samples s"]);
    expect(t.header.join(" ")).not.toContain("scheme");
    expect(t.rows[0].slice(0, 3)).toEqual(["exact", "8", "–"]);
    expect(textTable(t).split("\n")[0]).toContain("relative Frobenius error: mean ± 95% CI");
  });
});
