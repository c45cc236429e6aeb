/**
 * `@randattn/experiments/browser` — the part of the experiments package that runs without Node
 * (a browser page, a Web Worker): validate a config object, expand it into a plan, run its tasks
 * one by one with the same registry and seeds as the CLI, and format results.csv rows and figures
 * exactly as the CLI does. Nothing here touches a file; the `npy` generator, config files and the
 * worker pool are Node-only (main entry `@randattn/experiments`). Expressions in a config need
 * `await loadExpressionParser()` first.
 *
 * @example
 * ```ts
 * import { expandPlan, executeTask, loadConfigObject, planTasks, resultsCsv, taskSpec } from "@randattn/experiments/browser";
 *
 * const loaded = loadConfigObject(
 *   {
 *     experiment: "tiny",
 *     seed: 1,
 *     trials: 1,
 *     problem: { generator: "gaussian", params: { n: 32, d: 8 } },
 *     methods: [{ method: "exact" }, { method: "row-sampling", params: { samples: 8 } }],
 *   },
 *   "/",
 * );
 * const plan = expandPlan(loaded);
 * const tasks = planTasks(plan);
 * const records = new Map(tasks.map((t) => [t.key, { ...executeTask(taskSpec(plan, t)), type: "task" as const, session: "doc" }]));
 * console.log(resultsCsv(plan, tasks, records).split("\n")[0]);
 * ```
 *
 * @module @randattn/experiments/browser
 */
export { canonicalJson, sha256 } from "./config/canonical.js";
export { ConfigError, type ConfigIssue } from "./config/errors.js";
export { loadExpressionParser } from "./config/expressions.js";
export { type LoadedConfig, loadConfigObject, parseConfigText, validateConfigObject } from "./config/load.js";
export { CONFIG_SCHEMA, type ExperimentConfig, type FigureConfig, METRIC_NAMES, type MetricName } from "./config/schema.js";
export { columnValue, defaultFigures, figureSeries, figureSeriesWithReferences } from "./figures/data.js";
export { type ChartOptions, lineChartSvg, type Series } from "./figures/svg.js";
export { formatNumber, parseNumber, toCsv } from "./output/format.js";
export { cellColumns, resultColumns, resultRow, resultsCsv } from "./output/results.js";
export { type Cell, type Plan, type Task, expandPlan, planTasks } from "./plan/expand.js";
export { getMethod, listMethods } from "./registry/methods.js";
export { getProblem, listProblems } from "./registry/problems.js";
export type { MethodDefinition, ProblemDefinition, Params, ParamValue } from "./registry/types.js";
export { type MetricValues, type TaskOutcome, type TaskSpec, executeTask, taskSpec } from "./run/execute.js";
export type { JournalRecord } from "./run/journal.js";
