/**
 * The `randattn` command's program: every subcommand, its options and how errors map to exit codes.
 * The executable is ../cli.ts, which loads this module (or the one-file bundle of it) and runs
 * {@link runCli}; tests and tools build the program with {@link buildProgram}.
 *
 * Exit codes: 0 success · 1 some cells failed · 2 invalid config or arguments (unknown option,
 * missing argument, bad override, unknown experiment) · 3 refused (folder locked, results of another
 * config, unfinished run) · 4 I/O error · 130 interrupted.
 */
import { existsSync, readFileSync } from "node:fs";
import { basename, dirname, join, relative, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { RandAttnError } from "@randattn/core";
import { Command, type CommanderError, InvalidArgumentError } from "commander";
import { ConfigError } from "../config/errors.js";
import { loadConfigFile } from "../config/load.js";
import { DEFAULT_MAX_CELLS, expandPlan, planTasks } from "../plan/expand.js";
import { parseShard } from "../plan/shard.js";
import { listMethods } from "../registry/methods.js";
import { listProblems } from "../registry/problems.js";
import { LockError } from "../run/lock.js";
import { mergeShards } from "../run/merge.js";
import { WorkerPool, defaultWorkerCount } from "../run/pool.js";
import { estimatePlan } from "../run/plan-report.js";
import { regenerateOutputs } from "../run/regenerate.js";
import { reproduceAll } from "../run/reproduce.js";
import { RunRefusedError, runPlan } from "../run/runner.js";
import { addModelCommand } from "./model.js";

/** Exit codes of the CLI. */
export const EXIT = { ok: 0, cellsFailed: 1, invalid: 2, refused: 3, io: 4, interrupted: 130 } as const;

const err = (line: string) => process.stderr.write(`${line}\n`);

/** This package's folder (dist/cli/../.. or src/cli/../..), found from this file, whatever the working directory. */
const PACKAGE_DIR = resolve(dirname(fileURLToPath(import.meta.url)), "..", "..");
/** Shipped configs. */
export const SHIPPED_CONFIGS = join(PACKAGE_DIR, "configs");
/** Committed results of a workspace checkout (packages/experiments/../../results), if there is one. */
const WORKSPACE_RESULTS = resolve(PACKAGE_DIR, "..", "..", "results");
/**
 * Default results root of ad-hoc runs: a git-ignored scratch folder, so running a config never
 * rewrites committed results (those are written only with an explicit `--out results` or
 * `reproduce --update`).
 */
export const SCRATCH_OUT = join(".randattn", "results");

/**
 * The CLI as the user can type it, for suggestions in messages: `pnpm exec randattn` or
 * `npx randattn` when run through a package manager, `randattn` for an installed bin, else
 * `node <path to cli.js>` as it was invoked.
 */
export function commandName(env: NodeJS.ProcessEnv = process.env, argv1: string | undefined = process.argv[1]): string {
  const agent = env.npm_config_user_agent ?? "";
  if (agent.startsWith("pnpm")) return "pnpm exec randattn";
  if (agent.startsWith("npm") || agent.startsWith("yarn")) return "npx randattn";
  if (argv1 && basename(argv1) === "randattn") return "randattn";
  if (argv1) {
    const rel = relative(process.cwd(), argv1);
    return `node ${rel.startsWith("..") || rel === "" ? argv1 : rel}`;
  }
  return "randattn";
}

function packageVersion(): string {
  try {
    return (JSON.parse(readFileSync(join(PACKAGE_DIR, "package.json"), "utf8")) as { version: string }).version;
  } catch {
    return "unknown";
  }
}

function intOption(name: string, min: number) {
  return (value: string) => {
    if (!/^\d+$/.test(value) || Number(value) < min) throw new InvalidArgumentError(`${name} must be an integer ≥ ${min}`);
    return Number(value);
  };
}

function shardOption(value: string) {
  try {
    return parseShard(value);
  } catch (e) {
    throw new InvalidArgumentError((e as Error).message);
  }
}

/** Maps an error to a message and exit code. */
function fail(e: unknown): never {
  if (e instanceof ConfigError) {
    err(e.message);
    process.exit(EXIT.invalid);
  }
  if (e instanceof LockError || e instanceof RunRefusedError) {
    err(`refused: ${e.message}`);
    process.exit(EXIT.refused);
  }
  if (e instanceof RandAttnError) {
    err(`error: ${e.message}`);
    process.exit(EXIT.invalid);
  }
  err(`error: ${(e as Error)?.stack ?? String(e)}`);
  process.exit(EXIT.io);
}

interface RunFlags {
  workers?: number;
  shard?: ReturnType<typeof parseShard>;
  out: string;
  maxCells: number;
  failFast?: boolean;
  restart?: boolean;
  report: boolean;
  progress: "auto" | "bar" | "none";
  progressInterval: number;
  dryRun?: boolean;
}

function loadPlan(config: string, overrides: readonly string[], maxCells: number) {
  return expandPlan(loadConfigFile(config, overrides), { maxCells });
}

function printPlan(plan: ReturnType<typeof loadPlan>, out: string, workers: number, shard: RunFlags["shard"] | null): void {
  const estimate = estimatePlan(plan, { outRoot: out, workers, shard: shard ?? null });
  process.stdout.write(`${estimate.lines.join("\n")}\n`);
}

async function runCommand(config: string, overrides: string[], flags: RunFlags, mode: "run" | "resume"): Promise<void> {
  try {
    const workers = flags.workers ?? defaultWorkerCount();
    // The workers start loading now, while this thread reads and validates the config and the
    // journal (issue 14: on the quickstart their ≈ 150 ms start-up used to follow ≈ 200 ms of it).
    // runPlan destroys the pool; a dry run or an invalid config exits first.
    const pool = workers > 0 && !flags.dryRun ? new WorkerPool(workers).start() : undefined;
    const plan = loadPlan(config, overrides, flags.maxCells);
    if (flags.dryRun) {
      printPlan(plan, flags.out, workers, flags.shard ?? null);
      process.exit(EXIT.ok);
    }
    const result = await runPlan(plan, {
      pool,
      outRoot: flags.out,
      workers,
      shard: flags.shard ?? null,
      failFast: flags.failFast ?? false,
      mode,
      restart: flags.restart ?? false,
      progress: flags.progress,
      progressInterval: flags.progressInterval,
      report: flags.report,
      command: commandName(),
      summaryTable: !flags.shard,
    });
    if (result.failures.length > 0) {
      err(`${result.failures.length} failed task(s):`);
      for (const f of result.failures.slice(0, 20)) err(`  ${f.cell}: ${f.error}  [task ${f.key}]`);
      if (result.failures.length > 20) err(`  … and ${result.failures.length - 20} more (see results.csv, column error)`);
    }
    if (result.interrupted) process.exit(EXIT.interrupted);
    if (result.ioError) process.exit(EXIT.io);
    process.exit(result.failures.length > 0 || !result.complete ? EXIT.cellsFailed : EXIT.ok);
  } catch (e) {
    fail(e);
  }
}

const OVERRIDES_HELP = "key=value overrides, validated like the file (trials=10 problem.params.n=1024 'sweep.rf.numFeatures=[64,128]')";

function addRunOptions(cmd: Command, restart: boolean): Command {
  cmd
    .option("-w, --workers <n>", "worker threads (0 = run in this thread)", intOption("--workers", 0))
    .option("--shard <i/n>", "run only shard i of n (0-based; task t belongs to shard t mod n)", shardOption)
    .option("-o, --out <dir>", "results root (committed results: --out results)", SCRATCH_OUT)
    .option("--max-cells <n>", "largest grid accepted", intOption("--max-cells", 1), DEFAULT_MAX_CELLS)
    .option("--fail-fast", "stop at the first failed task")
    .option("--no-report", "skip figures, tables and report.html")
    .option("--progress <mode>", "auto | bar | none", "auto")
    .option("--progress-interval <s>", "seconds between progress lines when not on a terminal", intOption("--progress-interval", 1), 30)
    .option("--dry-run", "print the plan (cells, tasks, reused, estimated flops and time) and run nothing");
  if (restart) cmd.option("--restart", "discard previous results of this experiment folder first");
  return cmd;
}

/** Where `report` looks by default: the scratch folder if it holds the experiment, else the committed results. */
function defaultReportRoot(experiment: string): string {
  if (existsSync(join(SCRATCH_OUT, experiment))) return SCRATCH_OUT;
  if (existsSync(join("results", experiment))) return "results";
  return existsSync(join(WORKSPACE_RESULTS, experiment)) ? WORKSPACE_RESULTS : SCRATCH_OUT;
}

/** Builds the commander program (exported for tests of --help). */
export function buildProgram(): Command {
  const program = new Command("randattn")
    .description("Seeded sweeps comparing exact attention with randomized sketches: CSV results, figures, reports.")
    .version(packageVersion(), "-V, --version", "print the version of @randattn/experiments")
    .showHelpAfterError()
    // Bad arguments exit 2 (commander's default is 1, which this CLI reserves for failed cells).
    // Set before the subcommands so each inherits it.
    .exitOverride((e: CommanderError) => {
      process.exit(e.exitCode === 0 ? EXIT.ok : EXIT.invalid);
    });

  addRunOptions(
    program
      .command("run")
      .argument("<config>", "experiment config (.yaml, .yml or .json)")
      .argument("[overrides...]", OVERRIDES_HELP)
      .description(
        "run a sweep into <out>/<experiment>/; reuses finished tasks when the config only grew (more trials, sweep values or methods); refuses a folder holding an unfinished or different run",
      ),
    true,
  ).action((config: string, overrides: string[], flags: RunFlags) => runCommand(config, overrides, flags, "run"));

  addRunOptions(
    program
      .command("resume")
      .argument("<config>", "the same config as the interrupted run")
      .argument("[overrides...]", "the same overrides as the interrupted run")
      .description("continue an interrupted sweep (never repeats a finished task; retries failed ones; refuses if the config changed)"),
    false,
  ).action((config: string, overrides: string[], flags: RunFlags) => runCommand(config, overrides, flags, "resume"));

  program
    .command("plan")
    .argument("<config>", "experiment config")
    .argument("[overrides...]", OVERRIDES_HELP)
    .description("print what `run` would do: cells, task count, tasks reused from <out>, estimated flops and time (runs nothing)")
    .option("-o, --out <dir>", "results root whose finished tasks would be reused", SCRATCH_OUT)
    .option("-w, --workers <n>", "workers the time estimate assumes", intOption("--workers", 0))
    .option("--shard <i/n>", "only shard i of n", shardOption)
    .option("--max-cells <n>", "largest grid accepted", intOption("--max-cells", 1), DEFAULT_MAX_CELLS)
    .action(
      (config: string, overrides: string[], flags: { out: string; workers?: number; shard?: RunFlags["shard"]; maxCells: number }) => {
        try {
          printPlan(loadPlan(config, overrides, flags.maxCells), flags.out, flags.workers ?? defaultWorkerCount(), flags.shard ?? null);
          process.exit(EXIT.ok);
        } catch (e) {
          fail(e);
        }
      },
    );

  program
    .command("merge")
    .argument("<config>", "the config the shards ran")
    .argument("[overrides...]", "the overrides the shards ran with")
    .description("combine shard folders (<out>/<experiment>/shards/*) into <out>/<experiment>/, checking they come from this config")
    .option("-o, --out <dir>", "results root", SCRATCH_OUT)
    .option("--from <dirs...>", "shard folders (default: every folder under <out>/<experiment>/shards/)")
    .option("--max-cells <n>", "largest grid accepted", intOption("--max-cells", 1), DEFAULT_MAX_CELLS)
    .option("--no-report", "skip figures, tables and report.html")
    .action((config: string, overrides: string[], flags: { out: string; from?: string[]; maxCells: number; report: boolean }) => {
      try {
        const plan = loadPlan(config, overrides, flags.maxCells);
        const m = mergeShards(plan, { outRoot: flags.out, from: flags.from, report: flags.report });
        err(`merged ${m.task_count} tasks → ${join(flags.out, m.experiment)} (results.csv sha256 ${m.results_sha256})`);
        process.exit(m.status.failed > 0 ? EXIT.cellsFailed : EXIT.ok);
      } catch (e) {
        fail(e);
      }
    });

  program
    .command("validate")
    .argument("<configs...>", "config files")
    .description("check configs (schema, methods, sweep values, grid cap) without running anything")
    .option("--max-cells <n>", "largest grid accepted", intOption("--max-cells", 1), DEFAULT_MAX_CELLS)
    .action((configs: string[], flags: { maxCells: number }) => {
      let bad = 0;
      for (const c of configs) {
        try {
          const plan = loadPlan(c, [], flags.maxCells);
          process.stdout.write(
            `ok ${c}: experiment ${plan.loaded.config.experiment}, ${plan.cells.length} cells × ${plan.trials} trials = ${planTasks(plan).length} tasks, config sha256 ${plan.loaded.hash}\n`,
          );
        } catch (e) {
          bad++;
          err(e instanceof Error ? e.message : String(e));
        }
      }
      process.exit(bad > 0 ? EXIT.invalid : EXIT.ok);
    });

  program
    .command("report")
    .alias("plot")
    .argument("<config>", "the config of a finished run (description, figures and tables may have changed)")
    .argument("[overrides...]", "the overrides the run used")
    .description(
      "redraw results.csv, summary.csv, figures, tables and report.html from the journal, or from the committed results.csv on a fresh clone (reruns nothing)",
    )
    .option("-o, --out <dir>", "results root (default: the scratch folder if it holds the experiment, else results/)")
    .option("--max-cells <n>", "largest grid accepted", intOption("--max-cells", 1), DEFAULT_MAX_CELLS)
    .action((config: string, overrides: string[], flags: { out?: string; maxCells: number }) => {
      try {
        const plan = loadPlan(config, overrides, flags.maxCells);
        const out = flags.out ?? defaultReportRoot(plan.loaded.config.experiment);
        const m = regenerateOutputs(plan, out, commandName());
        err(`report written to ${join(out, m.experiment, "report.html")}`);
        process.exit(EXIT.ok);
      } catch (e) {
        fail(e);
      }
    });

  program
    .command("reproduce")
    .description("rerun every shipped experiment and check each results.csv sha256 against its committed manifest")
    .option("--configs <dir>", "folder of configs", SHIPPED_CONFIGS)
    .option("--results <dir>", "folder of committed results (default: the workspace's results/, else ./results)")
    .option("-w, --workers <n>", "worker threads", intOption("--workers", 0))
    .option("--only <names...>", "only these experiments")
    .option("--update", "rerun each into <results>/<experiment>/ (replacing it) and write new manifests, instead of checking")
    .action(async (flags: { configs: string; results?: string; workers?: number; only?: string[]; update?: boolean }) => {
      try {
        const results = flags.results ?? (existsSync(WORKSPACE_RESULTS) ? WORKSPACE_RESULTS : "results");
        const verdicts = await reproduceAll({
          configsDir: flags.configs,
          resultsRoot: results,
          workers: flags.workers ?? defaultWorkerCount(),
          only: flags.only,
          update: flags.update ?? false,
        });
        const bad = verdicts.filter((v) => v.status !== "match" && v.status !== "updated");
        if (flags.update) err(`${verdicts.length - bad.length}/${verdicts.length} experiments written to ${results}`);
        else err(`${verdicts.length - bad.length}/${verdicts.length} experiments reproduced byte for byte`);
        process.exit(bad.length > 0 ? EXIT.cellsFailed : EXIT.ok);
      } catch (e) {
        fail(e);
      }
    });

  program
    .command("list")
    .argument("[what]", "methods | problems | all", "all")
    .description("list the registered methods and problem generators with their parameters")
    .option("--json", "machine-readable output")
    .action((what: string, flags: { json?: boolean }) => {
      if (!["methods", "problems", "all"].includes(what)) {
        err(`list: expected methods, problems or all, got ${JSON.stringify(what)}`);
        process.exit(EXIT.invalid);
      }
      const methods = what !== "problems" ? listMethods() : [];
      const problems = what !== "methods" ? listProblems() : [];
      if (flags.json) {
        const strip = (d: { name: string; description: string; paramsSchema: unknown }) => ({
          name: d.name,
          description: d.description,
          params: d.paramsSchema,
        });
        process.stdout.write(`${JSON.stringify({ methods: methods.map(strip), problems: problems.map(strip) }, null, 2)}\n`);
        return;
      }
      const params = (schema: { properties: Record<string, Record<string, unknown>> }) =>
        Object.entries(schema.properties)
          .map(([k, v]) => `${k}${v.default !== undefined ? `=${JSON.stringify(v.default)}` : ""}`)
          .join(", ");
      if (methods.length) {
        process.stdout.write("Methods:\n");
        for (const m of methods)
          process.stdout.write(
            `  ${m.name.padEnd(18)} ${m.description}\n  ${"".padEnd(18)} params: ${params(m.paramsSchema) || "(none)"}\n`,
          );
      }
      if (problems.length) {
        process.stdout.write("Problems:\n");
        for (const p of problems)
          process.stdout.write(
            `  ${p.name.padEnd(18)} ${p.description}\n  ${"".padEnd(18)} params: ${params(p.paramsSchema) || "(none)"}\n`,
          );
      }
    });
  addModelCommand(program);
  return program;
}

/** Runs the CLI on `argv` (`process.argv`: node, the script, then the arguments). */
export async function runCli(argv: readonly string[] = process.argv): Promise<void> {
  await buildProgram().parseAsync([...argv]);
}
