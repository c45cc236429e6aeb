/**
 * The experiment config: its TypeScript shape and the JSON schema (ajv) every config is validated
 * against before anything runs. Method and problem params are validated afterwards against the
 * schema of the registered method / generator (registry/), with the same error format.
 */

import { LITERATURE_METRIC_NAMES, type LiteratureMetricName } from "../metrics/literature.js";

/** Error metrics a config can ask for (all are computed when `metrics` is omitted). */
export const METRIC_NAMES = ["rel_frobenius_error", "rel_spectral_error", "max_abs_error", "mean_kl_divergence"] as const;
/** One error metric. */
export type MetricName = (typeof METRIC_NAMES)[number];
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
  /** Column whose values are the lines. @default "method_label" */
  series?: string;
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
  references?: { y: string; label: string }[];
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
  problem: {
    generator: string;
    params?: Record<string, ConfigValue>;
    kernel?: KernelConfig;
    mask?: { kind: "causal"; offset?: number } | null;
  };
  methods: { method: string; label?: string; params?: Record<string, ConfigValue> }[];
  /** Axis name → values. Axis names: `problem.<param>` or `<method label>.<param>`. */
  sweep?: Record<string, SweepAxisConfig>;
  metrics?: ConfigMetricName[];
  report?: { figures?: FigureConfig[]; tableMetric?: string };
}

const NAME = "^[a-z0-9][a-z0-9-]{0,63}$";
const PARAM_VALUE = { type: ["number", "string", "boolean"] };

/** The JSON schema of a config (draft-07, ajv strict mode). */
export const CONFIG_SCHEMA = {
  $id: "https://randattn.dev/schemas/experiment.json",
  type: "object",
  additionalProperties: false,
  required: ["experiment", "seed", "trials", "problem", "methods"],
  properties: {
    experiment: { type: "string", pattern: NAME, description: "kebab-case experiment name" },
    description: { type: "string", maxLength: 4000 },
    seed: { type: "integer", minimum: 0, maximum: Number.MAX_SAFE_INTEGER },
    trials: { type: "integer", minimum: 1, maximum: 10_000 },
    problem: {
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
              series: { type: "string", pattern: "^[a-z][a-z0-9_]*$" },
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
                  required: ["y", "label"],
                  properties: {
                    y: { type: "string", pattern: "^[a-z][a-z0-9_]*$" },
                    label: { type: "string", minLength: 1, maxLength: 40 },
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
