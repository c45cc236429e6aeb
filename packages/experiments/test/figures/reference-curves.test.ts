import { describe, expect, it } from "vitest";
import {
  expandPlan,
  buildFigure,
  type JournalRecord,
  panelsSvg,
  loadConfigObject,
  planTasks,
  resultsCsv,
} from "@randattn/experiments/internal";
import { tinyConfig } from "../helpers.js";

describe("reference curves: extra columns drawn dashed in their series' colour", () => {
  const plan = expandPlan(
    loadConfigObject(
      tinyConfig({
        methods: [
          { method: "row-sampling", label: "uniform" },
          { method: "row-sampling", label: "attention", params: { scheme: "attention" } },
        ],
        sweep: { "problem.n": [8], "uniform.samples": [2, 4], "attention.samples": [2, 4] },
      }),
      "/tmp",
      "t.yaml",
    ),
  );
  const tasks = planTasks(plan);
  const records = new Map<string, JournalRecord>();
  for (const t of tasks) {
    const s = plan.cells[t.cell].method.params.samples as number;
    records.set(t.key, {
      type: "task",
      session: "s",
      key: t.key,
      index: t.index,
      status: "ok",
      error: "",
      metrics: { rel_frobenius_error: 1 / s + t.trial / 100, rel_spectral_error: null, max_abs_error: null, mean_kl_divergence: null },
      flops: 10 * s,
      floatsStored: s,
      extras: { dkm_expected_rel_error: 2 / s },
      wallMs: 1,
      setupMs: 0,
    });
  }

  it("the extra column is in results.csv after the fixed columns", () => {
    const header = resultsCsv(plan, tasks, records).split("\n")[0];
    expect(header.endsWith("flops,floats_stored,dkm_expected_rel_error")).toBe(true);
  });

  it("one dashed series per main series (same colour, no own legend entry) and one style legend", () => {
    const fig = { name: "f", x: "param_samples", references: [{ y: "dkm_expected_rel_error", label: "DKM" }] };
    const { panels, styles } = buildFigure(plan, tasks, records, fig);
    expect(panels).toHaveLength(1);
    const series = panels[0].series;
    expect(series.map((s) => [s.name, s.colorIndex, s.dash ?? "", s.inLegend ?? true])).toEqual([
      ["uniform", 0, "", true],
      ["attention", 1, "", true],
      ["uniform", 0, "6 4", false],
      ["attention", 1, "6 4", false],
    ]);
    expect(series[2].points.map((p) => [p.x, p.y])).toEqual([
      [2, 1],
      [4, 0.5],
    ]);
    expect(styles).toEqual([{ label: "DKM", dash: "6 4" }]);
    const svg = panelsSvg(panels, { title: "t", xLabel: "s", yLabel: "e", styles });
    expect(svg.match(/stroke-dasharray="6 4"/g)).toHaveLength(3); // two curves + the legend entry
    expect(svg).toContain(">DKM</text>");
    expect(svg.match(/<polygon/g)).toHaveLength(2); // bands only for the measured series
  });
});
