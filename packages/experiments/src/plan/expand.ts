/**
 * Plan expansion: the config's grid becomes an ordered list of cells (problem point × method ×
 * method-param point), each with resolved params, an id and seeds — before anything runs.
 *
 * Order (deterministic, a function of the canonical config only): problem axes sorted by name,
 * each axis's values in the order listed; then methods in config order; then that method's axes
 * sorted by name. Tasks are (cell, trial), cell-major. Reordering keys in the YAML changes
 * neither the hash nor the order.
 */
import { LITERATURE_METRIC_NAMES } from "../metrics/literature.js";
import { type ConfigIssue, ConfigError, formatPath } from "../config/errors.js";
import { expandSweepExpression, MAX_RANGE_VALUES } from "../config/expressions.js";
import {
  axisProblems,
  axisValueSchema,
  CHECKPOINT_GENERATORS,
  checkpointDataPaths,
  type LoadedConfig,
  ajvIssues,
  validatorFor,
} from "../config/load.js";
import type { ConfigValue, SweepAxisConfig } from "../config/schema.js";
import { getMethod } from "../registry/methods.js";
import { getProblem } from "../registry/problems.js";
import type { ParamValue, Params, ParamsSchema } from "../registry/types.js";
import { cellSeed } from "./seeds.js";
import { snakeCase } from "../base/format.js";

/** Default most cells a plan may have (lift with `--max-cells`). */
export const DEFAULT_MAX_CELLS = 10_000;
/** Most (cell, trial) tasks a plan may have, whatever `--max-cells` says per cell. */
export const DEFAULT_MAX_TASKS = 1_000_000;

/** One cell of the grid. */
export interface Cell {
  /** Position in the sorted plan. */
  readonly index: number;
  /** 16 hex digits: hash of (root seed, cell identity). */
  readonly id: string;
  readonly problem: { readonly generator: string; readonly params: Params };
  /** The problem's label (the `problem` column): its `problems:` label, or the generator of a single `problem:`. */
  readonly problemLabel: string;
  /** Position of the cell's problem in `loaded.problems` (its kernel and mask). */
  readonly problemIndex: number;
  readonly method: { readonly name: string; readonly label: string; readonly params: Params };
}

/** One (cell, trial) unit of work. */
export interface Task {
  /** Position in the sorted task list (cell.index · trials + trial). */
  readonly index: number;
  readonly cell: number;
  readonly trial: number;
  /** `<cell id>/<trial>`: the journal key. */
  readonly key: string;
}

/** The expanded, sorted plan. */
export interface Plan {
  readonly loaded: LoadedConfig;
  readonly cells: readonly Cell[];
  readonly trials: number;
  /** Problem params that appear in results.csv as `problem_<name>`, sorted. */
  readonly problemParams: readonly string[];
  /** Method params that appear as `param_<name>`, sorted. */
  readonly methodParams: readonly string[];
  /** Extra metric columns (union of the methods' `extraMetrics`), sorted; after `floats_stored`. */
  readonly extraColumns: readonly string[];
}

/** Options of `expandPlan`. */
export interface ExpandOptions {
  /** Cap on the number of cells. @default DEFAULT_MAX_CELLS */
  maxCells?: number;
}

/** The values of one sweep axis (literal list, expression string or {from, to, step|count}). */
export function axisValues(axis: SweepAxisConfig, path: string): ConfigValue[] {
  let values: ConfigValue[];
  if (Array.isArray(axis)) values = axis.map((v) => (v === 0 ? 0 : v));
  else if (typeof axis === "string") values = expandSweepExpression(axis, path);
  else {
    const { from, to } = axis;
    if (axis.step !== undefined && axis.count !== undefined)
      throw new ConfigError("sweep", [{ path, expected: "either step or count", actual: "both" }]);
    if (axis.count !== undefined) {
      const n = axis.count;
      const log = axis.spacing === "log";
      if (log && !(from > 0 && to > 0))
        throw new ConfigError("sweep", [{ path, expected: "from > 0 and to > 0 for log spacing", actual: `${from}..${to}` }]);
      values = Array.from({ length: n }, (_, i) => {
        if (n === 1) return from;
        const t = i / (n - 1);
        // Endpoints exact; interior points from + t·(to − from) (or geometric) computed directly.
        if (i === n - 1) return to;
        return log ? from * (to / from) ** t : from + t * (to - from);
      });
    } else {
      if (axis.spacing === "log") throw new ConfigError("sweep", [{ path, expected: "count with spacing: log", actual: "step" }]);
      values = expandSweepExpression(`${from}..${to} step ${axis.step ?? 1}`, path);
    }
    if (axis.integer) values = values.map((v) => Math.round(v as number));
  }
  const seen = new Set<string>();
  values.forEach((v, i) => {
    const k = `${typeof v}:${v}`;
    if (seen.has(k))
      throw new ConfigError("sweep", [
        {
          path: `${path}[${i}]`,
          expected: "values listed once (a repeated value would duplicate cells)",
          actual: `${JSON.stringify(v)} again`,
        },
      ]);
    seen.add(k);
  });
  if (values.length > MAX_RANGE_VALUES)
    throw new ConfigError("sweep", [{ path, expected: `at most ${MAX_RANGE_VALUES} values`, actual: `${values.length}` }]);
  return values;
}

interface Axis {
  readonly name: string;
  readonly param: string;
  readonly values: ConfigValue[];
}

function product(axes: readonly Axis[]): Params[] {
  let points: Params[] = [{}];
  for (const a of axes) {
    const next: Params[] = [];
    for (const p of points) for (const v of a.values) next.push({ ...p, [a.param]: v });
    points = next;
  }
  return points;
}

function checkAxisValues(axis: Axis, schema: ParamsSchema, issues: ConfigIssue[]): void {
  const validate = validatorFor(axisValueSchema(schema, axis.param));
  axis.values.forEach((v, i) => {
    if (!validate(v)) issues.push(...ajvIssues(validate.errors ?? [], ["sweep", axis.name, i]));
  });
}

function resolveParams(schema: ParamsSchema, params: Params, path: (string | number)[], issues: ConfigIssue[]): Params | null {
  const copy: Record<string, unknown> = { ...params };
  const validate = validatorFor(schema);
  if (!validate(copy)) {
    issues.push(...ajvIssues(validate.errors ?? [], path));
    return null;
  }
  return copy as Params;
}

/**
 * Expands a loaded config into its sorted plan.
 * @throws ConfigError for bad axis values, params rejected by a method's or generator's schema,
 *   or a grid over the cap (`maxCells`), before any cell is built.
 */
export function expandPlan(loaded: LoadedConfig, options: ExpandOptions = {}): Plan {
  const { config } = loaded;
  const maxCells = options.maxCells ?? DEFAULT_MAX_CELLS;
  const issues: ConfigIssue[] = [];
  const axesByTarget = new Map<string, Axis[]>();
  const methodTargets = new Set(config.methods.map((m) => m.label ?? m.method));
  for (const name of Object.keys(config.sweep ?? {}).sort()) {
    const dot = name.indexOf(".");
    const target = name.slice(0, dot);
    let values: ConfigValue[] = [];
    try {
      values = axisValues(config.sweep![name], formatPath(["sweep", name]));
    } catch (e) {
      if (e instanceof ConfigError) issues.push(...e.issues);
      else {
        const err = e as { argument?: string; expected?: string; actual?: string; message: string };
        issues.push({
          path: err.argument ?? formatPath(["sweep", name]),
          expected: err.expected ?? "a valid sweep",
          actual: err.actual ?? err.message,
        });
      }
    }
    const list = axesByTarget.get(target) ?? [];
    list.push({ name, param: name.slice(dot + 1), values });
    axesByTarget.set(target, list);
  }
  const problems = loaded.problems;
  // The axes of each problem: `problem.<param>` where its generator has the param, and
  // `<its label>.<param>`; sorted by axis name (the order of a single problem's axes is unchanged).
  const problemAxes = problems.map((_, i) =>
    [...axesByTarget.entries()]
      .filter(([target]) => methodTargets.has(target) === false)
      .flatMap(([, axes]) => axes)
      .filter((a) => axisProblems(config, a.name).includes(i))
      .sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0)),
  );
  problems.forEach((p, i) => {
    for (const a of problemAxes[i]) checkAxisValues(a, getProblem(p.problem.generator).paramsSchema, issues);
  });
  const methodAxes = config.methods.map((m) => axesByTarget.get(m.label ?? m.method) ?? []);
  config.methods.forEach((m, i) => {
    for (const a of methodAxes[i]) checkAxisValues(a, getMethod(m.method).paramsSchema, issues);
  });
  if (issues.length > 0) throw new ConfigError(loaded.source, issues);
  // Which methods run on which problem (a method's `problems:` filter; default every problem).
  const runsOn = (m: (typeof config.methods)[number], p: (typeof problems)[number]) => !m.problems || m.problems.includes(p.label);

  // The cap is checked on the counts before any cell object exists, so a 10¹²-cell grid costs nothing.
  const count = (axes: readonly Axis[]) => axes.reduce((n, a) => n * a.values.length, 1);
  const cellCount = problems.reduce(
    (total, p, pi) => total + count(problemAxes[pi]) * config.methods.reduce((n, m, i) => n + (runsOn(m, p) ? count(methodAxes[i]) : 0), 0),
    0,
  );
  if (cellCount > maxCells) {
    throw new ConfigError(loaded.source, [
      { path: "sweep", expected: `a grid of at most ${maxCells} cells (raise the cap with --max-cells)`, actual: `${cellCount} cells` },
    ]);
  }
  if (cellCount * config.trials > DEFAULT_MAX_TASKS) {
    throw new ConfigError(loaded.source, [
      {
        path: "trials",
        expected: `at most ${DEFAULT_MAX_TASKS} (cell, trial) tasks`,
        actual: `${cellCount} cells × ${config.trials} trials`,
      },
    ]);
  }

  const problemPoints: Params[][] = problems.map((p, pi) => {
    const out: Params[] = [];
    const schema = getProblem(p.problem.generator).paramsSchema;
    for (const point of product(problemAxes[pi])) {
      const resolved = resolveParams(schema, { ...(p.problem.params ?? {}), ...point }, [...pathSegments(p.path), "params"], issues);
      if (resolved) out.push(resolved);
    }
    return out;
  });
  const methodPoints: Params[][] = config.methods.map((m, i) => {
    const def = getMethod(m.method);
    const out: Params[] = [];
    for (const point of product(methodAxes[i])) {
      const resolved = resolveParams(def.paramsSchema, { ...(m.params ?? {}), ...point }, ["methods", i, "params"], issues);
      if (resolved) out.push(resolved);
    }
    return out;
  });
  if (issues.length > 0) throw new ConfigError(loaded.source, issues.slice(0, 20));

  const cells: Cell[] = [];
  const ids = new Map<string, string>();
  problems.forEach((lp, pi) => {
    const generator = getProblem(lp.problem.generator);
    const kernel = lp.problem.kernel ?? { kind: "softmax" };
    for (const pp of problemPoints[pi]) {
      config.methods.forEach((m, i) => {
        if (!runsOn(m, lp)) return;
        for (const mp of methodPoints[i]) {
          const problem = { generator: generator.name, params: pp };
          const method = { name: m.method, label: m.label ?? m.method, params: mp };
          // A cell's identity is everything its tasks compute from, and nothing else: its own problem
          // point and method point, the kernel and mask, the metrics asked for and the data files it
          // reads. Not the rest of the grid, so adding sweep values, methods, problems or trials leaves
          // every existing cell's id (and its tasks' seeds, plan/seeds.ts) unchanged and its results
          // reusable. Not the problem's label either (it only names the problem in results.csv), so a
          // single `problem:` moved into `problems:` keeps its ids.
          const data = cellDataFiles(loaded, generator.name, pp);
          const id = cellSeed(config.seed, {
            problem,
            kernel,
            mask: lp.problem.mask ?? null,
            method,
            metrics: [...loaded.metrics].sort(),
            ...(data.length > 0 ? { data } : {}),
          });
          const where = `${lp.named ? `${lp.label}: ` : ""}${method.label}`;
          const prev = ids.get(id);
          if (prev !== undefined)
            throw new ConfigError(loaded.source, [
              {
                path: lp.named ? "problems" : "sweep",
                expected: "distinct cells (two problems with the same generator, params, kernel and mask compute the same cells)",
                actual: `a repeated cell ${id} (${prev} and ${where})`,
              },
            ]);
          ids.set(id, where);
          cells.push({ index: cells.length, id, problem, problemLabel: lp.label, problemIndex: pi, method });
        }
      });
    }
  });
  const generators = [...new Set(problems.map((p) => p.problem.generator))];
  const problemParams = [...new Set(generators.flatMap((g) => Object.keys(getProblem(g).paramsSchema.properties)))].sort();
  const methodParams = [...new Set(config.methods.flatMap((m) => Object.keys(getMethod(m.method).paramsSchema.properties)))].sort();
  const extraColumns = [
    ...new Set([
      ...config.methods.flatMap((m) => (getMethod(m.method).extraMetrics ?? []).map((e) => e.name)),
      // Opt-in literature metrics (metrics/literature.ts) are extra columns too.
      ...LITERATURE_METRIC_NAMES.filter((name) => loaded.metrics.includes(name)),
    ]),
  ].sort();
  return { loaded, cells, trials: config.trials, problemParams, methodParams, extraColumns };
}

/** `problems[1]` → ["problems", 1]. */
function pathSegments(path: string): (string | number)[] {
  return path
    .replace(/\[(\d+)\]/g, ".$1")
    .split(".")
    .map((s) => (/^\d+$/.test(s) ? Number(s) : s));
}

/**
 * The [path, sha256] pairs of the data files a problem point reads, sorted: the `.npy` inputs (as
 * they always were: each string param that names a hashed file), or a checkpoint's files and
 * held-out text (config/load.ts checkpointDataPaths).
 */
function cellDataFiles(loaded: LoadedConfig, generator: string, pp: Params): [string, string][] {
  if (CHECKPOINT_GENERATORS.has(generator) && typeof pp.checkpoint === "string") {
    return checkpointDataPaths(pp.checkpoint, typeof pp.text === "string" ? pp.text : "")
      .filter((path) => Object.hasOwn(loaded.dataFiles, path))
      .sort()
      .map((path) => [path, loaded.dataFiles[path]]);
  }
  return Object.values(pp)
    .filter((v): v is string => typeof v === "string" && Object.hasOwn(loaded.dataFiles, v))
    .sort()
    .map((path) => [path, loaded.dataFiles[path]]);
}

/** The tasks of a plan in order (cell-major, then trial). */
export function planTasks(plan: Plan): Task[] {
  const tasks: Task[] = [];
  for (const c of plan.cells) {
    for (let t = 0; t < plan.trials; t++) tasks.push({ index: c.index * plan.trials + t, cell: c.index, trial: t, key: `${c.id}/${t}` });
  }
  return tasks;
}

/** A value of a params object as written in the CSV (booleans as true/false). */
export function paramText(v: ParamValue | undefined): string {
  return v === undefined ? "" : String(v);
}

/**
 * The swept axes of a plan that apply to a cell: `problem.<param>` and `<problem label>.<param>`
 * of its problem, and `<its method label>.<param>`; `column` is the results.csv column.
 */
export function cellAxes(plan: Plan, cellIndex: number): { axis: string; param: string; value: ParamValue; column: string }[] {
  const c = plan.cells[cellIndex];
  const config = plan.loaded.config;
  const out: { axis: string; param: string; value: ParamValue; column: string }[] = [];
  for (const axis of Object.keys(config.sweep ?? {}).sort()) {
    const dot = axis.indexOf(".");
    const target = axis.slice(0, dot);
    const param = axis.slice(dot + 1);
    if (target === c.method.label) out.push({ axis, param, value: c.method.params[param], column: `param_${snakeCase(param)}` });
    else if (axisProblems(config, axis).includes(c.problemIndex))
      out.push({ axis, param, value: c.problem.params[param], column: `problem_${snakeCase(param)}` });
  }
  return out;
}

/** `label (problem.n=512, samples=64)`: a cell named by its method label and swept values. */
export function cellDescription(plan: Plan, cellIndex: number): string {
  const c = plan.cells[cellIndex];
  const axes = cellAxes(plan, cellIndex).map((a) => `${a.column.startsWith("problem_") ? a.axis : a.param}=${paramText(a.value)}`);
  const label = plan.loaded.problems.length > 1 ? `${c.problemLabel}: ${c.method.label}` : c.method.label;
  return axes.length > 0 ? `${label} (${axes.join(", ")})` : label;
}
