/**
 * Loading a config: read (bounded), parse YAML or JSON (bounded aliases, no custom tags, no merge
 * keys, unique keys), validate against CONFIG_SCHEMA, then check what the schema cannot: that the
 * generator, methods and sweep targets exist, labels are unique, the kernel formula is in the
 * restricted language. Nothing runs before all of this passes; every problem found is reported.
 */
import { FormatError } from "@randattn/core";
import { describe } from "@randattn/core/internal";
import { type ErrorObject, Ajv, type ValidateFunction } from "ajv";
import { getMethod, listMethods } from "../registry/methods.js";
import { fileSha256, getProblem, listProblems, resolveDataPath } from "../registry/problems.js";
import type { KernelSpec, MaskSpec, ParamsSchema } from "../registry/types.js";
import { canonicalJson, sha256 } from "../base/canonical.js";
import { ConfigError, type ConfigIssue, formatPath } from "./errors.js";
import { compileKernelFormula } from "./expressions.js";
import { applyOverrides } from "./overrides.js";
import { MAX_CONFIG_BYTES, parseConfigText } from "./parse.js";
import { PRECOMPILED_VALIDATORS } from "./validators.generated.js";
import { nodeFs, nodePath } from "../platform/node.js";

export { MAX_CONFIG_BYTES, MAX_YAML_ALIASES, parseConfigText } from "./parse.js";
import { CONFIG_SCHEMA, type ConfigMetricName, type ExperimentConfig, METRIC_NAMES, type ProblemConfig } from "./schema.js";

/** A validated config with everything needed to plan it. */
export interface LoadedConfig {
  readonly config: ExperimentConfig;
  /** Canonical JSON of the whole config (+ sha256 of referenced data files), presentation included. */
  readonly canonical: string;
  /**
   * Canonical JSON of what the results depend on: the config without its presentation keys
   * (PRESENTATION_KEYS: `description`, `report`), plus the sha256 of referenced data files.
   */
  readonly identity: string;
  /**
   * sha256 of `identity`: the config's identity for resume, growth, shards, merge and reproduce.
   * Editing a description, a figure or a table changes `canonical` but not `hash`, so `randattn
   * report` redraws without recomputing anything.
   */
  readonly hash: string;
  /** sha256 of each referenced data file, by the path written in the config. */
  readonly dataFiles: Readonly<Record<string, string>>;
  /** The `key=value` overrides applied on top of the file (in order), as typed. */
  readonly overrides: readonly string[];
  /** Folder against which relative data paths resolve. */
  readonly baseDir: string;
  /** Where it was read from (for messages), or `<inline>`. */
  readonly source: string;
  /** The kernel of the first problem (of the only one, for a single `problem:`). */
  readonly kernel: KernelSpec;
  /** The mask of the first problem. */
  readonly mask: MaskSpec | null;
  /** Every problem, in config order, with its kernel and mask resolved. */
  readonly problems: readonly LoadedProblem[];
  readonly metrics: readonly ConfigMetricName[];
}

/** A problem of a loaded config. */
export interface LoadedProblem extends ConfigProblem {
  readonly kernel: KernelSpec;
  readonly mask: MaskSpec | null;
}

/** Generators that read a Hugging Face checkpoint folder (`params.checkpoint`) and held-out text (`params.text`). */
export const CHECKPOINT_GENERATORS: ReadonlySet<string> = new Set(["model", "checkpoint-decode"]);

/** Files of a checkpoint folder the loader reads (registry/real.ts), hashed into the identity of tasks that read them. */
export const CHECKPOINT_FILES = ["config.json", "model.safetensors", "tokenizer.json"] as const;

/**
 * The data files (paths as written in the config, POSIX-joined) a checkpoint problem point reads:
 * the checkpoint's files and the held-out text (`text`, or heldout.txt next to the folder when
 * `text` is "", as registry/real.ts resolves it). A retrained checkpoint changes their sha256, so
 * the cells that read it change id and a resume names the file that changed.
 */
export function checkpointDataPaths(checkpoint: string, text: string): string[] {
  const folder = checkpoint.replace(/\/+$/, "");
  const heldout = text === "" ? posixJoin(posixDirname(folder), "heldout.txt") : text;
  return [...CHECKPOINT_FILES.map((f) => `${folder}/${f}`), heldout];
}

function posixDirname(p: string): string {
  const i = p.lastIndexOf("/");
  return i < 0 ? "." : i === 0 ? "/" : p.slice(0, i);
}

function posixJoin(a: string, b: string): string {
  const parts: string[] = [];
  for (const seg of `${a}/${b}`.split("/")) {
    if (seg === "." || seg === "") continue;
    if (seg === ".." && parts.length > 0 && parts[parts.length - 1] !== "..") parts.pop();
    else parts.push(seg);
  }
  return `${a.startsWith("/") ? "/" : ""}${parts.join("/")}`;
}

let ajvInstance: Ajv | undefined;
const validators = new Map<string, ValidateFunction>();

/**
 * The options of every validator, compiled here at run time or ahead of time into
 * validators.generated.ts (standalone.ts): strict; all errors; errors carry the schema and data
 * (ajvIssues reads `parentSchema`); defaults filled in for params.
 */
export const AJV_OPTIONS = {
  allErrors: true,
  strict: true,
  verbose: true,
  discriminator: true,
  allowUnionTypes: true,
  useDefaults: true,
} as const;

/** The shared ajv instance (see {@link AJV_OPTIONS}). */
export function ajv(): Ajv {
  ajvInstance ??= new Ajv({ ...AJV_OPTIONS });
  return ajvInstance;
}

let precompiled: Map<string, ValidateFunction> | undefined;

/**
 * A validator for a schema, cached by its canonical text: the ahead-of-time one from
 * validators.generated.ts when the schema is one of those (the config schema and every registered
 * method's and generator's params — the same code ajv generates here, so the same results, defaults
 * and errors), else compiled now. Why: compiling the config schema took ≈ 115 ms of every CLI
 * command's main thread (issue 14), most of a short sweep's set-up; a schema registered at run
 * time (a plugin method) or edited without regenerating still works, compiled as before.
 */
export function validatorFor(schema: object): ValidateFunction {
  const key = canonicalJson(schema);
  let v = validators.get(key);
  if (!v) {
    precompiled ??= new Map(PRECOMPILED_VALIDATORS as unknown as ReadonlyArray<readonly [string, ValidateFunction]>);
    v = precompiled.get(key) ?? ajv().compile(schema);
    validators.set(key, v);
  }
  return v;
}

/** The schema a sweep axis' values are checked against: the param's own schema without its default (a default is not a constraint). */
export function axisValueSchema(schema: ParamsSchema, param: string): object {
  const { default: _default, ...prop } = schema.properties[param];
  return prop;
}

const NAME_PATTERN = "^[a-z0-9][a-z0-9-]{0,63}$";

function pointerSegments(pointer: string): string[] {
  if (pointer === "") return [];
  return pointer
    .slice(1)
    .split("/")
    .map((s) => s.replace(/~1/g, "/").replace(/~0/g, "~"));
}

/** Turns ajv errors into readable issues (path of the bad key, expected, actual). */
export function ajvIssues(errors: readonly ErrorObject[], prefix: readonly (string | number)[] = []): ConfigIssue[] {
  const issues: ConfigIssue[] = [];
  const seen = new Set<string>();
  const add = (segments: (string | number)[], expected: string, actual: string) => {
    const issue = { path: formatPath([...prefix, ...segments]), expected, actual };
    const k = `${issue.path}|${issue.expected}|${issue.actual}`;
    if (!seen.has(k)) {
      seen.add(k);
      issues.push(issue);
    }
  };
  // Errors inside anyOf branches only say why each alternative failed; the anyOf error itself
  // (kept) names the alternatives, which is what a person needs.
  const kept = errors.filter((e) => !/\/anyOf\/\d+\//.test(e.schemaPath));
  for (const e of kept) {
    const seg = pointerSegments(e.instancePath);
    const p = e.params as Record<string, unknown>;
    switch (e.keyword) {
      case "additionalProperties": {
        const props = Object.keys(((e.parentSchema as { properties?: object })?.properties ?? {}) as object);
        add([...seg, String(p.additionalProperty)], props.length ? `one of the keys ${props.join(", ")}` : "no such key", "an unknown key");
        break;
      }
      case "required":
        add([...seg, String(p.missingProperty)], "a value (this key is required)", "nothing");
        break;
      case "type":
        add(seg, String(p.type).replace(/,/g, " or "), describe(e.data));
        break;
      case "enum":
        add(seg, `one of ${(p.allowedValues as unknown[]).map((v) => JSON.stringify(v)).join(", ")}`, describe(e.data));
        break;
      case "const":
        add(seg, JSON.stringify(p.allowedValue), describe(e.data));
        break;
      case "pattern":
        add(
          seg,
          p.pattern === NAME_PATTERN ? "a kebab-case name (a-z, 0-9, -; at most 64 characters)" : `a string matching ${p.pattern}`,
          describe(e.data),
        );
        break;
      case "propertyNames":
        add(
          [...seg, String(p.propertyName)],
          "a sweep axis name `problem.<param>` or `<method label>.<param>`",
          `the axis name ${JSON.stringify(p.propertyName)}`,
        );
        break;
      case "minimum":
      case "maximum":
      case "exclusiveMinimum":
      case "exclusiveMaximum":
        add(seg, `a number ${p.comparison} ${p.limit}`, describe(e.data));
        break;
      case "minItems":
      case "maxItems":
        add(seg, `${e.keyword === "minItems" ? "at least" : "at most"} ${p.limit} item(s)`, describe(e.data));
        break;
      case "minLength":
      case "maxLength":
        // Counted as ajv counts (code points: an astral character is one, not two UTF-16 units).
        add(
          seg,
          `${e.keyword === "minLength" ? "at least" : "at most"} ${p.limit} character(s)`,
          `${[...String(e.data)].length} characters`,
        );
        break;
      case "maxProperties":
        add(seg, `at most ${p.limit} keys`, `${Object.keys(e.data as object).length} keys`);
        break;
      case "uniqueItems":
        add(seg, "no repeated items", `items ${p.j} and ${p.i} equal`);
        break;
      case "anyOf":
        if (seg[0] === "report") {
          add(seg, "a column name or a list of column names (e.g. method_label or [method_label, problem_n])", describe(e.data));
          break;
        }
        add(
          seg,
          'a list of values, a range or expression string (e.g. "2^k for k in 6..9"), or {from, to, step | count}',
          describe(e.data),
        );
        break;
      case "discriminator":
        add([...seg, "kind"], 'one of "softmax", "dot"', describe((e.data as Record<string, unknown>)?.kind));
        break;
      default:
        add(seg, e.message ?? e.keyword, describe(e.data));
    }
  }
  return issues;
}

/** Validates a parsed config object; returns it typed, or throws ConfigError listing every issue. */
export function validateConfigObject(raw: unknown, source = "<inline>"): ExperimentConfig {
  const validate = validatorFor(CONFIG_SCHEMA);
  // Validate a structured clone: ajv's useDefaults must never write into the caller's object.
  const copy = raw === undefined ? undefined : structuredClone(raw);
  if (!validate(copy)) throw new ConfigError(source, ajvIssues(validate.errors ?? []));
  return copy as ExperimentConfig;
}

/** One problem of a config, as written: `problem:` (label = generator, not named) or a `problems:` entry. */
export interface ConfigProblem {
  /** The `problem` column of results.csv: the entry's label, or the generator of a single `problem:`. */
  readonly label: string;
  /** Whether it came from `problems:` (its sweep axes may be addressed as `<label>.<param>`). */
  readonly named: boolean;
  /** Config path of the entry, e.g. `problem` or `problems[1]`. */
  readonly path: string;
  readonly problem: ProblemConfig;
}

/** The problems of a config in order: the single `problem:`, or the entries of `problems:`. */
export function configProblems(config: Pick<ExperimentConfig, "problem" | "problems">): ConfigProblem[] {
  if (config.problems) return config.problems.map(({ label, ...problem }, i) => ({ label, named: true, path: `problems[${i}]`, problem }));
  return config.problem ? [{ label: config.problem.generator, named: false, path: "problem", problem: config.problem }] : [];
}

/** The sweep targets of an axis name `<target>.<param>`. */
function axisParts(axis: string): { target: string; param: string } {
  const dot = axis.indexOf(".");
  return { target: axis.slice(0, dot), param: axis.slice(dot + 1) };
}

/**
 * Which problems a problem-side sweep axis applies to: `problem.<param>` to every problem whose
 * generator has the param, `<label>.<param>` to that named problem; [] for a method axis.
 */
export function axisProblems(config: ExperimentConfig, axis: string): number[] {
  const { target, param } = axisParts(axis);
  const problems = configProblems(config);
  if (target === "problem")
    return problems.flatMap((p, i) => (Object.hasOwn(getProblem(p.problem.generator).paramsSchema.properties, param) ? [i] : []));
  const i = problems.findIndex((p) => p.named && p.label === target);
  return i < 0 ? [] : [i];
}

/**
 * The checks beyond the schema. Returns the issues (empty when the config is sound).
 */
export function semanticIssues(config: ExperimentConfig): ConfigIssue[] {
  const issues: ConfigIssue[] = [];
  if ((config.problem === undefined) === (config.problems === undefined)) {
    issues.push({
      path: config.problem ? "problems" : "problem",
      expected: "exactly one of `problem:` (one problem) and `problems:` (a list of labelled problems)",
      actual: config.problem ? "both" : "neither",
    });
    return issues;
  }
  const problems = configProblems(config);
  const problemNames = listProblems().map((p) => p.name);
  const problemLabels = new Map<string, number>();
  problems.forEach((p, i) => {
    if (!problemNames.includes(p.problem.generator)) {
      issues.push({
        path: `${p.path}.generator`,
        expected: `one of ${problemNames.join(", ")}`,
        actual: JSON.stringify(p.problem.generator),
      });
    }
    if (!p.named) return;
    if (p.label === "problem") issues.push({ path: `${p.path}.label`, expected: 'a label other than "problem"', actual: '"problem"' });
    const prev = problemLabels.get(p.label);
    if (prev !== undefined) {
      issues.push({
        path: `${p.path}.label`,
        expected: `a label unique among problems (problems[${prev}] is already "${p.label}")`,
        actual: JSON.stringify(p.label),
      });
    } else problemLabels.set(p.label, i);
  });
  const methodNames = listMethods().map((m) => m.name);
  const labels = new Map<string, number>();
  config.methods.forEach((m, i) => {
    if (!methodNames.includes(m.method)) {
      issues.push({ path: `methods[${i}].method`, expected: `one of ${methodNames.join(", ")}`, actual: JSON.stringify(m.method) });
    }
    const label = m.label ?? m.method;
    if (label === "problem") issues.push({ path: `methods[${i}].label`, expected: 'a label other than "problem"', actual: '"problem"' });
    const prev = labels.get(label);
    if (prev !== undefined) {
      issues.push({
        path: `methods[${i}].label`,
        expected: `a label unique among methods (methods[${prev}] is already "${label}"; add \`label:\`)`,
        actual: JSON.stringify(label),
      });
    } else labels.set(label, i);
    // Sweep axes are `<label>.<param>` for problems and methods alike, so one label names one thing.
    if (problemLabels.has(label)) {
      issues.push({
        path: `methods[${i}].label`,
        expected: `a label other than every problem label (problems[${problemLabels.get(label)}] is "${label}"; add \`label:\`)`,
        actual: JSON.stringify(label),
      });
    }
    (m.problems ?? []).forEach((want, j) => {
      if (!problems.some((p) => p.label === want)) {
        issues.push({
          path: `methods[${i}].problems[${j}]`,
          expected: `a problem label (${problems.map((p) => JSON.stringify(p.label)).join(", ")})`,
          actual: JSON.stringify(want),
        });
      }
    });
  });
  if (issues.length > 0) return issues;
  const sweptParam = new Map<string, string>();
  for (const [axis] of Object.entries(config.sweep ?? {})) {
    const { target, param } = axisParts(axis);
    const path = formatPath(["sweep", axis]);
    const methodIndex = config.methods.findIndex((m) => (m.label ?? m.method) === target);
    if (methodIndex >= 0) {
      const allowed = Object.keys(getMethod(config.methods[methodIndex].method).paramsSchema.properties);
      if (!allowed.includes(param)) {
        issues.push({
          path,
          expected: `a parameter of ${target}: ${allowed.length ? allowed.join(", ") : "(it has none)"}`,
          actual: JSON.stringify(param),
        });
        continue;
      }
      if (config.methods[methodIndex].params && Object.hasOwn(config.methods[methodIndex].params!, param)) {
        issues.push({ path, expected: `${param} given once (either in methods[${methodIndex}].params or in the sweep)`, actual: "both" });
      }
      continue;
    }
    const named = target !== "problem" && problemLabels.has(target);
    if (target !== "problem" && !named) {
      issues.push({
        path,
        expected: `an axis on "problem"${problemLabels.size ? `, a problem label (${[...problemLabels.keys()].join(", ")})` : ""} or a method label (${[...labels.keys()].join(", ")})`,
        actual: JSON.stringify(target),
      });
      continue;
    }
    const targets = axisProblems(config, axis);
    if (targets.length === 0) {
      const gens = [...new Set(problems.map((p) => p.problem.generator))];
      const allowed = [...new Set(gens.flatMap((g) => Object.keys(getProblem(g).paramsSchema.properties)))];
      issues.push({
        path,
        expected: `a parameter of ${named ? target : config.problems ? `problem (${gens.join(" or ")})` : "problem"}: ${allowed.length ? allowed.join(", ") : "(it has none)"}`,
        actual: JSON.stringify(param),
      });
      continue;
    }
    if (named && !Object.hasOwn(getProblem(problems[targets[0]].problem.generator).paramsSchema.properties, param)) {
      const allowed = Object.keys(getProblem(problems[targets[0]].problem.generator).paramsSchema.properties);
      issues.push({
        path,
        expected: `a parameter of ${target}: ${allowed.length ? allowed.join(", ") : "(it has none)"}`,
        actual: JSON.stringify(param),
      });
      continue;
    }
    for (const i of targets) {
      const p = problems[i];
      const fixed = p.problem.params;
      if (fixed && Object.hasOwn(fixed, param)) {
        issues.push({ path, expected: `${param} given once (either in ${p.path}.params or in the sweep)`, actual: "both" });
      }
      const other = sweptParam.get(`${i}.${param}`);
      if (other !== undefined) {
        issues.push({
          path,
          expected: `${p.label}'s ${param} swept by one axis (${formatPath(["sweep", other])} already sweeps it)`,
          actual: "two axes",
        });
      } else sweptParam.set(`${i}.${param}`, axis);
    }
  }
  (config.report?.figures ?? []).forEach((fig, f) => {
    (fig.references ?? []).forEach((ref, r) => {
      const path = `report.figures[${f}].references[${r}]`;
      const r2 = ref as { y?: string; rate?: number; methods?: string[]; anchor?: string };
      if ((r2.y === undefined) === (r2.rate === undefined))
        issues.push({
          path,
          expected: "exactly one of y (a column) and rate (an exponent)",
          actual: r2.y === undefined ? "neither" : "both",
        });
      else if (r2.y !== undefined && (r2.methods !== undefined || r2.anchor !== undefined))
        issues.push({ path, expected: "methods and anchor only with rate", actual: "a column reference with them" });
      (r2.methods ?? []).forEach((m, i) => {
        if (!labels.has(m))
          issues.push({
            path: `${path}.methods[${i}]`,
            expected: `a method label (${[...labels.keys()].join(", ")})`,
            actual: JSON.stringify(m),
          });
      });
    });
  });
  for (const p of problems) {
    const generator = getProblem(p.problem.generator);
    if (!generator.producesTensors && p.problem.kernel) {
      issues.push({ path: `${p.path}.kernel`, expected: "no kernel (this generator produces no tensors)", actual: "a kernel" });
    }
  }
  return issues;
}

function kernelSpec(problem: ProblemConfig, path: string): KernelSpec {
  const k = problem.kernel;
  if (!k || k.kind === "softmax") return k?.scale === undefined ? { kind: "softmax" } : { kind: "softmax", scale: k.scale };
  const expression = compileKernelFormula(k.formula, `${path}.kernel.formula`);
  return { kind: "dot", formula: k.formula, expression, ...(k.scale === undefined ? {} : { scale: k.scale }) };
}

/**
 * Config keys that only change how results are presented (report text, figures, tables), never
 * what a task computes: they are left out of the config's identity hash.
 */
export const PRESENTATION_KEYS = ["description", "report"] as const;

/** The config without its presentation keys: what the results depend on. */
export function identityConfig(config: ExperimentConfig): Omit<ExperimentConfig, (typeof PRESENTATION_KEYS)[number]> {
  const { description: _d, report: _r, ...rest } = config;
  return rest;
}

/**
 * Validates a parsed config completely (schema, semantics, kernel formula, data files).
 * @param baseDir folder for relative data paths.
 * @throws ConfigError listing every issue.
 * @example
 * ```ts
 * import { expandPlan, loadConfigObject, planTasks } from "@randattn/experiments";
 *
 * const loaded = loadConfigObject(
 *   {
 *     experiment: "tiny",
 *     seed: 1,
 *     trials: 2,
 *     problem: { generator: "gaussian", params: { n: 64, d: 8 } },
 *     methods: [{ method: "exact" }, { method: "random-features", params: { features: "positive" } }],
 *     sweep: { "random-features.numFrequencies": [8, 16, 32] },
 *   },
 *   process.cwd(),
 * );
 * const plan = expandPlan(loaded);
 * console.log(plan.cells.length, planTasks(plan).length); // 4 cells, 8 tasks
 * ```
 */
export function loadConfigObject(raw: unknown, baseDir: string, source = "<inline>", overrides: readonly string[] = []): LoadedConfig {
  const config = validateConfigObject(raw, source);
  const issues = semanticIssues(config);
  if (issues.length > 0) throw new ConfigError(source, issues);
  const problems: LoadedProblem[] = configProblems(config).map((p) => {
    let kernel: KernelSpec;
    try {
      kernel = kernelSpec(p.problem, p.path);
    } catch (e) {
      const err = e as { argument?: string; expected?: string; actual?: string; message: string };
      throw new ConfigError(source, [
        {
          path: err.argument ?? `${p.path}.kernel.formula`,
          expected: err.expected ?? "a valid formula",
          actual: err.actual ?? err.message,
        },
      ]);
    }
    const m = p.problem.mask;
    const mask: MaskSpec | null = m ? { kind: "causal", ...(m.offset === undefined ? {} : { offset: m.offset }) } : null;
    return { ...p, kernel, mask };
  });
  // Data files are part of the identity: changed data must not resume or merge with old results.
  const dataFiles: Record<string, string> = {};
  const hashAll = (paths: Iterable<string>, path: string, expected: string) => {
    for (const file of [...paths].sort()) {
      if (Object.hasOwn(dataFiles, file)) continue;
      try {
        dataFiles[file] = fileSha256(resolveDataPath(file, baseDir));
      } catch (e) {
        throw new ConfigError(source, [
          { path, expected, actual: `${file} (${(e as NodeJS.ErrnoException).code ?? (e as Error).message})` },
        ]);
      }
    }
  };
  problems.forEach((p, i) => {
    const axes = Object.entries(config.sweep ?? {}).filter(([k]) => axisProblems(config, k).includes(i));
    if (p.problem.generator === "npy") {
      const values = [p.problem.params ?? {}, ...axes.map(([, v]) => v)];
      const paths = new Set<string>();
      for (const v of values)
        for (const x of Object.values(Array.isArray(v) ? v : typeof v === "object" ? v : {}))
          if (typeof x === "string" && x.endsWith(".npy")) paths.add(x);
      hashAll(paths, p.named ? `${p.path}.params` : "problem.params", "readable .npy files");
    } else if (CHECKPOINT_GENERATORS.has(p.problem.generator)) {
      // Every (checkpoint, text) a cell may read: the fixed value, or each listed sweep value.
      const valuesOf = (param: string, fallback: string[]): string[] => {
        const fixed = p.problem.params?.[param];
        if (typeof fixed === "string") return [fixed];
        const axis = axes.find(([k]) => axisParts(k).param === param)?.[1];
        return Array.isArray(axis) ? axis.filter((v): v is string => typeof v === "string") : fallback;
      };
      const paths = new Set<string>();
      for (const checkpoint of valuesOf("checkpoint", []))
        for (const text of valuesOf("text", [""])) for (const f of checkpointDataPaths(checkpoint, text)) paths.add(f);
      hashAll(
        paths,
        p.named ? `${p.path}.params.checkpoint` : "problem.params.checkpoint",
        "a readable checkpoint folder (config.json, model.safetensors, tokenizer.json) and held-out text",
      );
    }
  });
  const canonical = canonicalJson({ config, dataFiles });
  const identity = canonicalJson({ config: identityConfig(config), dataFiles });
  return {
    config,
    canonical,
    identity,
    hash: sha256(identity),
    dataFiles,
    overrides,
    baseDir,
    source,
    kernel: problems[0].kernel,
    mask: problems[0].mask,
    problems,
    metrics: config.metrics ?? [...METRIC_NAMES],
  };
}

/**
 * Reads, parses and validates a config file (`.yaml`, `.yml` or `.json`).
 * @throws FormatError (unreadable / unparseable) or ConfigError (invalid), before anything runs.
 */
export function loadConfigFile(path: string, overrides: readonly string[] = []): LoadedConfig {
  const { readFileSync, statSync } = nodeFs("config");
  const { dirname, extname, resolve } = nodePath("config");
  const abs = resolve(path);
  const ext = extname(abs).toLowerCase();
  if (![".yaml", ".yml", ".json"].includes(ext)) throw new FormatError("config", "a .yaml, .yml or .json file", path);
  let size: number;
  try {
    size = statSync(abs).size;
  } catch (e) {
    throw new FormatError("config", "an existing config file", `${path} (${(e as NodeJS.ErrnoException).code})`);
  }
  if (size > MAX_CONFIG_BYTES) throw new FormatError(path, `a config of at most ${MAX_CONFIG_BYTES} bytes`, `${size} bytes`);
  const text = readFileSync(abs, "utf8");
  const raw = applyOverrides(parseConfigText(text, ext === ".json" ? "json" : "yaml", path), overrides, path);
  return loadConfigObject(raw, dirname(abs), path, overrides);
}
