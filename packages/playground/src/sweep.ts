/**
 * The playground's sweep: the config a form describes (the same object the CLI reads from a
 * `.json` file), and the figures drawn from partial results with the reports' own chart code.
 */
import {
  type ExperimentConfig,
  type FigureConfig,
  figureSeriesWithReferences,
  type JournalRecord,
  lineChartSvg,
  type Plan,
  type Task,
} from "@randattn/experiments/browser";

/** What the form chooses. */
export interface SweepChoice {
  generator: "gaussian" | "low-rank" | "heavy-tailed" | "clustered";
  sizes: number[];
  dim: number;
  scale: number;
  methods: ("exact" | "row-sampling" | "random-features" | "top-k")[];
  budgets: number[];
  trials: number;
  seed: number;
}

/** The experiment config of a choice: one figure of error against flops per sequence length. */
export function sweepConfig(c: SweepChoice): ExperimentConfig {
  const methods: ExperimentConfig["methods"] = [];
  const sweep: Record<string, number[]> = { "problem.n": c.sizes };
  for (const m of c.methods) {
    if (m === "exact") methods.push({ method: "exact" });
    if (m === "row-sampling") {
      methods.push({ method: "row-sampling", params: { scheme: "uniform" } });
      sweep["row-sampling.samples"] = c.budgets;
    }
    if (m === "random-features") {
      methods.push({ method: "random-features", params: { features: "positive", projection: "orthogonal" } });
      sweep["random-features.numFrequencies"] = c.budgets;
    }
    if (m === "top-k") {
      methods.push({ method: "top-k" });
      sweep["top-k.k"] = c.budgets;
    }
  }
  // A line joins points that differ only in the method's budget (x = its flops): one figure per N,
  // so no line joins two sequence lengths.
  const figures: FigureConfig[] = c.sizes.map((n) => ({
    name: `error-vs-flops-n${n}`,
    x: "flops",
    y: "rel_frobenius_error",
    where: { problem_n: n },
    title: `Relative Frobenius error against flops, N = ${n}`,
  }));
  return {
    experiment: "playground",
    description: "A sweep run in the RandAttn playground.",
    seed: c.seed,
    trials: c.trials,
    problem: { generator: c.generator, params: { d: c.dim, dv: c.dim, scale: c.scale } },
    methods,
    sweep,
    report: { figures },
  } as ExperimentConfig;
}

/** The SVG of every figure of the plan for the records so far (as in report.html). */
export function figureSvgs(plan: Plan, tasks: readonly Task[], records: ReadonlyMap<string, JournalRecord>): string[] {
  return (plan.loaded.config.report?.figures ?? []).map((fig) => {
    const { series, styles } = figureSeriesWithReferences(plan, tasks, records, fig);
    return lineChartSvg(series, {
      title: fig.title ?? fig.name,
      xLabel: fig.x ?? "flops",
      yLabel: fig.y ?? "rel_frobenius_error",
      logX: fig.logX ?? true,
      logY: fig.logY ?? true,
      note: "line: mean over trials; band: min–max over trials",
      styles,
    });
  });
}
