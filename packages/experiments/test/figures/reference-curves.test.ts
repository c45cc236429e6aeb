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

  it("a rate reference is s^rate through each listed line's anchor point, evaluated at its own x, labelled as a rate", () => {
    // x = flops = 10·s, so the knob (samples) moves one-to-one with x and is the line's s.
    const fig = { name: "f", references: [{ rate: -0.5, label: "s^-1/2 rate", methods: ["uniform"] }] };
    const { panels, styles, caption } = buildFigure(plan, tasks, records, fig);
    const series = panels[0].series;
    expect(series.map((s) => [s.name, s.dash ?? ""])).toEqual([
      ["uniform", ""],
      ["attention", ""],
      ["uniform", "6 4"],
    ]);
    // Measured means at s = 2, 4: 1/s + 0.005 (trials 0 and 1). Anchored at the largest s = 4.
    const ya = 1 / 4 + 0.005;
    expect(series[2].points.map((p) => p.x)).toEqual([20, 40]);
    expect(series[2].points[1].y).toBeCloseTo(ya, 14);
    expect(series[2].points[0].y).toBeCloseTo(ya * (2 / 4) ** -0.5, 14);
    expect(styles).toEqual([{ label: "s^-1/2 rate", dash: "6 4" }]);
    expect(caption).toContain("Rate references (theory, not data");
    expect(caption).toContain("y ∝ s^-0.5 through each line's point at its largest s");
    // anchor: first goes through the smallest s instead.
    const first = buildFigure(plan, tasks, records, { name: "g", references: [{ rate: -1, label: "1/s", anchor: "first" as const }] });
    const refs = first.panels[0].series.filter((s) => s.dash);
    expect(refs).toHaveLength(2);
    expect(refs[0].points[0].y).toBeCloseTo(0.5 + 0.005, 14);
    expect(refs[0].points[1].y).toBeCloseTo((0.5 + 0.005) / 2, 14);
  });

  it("a reference is a column or a rate, never both; rate options only with a rate; methods must exist", () => {
    const base = tinyConfig({ methods: [{ method: "row-sampling", label: "uniform" }], sweep: { "uniform.samples": [2, 4] } });
    const withRefs = (references: unknown[]) => ({ ...base, report: { figures: [{ name: "f", references }] } });
    const msg = (references: unknown[]) => {
      try {
        loadConfigObject(withRefs(references), "/tmp", "t.yaml");
      } catch (e) {
        return (e as Error).message;
      }
      return "";
    };
    expect(msg([{ y: "a", rate: -1, label: "x" }])).toContain(
      "report.figures[0].references[0]: expected exactly one of y (a column) and rate",
    );
    expect(msg([{ label: "x" }])).toContain("got neither");
    expect(msg([{ y: "a", anchor: "first", label: "x" }])).toContain("methods and anchor only with rate");
    expect(msg([{ rate: -1, methods: ["nope"], label: "x" }])).toContain(
      'report.figures[0].references[0].methods[0]: expected a method label (uniform), got "nope"',
    );
    expect(msg([{ rate: -0.5, methods: ["uniform"], label: "x" }])).toBe("");
  });

  it("a cell whose x varies by trial (random flops) is one point at the trials' mean x, not a split line", () => {
    const jittered = new Map(
      [...records].map(([k, r]) => [k, { ...r, flops: (r.flops as number) + (tasks.find((t) => t.key === k)!.trial === 0 ? -1 : 1) }]),
    );
    const { panels, caption } = buildFigure(plan, tasks, jittered, { name: "f" });
    expect(panels[0].series.map((s) => s.name)).toEqual(["uniform", "attention"]);
    expect(panels[0].series[0].points.map((p) => [p.x, p.label])).toEqual([
      [20, "s = 2"],
      [40, "s = 4"],
    ]);
    expect(caption).toContain("varies between a cell's trials, its point sits at the trials' mean");
    expect(buildFigure(plan, tasks, records, { name: "g" }).caption).not.toContain("trials' mean");
  });
});
