/**
 * Every module of @randattn/experiments, for the package's own tests and tools (vitest alias
 * `@randattn/experiments/internal`). NOT part of the public API — that is index.ts, an explicit
 * list pinned by test/public-surface.test.ts. Not exported from package.json.
 */
export * from "./base/canonical.js";
export * from "./base/expr-eval.js";
export * from "./base/format.js";
export * from "./base/metrics.js";
export * from "./base/stats.js";
export * from "./config/errors.js";
export * from "./config/expressions.js";
export * from "./config/load.js";
export * from "./config/overrides.js";
export * from "./config/schema.js";
export * from "./figures/data.js";
export * from "./figures/report.js";
export * from "./figures/svg.js";
export * from "./figures/tables.js";
export * from "./metrics/literature.js";
export * from "./output/atomic.js";
export * from "./output/manifest.js";
export * from "./output/results.js";
export * from "./output/summary.js";
export * from "./plan/expand.js";
export * from "./plan/seeds.js";
export * from "./plan/shard.js";
export * from "./registry/define.js";
export * from "./registry/exact.js";
export * from "./registry/methods.js";
export * from "./registry/problems.js";
export * from "./registry/sketch-adapters.js";
export * from "./registry/types.js";
export * from "./run/execute.js";
export * from "./run/journal.js";
export * from "./run/lock.js";
export * from "./run/merge.js";
export * from "./run/outputs.js";
export * from "./run/pool.js";
export * from "./run/progress.js";
export * from "./run/regenerate.js";
export * from "./run/reproduce.js";
export * from "./run/runner.js";
export * from "./run/weight-pool.js";
