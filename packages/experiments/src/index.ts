/**
 * `@randattn/experiments` — seeded sweeps comparing exact attention with randomized sketches:
 * configs, plans, the runner, CSV results, manifests, figures and reports (see README.md).
 *
 * The public API, by explicit name (issue 9): what a user needs to load and run a config, register
 * methods and problem generators, and read or plot results. Everything else (journal, locks, the
 * worker pool, CSV/atomic-write helpers, the expression interpreter…) is internal; the list is pinned
 * by test/public-surface.test.ts, so growing the surface is a deliberate, reviewed diff.
 *
 * @module @randattn/experiments
 */
// configs
export { ConfigError, type ConfigIssue } from "./config/errors.js";
export { type LoadedConfig, loadConfigFile, loadConfigObject, parseConfigText, validateConfigObject } from "./config/load.js";
export {
  CONFIG_SCHEMA,
  type ExperimentConfig,
  type FigureConfig,
  type FigureReference,
  type KernelConfig,
  METRIC_NAMES,
  type MethodConfig,
  type MetricName,
  type NamedProblemConfig,
  type ProblemConfig,
  type RateReference,
  type SweepAxisConfig,
} from "./config/schema.js";
// plans and seeds
export {
  type Cell,
  DEFAULT_MAX_CELLS,
  DEFAULT_MAX_TASKS,
  type ExpandOptions,
  type Plan,
  type Task,
  expandPlan,
  planTasks,
} from "./plan/expand.js";
export { cellSeed, inputSeed, methodSeed } from "./plan/seeds.js";
// running, reproducing, regenerating
export { RunRefusedError, type RunOptions, type RunResult, runPlan } from "./run/runner.js";
export { type ReproduceOptions, type ReproduceVerdict, reproduceAll } from "./run/reproduce.js";
export { regenerateOutputs } from "./run/regenerate.js";
export { type MergeOptions, mergeShards } from "./run/merge.js";
// metrics a method author compares against
export { maxAbsError, meanKlDivergence, relativeFrobenius, relativeSpectral, spectralNorm } from "./base/metrics.js";
// registries and typed plugin definitions
export { getMethod, listMethods, registerMethod } from "./registry/methods.js";
export { getProblem, listProblems, registerProblem } from "./registry/problems.js";
export {
  type ParamsOf,
  type ParamValueOf,
  type TypedMethodDefinition,
  type TypedParamsSchema,
  type TypedProblemDefinition,
  boolParam,
  defineMethod,
  defineProblem,
  enumParam,
  intParam,
  numberParam,
  paramsSchema,
} from "./registry/define.js";
export type {
  AccountingStructure,
  AttentionHead,
  Cost,
  ExtraMetric,
  GenerateContext,
  KernelPairsStructure,
  KernelSpec,
  LatentStructure,
  MaskSpec,
  MethodDefinition,
  MethodResult,
  MultiHeadStructure,
  ParamValue,
  Params,
  ParamsSchema,
  ProblemDefinition,
  ProblemInstance,
  ReferenceContext,
  RunContext,
} from "./registry/types.js";
// results and figures
export { resultColumns, resultsCsv } from "./output/results.js";
export { type SampleSummary, summarize } from "./base/stats.js";
export { type ChartOptions, type Series, type SeriesPoint, lineChartSvg } from "./figures/svg.js";
export { latexTable, markdownTable } from "./figures/tables.js";
