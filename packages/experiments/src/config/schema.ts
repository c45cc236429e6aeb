/**
 * The experiment config: its TypeScript shape and the JSON schema (ajv) every config is validated
 * against before anything runs. Method and problem params are validated afterwards against the
 * schema of the registered method / generator (registry/), with the same error format.
 */

import { METRIC_NAMES, type MetricName } from "../base/records.js";

export { METRIC_NAMES, type MetricName } from "../base/records.js";
import { LITERATURE_METRIC_NAMES, type LiteratureMetricName } from "../metrics/literature.js";

/** What `metrics:` may list: the fixed columns, or the opt-in literature metrics (extra columns, metrics/literature.ts). */
export type ConfigMetricName = MetricName | LiteratureMetricName;

/** A literal parameter value. */
export type ConfigValue = number | string | boolean;

/** How one sweep axis lists its values. */
export type SweepAxisConfig =
  | ConfigValue[]
  | string
  | { from: number; to: number; step?: number; count?: number; spacing?: "linear" | "log"; integer?: boolean };

/** The kernel κ of the problem. */
export type KernelConfig = { kind: "softmax"; scale?: number } | { kind: "dot"; formula: string; scale?: number };

/** A figure of the report. */
export interface FigureConfig {
  /** File stem, e.g. `error-vs-flops` → figures/error-vs-flops.svg. */
  name: string;
  /** Column of results.csv (or timings.csv for `wall_time_ms`) on the x axis. @default "flops" */
  x?: string;
  /** Column on the y axis. @default "rel_frobenius_error" */
  y?: string;
  /**
   * Column(s) whose values make the lines, e.g. `[method_label, problem_n]`.
   * @default "method_label"
   */
  series?: string | string[];
  /**
   * Column(s) with one panel per value, e.g. `problem_n`; `[]` for a single panel.
   * @default every swept problem parameter (`problem_*` column) not on x or in `series`
   */
  facet?: string | string[];
  /**
   * Swept columns to average over (named in the caption). Any other swept column is a facet, part
   * of the series, or moves one-to-one with x along each line; never silently averaged.
   * @default none
   */
  average?: string[];
  /** The band around each point: "ci" (95 % Student-t CI of the mean), "minmax" over trials, or "none". @default "ci" */
  band?: "ci" | "minmax" | "none";
  /** Axis label in words with units. @default the column's label (base/labels.ts) */
  xLabel?: string;
  /** @default the column's label */
  yLabel?: string;
  /** Logarithmic axes. @default true */
  logX?: boolean;
  /** @default true */
  logY?: boolean;
  title?: string;
  /** Keep only rows whose columns have these values (e.g. `{ method_label: model-total }`). */
  where?: Record<string, ConfigValue>;
  /**
   * Reference curves: for each entry, the mean of column `y` per series and x, drawn dashed in the
   * series' colour (no band), with one legend entry `label` per reference (e.g. the DKM
   * expectation, the HMT bound). Series without values in that column draw nothing.
   * @default none
   */
  references?: FigureReference[];
}

/**
 * A reference of a figure: a column (`y`: e.g. the DKM expectation, drawn as measured), or a
 * theoretical rate (`rate`: a slope line, labelled as a rate and never as data).
 */
export type FigureReference = ColumnReference | RateReference;

/** The mean of column `y` per series and x, dashed in the series' colour. */
export interface ColumnReference {
  y: string;
  label: string;
}

/**
 * A theoretical rate y ∝ s^rate drawn beside each line of the listed methods, where s is the
 * line's knob (the swept size that moves one-to-one with x, e.g. samples or numFrequencies; x
 * itself when the line has none), evaluated at the line's own points and anchored at one of them
 * (so it shows the slope the theory predicts, not a fit): e.g. `rate: -0.5` for Monte Carlo.
 */
export interface RateReference {
  /** Exponent of the rate in s, e.g. -0.5 for the Monte Carlo s^(-1/2). */
  rate: number;
  /** Legend entry, e.g. "s^-1/2 (Monte Carlo rate)". */
  label: string;
  /** method_label values whose lines get the rate. @default every line */
  methods?: string[];
  /**
   * The point the rate line goes through: the line's largest s ("last": the asymptotic regime the
   * rate describes) or its smallest ("first").
   * @default "last"
   */
  anchor?: "first" | "last";
}

/** A problem: a generator and its params, the kernel κ and the mask. */
export interface ProblemConfig {
  generator: string;
  params?: Record<string, ConfigValue>;
  /** @default { kind: "softmax" } */
  kernel?: KernelConfig;
  /** @default null (no mask) */
  mask?: { kind: "causal"; offset?: number } | null;
}

/** One entry of `problems:`. */
export interface NamedProblemConfig extends ProblemConfig {
  /** kebab-case, unique among problems and method labels; the `problem` column of results.csv. */
  label: string;
}

/** One entry of `methods:`. */
export interface MethodConfig {
  method: string;
  /** @default the method name */
  label?: string;
  params?: Record<string, ConfigValue>;
  /**
   * Labels of the problems this method runs on (a KV cache only where the checkpoint has KV
   * heads, say); the other problems get no cells for it, so no failed rows.
   * @default every problem
   */
  problems?: string[];
}

/** A config as written (after YAML/JSON parsing and schema validation). */
export interface ExperimentConfig {
  /** kebab-case name; results go to results/<experiment>/. */
  experiment: string;
  description?: string;
  /** Root seed of every random draw in the experiment. */
  seed: number;
  /** Independent repetitions of every cell. */
  trials: number;
  /** The one problem of a single-problem experiment (exactly one of `problem` and `problems`). */
  problem?: ProblemConfig;
  /**
   * Several named problems in one experiment (exactly one of `problem` and `problems`): every
   * method runs on every problem (or on those its `problems` lists); results carry the label in
   * the `problem` column. A problem's label is not part of its cells' identity, so turning a
   * single `problem:` into a `problems:` entry, or renaming a label, reuses every finished task.
   */
  problems?: NamedProblemConfig[];
  methods: MethodConfig[];
  /**
   * Axis name → values. Axis names: `problem.<param>` (every problem whose generator has the
   * param), `<problem label>.<param>` (that named problem only) or `<method label>.<param>`.
   */
  sweep?: Record<string, SweepAxisConfig>;
  metrics?: ConfigMetricName[];
  report?: { figures?: FigureConfig[]; tableMetric?: string };
}

const NAME = "^[a-z0-9][a-z0-9-]{0,63}$";
const PARAM_VALUE = { type: ["number", "string", "boolean"] };
const COLUMN = { type: "string", pattern: "^[a-z][a-z0-9_]*$" } as const;
const COLUMNS = { anyOf: [COLUMN, { type: "array", maxItems: 8, items: COLUMN }] } as const;

/** The schema of a problem (`problem:`, or an entry of `problems:` with its `label`). */
const PROBLEM_SCHEMA = {
  type: "object",
  additionalProperties: false,
  required: ["generator"],
  properties: {
    generator: { type: "string", pattern: NAME },
    params: { type: "object", maxProperties: 64, additionalProperties: PARAM_VALUE },
    kernel: {
      type: "object",
      required: ["kind"],
      properties: { kind: { type: "string", enum: ["softmax", "dot"] } },
      discriminator: { propertyName: "kind" },
      oneOf: [
        {
          type: "object",
          additionalProperties: false,
          required: ["kind"],
          properties: { kind: { const: "softmax" }, scale: { type: "number", exclusiveMinimum: 0, maximum: 1e6 } },
        },
        {
          type: "object",
          additionalProperties: false,
          required: ["kind", "formula"],
          properties: {
            kind: { const: "dot" },
            formula: { type: "string", minLength: 1, maxLength: 256 },
            scale: { type: "number", exclusiveMinimum: 0, maximum: 1e6 },
          },
        },
      ],
    },
    mask: {
      type: ["object", "null"],
      additionalProperties: false,
      required: ["kind"],
      properties: { kind: { type: "string", enum: ["causal"] }, offset: { type: "integer", minimum: 0, maximum: 1 << 30 } },
    },
  },
} as const;

/** The JSON schema of a config (draft-07, ajv strict mode). */
export const CONFIG_SCHEMA = {
  $id: "https://randattn.dev/schemas/experiment.json",
  type: "object",
  additionalProperties: false,
  required: ["experiment", "seed", "trials", "methods"],
  properties: {
    experiment: { type: "string", pattern: NAME, description: "kebab-case experiment name" },
    description: { type: "string", maxLength: 4000 },
    seed: { type: "integer", minimum: 0, maximum: Number.MAX_SAFE_INTEGER },
    trials: { type: "integer", minimum: 1, maximum: 10_000 },
    problem: PROBLEM_SCHEMA,
    problems: {
      type: "array",
      minItems: 1,
      maxItems: 32,
      items: {
        ...PROBLEM_SCHEMA,
        required: ["label", "generator"],
        properties: { label: { type: "string", pattern: NAME }, ...PROBLEM_SCHEMA.properties },
      },
    },
    methods: {
      type: "array",
      minItems: 1,
      maxItems: 64,
      items: {
        type: "object",
        additionalProperties: false,
        required: ["method"],
        properties: {
          method: { type: "string", pattern: NAME },
          label: { type: "string", pattern: NAME },
          params: { type: "object", maxProperties: 64, additionalProperties: PARAM_VALUE },
          problems: { type: "array", minItems: 1, maxItems: 32, uniqueItems: true, items: { type: "string", pattern: NAME } },
        },
      },
    },
    sweep: {
      type: "object",
      maxProperties: 32,
      propertyNames: { pattern: "^[a-z0-9][a-z0-9-]{0,63}\\.[A-Za-z][A-Za-z0-9_]{0,63}$" },
      additionalProperties: {
        anyOf: [
          { type: "array", minItems: 1, maxItems: 10_000, items: PARAM_VALUE },
          { type: "string", minLength: 1, maxLength: 256 },
          {
            type: "object",
            additionalProperties: false,
            required: ["from", "to"],
            properties: {
              from: { type: "number" },
              to: { type: "number" },
              step: { type: "number", exclusiveMinimum: 0 },
              count: { type: "integer", minimum: 1, maximum: 10_000 },
              spacing: { type: "string", enum: ["linear", "log"] },
              integer: { type: "boolean" },
            },
          },
        ],
      },
    },
    metrics: {
      type: "array",
      minItems: 1,
      uniqueItems: true,
      items: { type: "string", enum: [...METRIC_NAMES, ...LITERATURE_METRIC_NAMES] },
    },
    report: {
      type: "object",
      additionalProperties: false,
      properties: {
        tableMetric: { type: "string", pattern: "^[a-z_]+$" },
        figures: {
          type: "array",
          maxItems: 32,
          items: {
            type: "object",
            additionalProperties: false,
            required: ["name"],
            properties: {
              name: { type: "string", pattern: NAME },
              x: { type: "string", pattern: "^[a-z][a-z0-9_]*$" },
              y: { type: "string", pattern: "^[a-z][a-z0-9_]*$" },
              series: COLUMNS,
              facet: COLUMNS,
              average: { type: "array", maxItems: 8, items: COLUMN },
              band: { type: "string", enum: ["ci", "minmax", "none"] },
              xLabel: { type: "string", maxLength: 120 },
              yLabel: { type: "string", maxLength: 120 },
              logX: { type: "boolean" },
              logY: { type: "boolean" },
              title: { type: "string", maxLength: 200 },
              where: {
                type: "object",
                maxProperties: 8,
                propertyNames: { pattern: "^[a-z][a-z0-9_]*$" },
                additionalProperties: PARAM_VALUE,
              },
              references: {
                type: "array",
                maxItems: 4,
                items: {
                  type: "object",
                  additionalProperties: false,
                  required: ["label"],
                  properties: {
                    y: { type: "string", pattern: "^[a-z][a-z0-9_]*$" },
                    rate: { type: "number", minimum: -16, maximum: 16 },
                    methods: { type: "array", minItems: 1, maxItems: 64, items: { type: "string", pattern: NAME } },
                    anchor: { type: "string", enum: ["first", "last"] },
                    label: { type: "string", minLength: 1, maxLength: 60 },
                  },
                },
              },
            },
          },
        },
      },
    },
  },
} as const;
