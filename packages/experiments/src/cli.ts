#!/usr/bin/env node
/**
 * `randattn` — run seeded attention-approximation sweeps from a config and get tidy CSV,
 * figures and a report. `randattn <command> --help` documents each command.
 *
 * Exit codes: 0 success · 1 some cells failed · 2 invalid config or arguments · 3 refused (folder
 * locked, results of another config, unfinished run) · 4 I/O error · 130 interrupted.
 */
import { Command, InvalidArgumentError } from "commander";
import { RandAttnError } from "@randattn/core";
import { ConfigError } from "./config/errors.js";
import { loadConfigFile } from "./config/load.js";
import { DEFAULT_MAX_CELLS, expandPlan, planTasks } from "./plan/expand.js";
import { parseShard } from "./plan/shard.js";
import { listMethods } from "./registry/methods.js";
import { listProblems } from "./registry/problems.js";
import { LockError } from "./run/lock.js";
import { mergeShards } from "./run/merge.js";
import { defaultWorkerCount } from "./run/pool.js";
import { regenerateOutputs } from "./run/regenerate.js";
import { reproduceAll } from "./run/reproduce.js";
import { RunRefusedError, runPlan } from "./run/runner.js";
import { addModelCommand } from "./cli/model.js";

/** Exit codes of the CLI. */
export const EXIT = { ok: 0, cellsFailed: 1, invalid: 2, refused: 3, io: 4, interrupted: 130 } as const;

const err = (line: string) => process.stderr.write(`${line}\n`);

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
    process.exit(e.name === "FormatError" ? EXIT.invalid : EXIT.invalid);
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
}

async function runCommand(config: string, flags: RunFlags, mode: "run" | "resume"): Promise<void> {
  try {
    const plan = expandPlan(loadConfigFile(config), { maxCells: flags.maxCells });
    const result = await runPlan(plan, {
      outRoot: flags.out,
      workers: flags.workers ?? defaultWorkerCount(),
      shard: flags.shard ?? null,
      failFast: flags.failFast ?? false,
      mode,
      restart: flags.restart ?? false,
      progress: flags.progress,
      report: flags.report,
    });
    if (result.failures.length > 0) {
      err(`${result.failures.length} failed task(s):`);
      for (const f of result.failures.slice(0, 20)) err(`  ${f.key} [${f.label}] ${f.error}`);
      if (result.failures.length > 20) err(`  … and ${result.failures.length - 20} more (see results.csv, column error)`);
    }
    if (result.interrupted) process.exit(EXIT.interrupted);
    if (result.ioError) process.exit(EXIT.io);
    process.exit(result.failures.length > 0 || !result.complete ? EXIT.cellsFailed : EXIT.ok);
  } catch (e) {
    fail(e);
  }
}

function addRunOptions(cmd: Command, restart: boolean): Command {
  cmd
    .option("-w, --workers <n>", "worker threads (0 = run in this thread)", intOption("--workers", 0))
    .option("--shard <i/n>", "run only shard i of n (0-based; task t belongs to shard t mod n)", shardOption)
    .option("-o, --out <dir>", "results root", "results")
    .option("--max-cells <n>", "largest grid accepted", intOption("--max-cells", 1), DEFAULT_MAX_CELLS)
    .option("--fail-fast", "stop at the first failed task")
    .option("--no-report", "skip figures, tables and report.html")
    .option("--progress <mode>", "auto | bar | none", "auto");
  if (restart) cmd.option("--restart", "discard previous results of this experiment folder first");
  return cmd;
}

/** Builds the commander program (exported for tests of --help). */
export function buildProgram(): Command {
  const program = new Command("randattn")
    .description("Seeded sweeps comparing exact attention with randomized sketches: CSV results, figures, reports.")
    .showHelpAfterError();

  addRunOptions(
    program
      .command("run")
      .argument("<config>", "experiment config (.yaml, .yml or .json)")
      .description("run a sweep into <out>/<experiment>/ (refuses a folder holding an unfinished or different run)"),
    true,
  ).action((config: string, flags: RunFlags) => runCommand(config, flags, "run"));

  addRunOptions(
    program
      .command("resume")
      .argument("<config>", "the same config as the interrupted run")
      .description("continue an interrupted sweep (never repeats a finished task; retries failed ones; refuses if the config changed)"),
    false,
  ).action((config: string, flags: RunFlags) => runCommand(config, flags, "resume"));

  program
    .command("merge")
    .argument("<config>", "the config the shards ran")
    .description("combine shard folders (<out>/<experiment>/shards/*) into <out>/<experiment>/, checking they come from this config")
    .option("-o, --out <dir>", "results root", "results")
    .option("--from <dirs...>", "shard folders (default: every folder under <out>/<experiment>/shards/)")
    .option("--max-cells <n>", "largest grid accepted", intOption("--max-cells", 1), DEFAULT_MAX_CELLS)
    .option("--no-report", "skip figures, tables and report.html")
    .action((config: string, flags: { out: string; from?: string[]; maxCells: number; report: boolean }) => {
      try {
        const plan = expandPlan(loadConfigFile(config), { maxCells: flags.maxCells });
        const m = mergeShards(plan, { outRoot: flags.out, from: flags.from, report: flags.report });
        err(`merged ${m.task_count} tasks → ${flags.out}/${m.experiment} (results.csv sha256 ${m.results_sha256})`);
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
          const plan = expandPlan(loadConfigFile(c), { maxCells: flags.maxCells });
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
    .argument("<config>", "the config of a finished run")
    .description("rewrite results.csv, summary.csv, figures, tables and report.html from the journal (reruns nothing)")
    .option("-o, --out <dir>", "results root", "results")
    .option("--max-cells <n>", "largest grid accepted", intOption("--max-cells", 1), DEFAULT_MAX_CELLS)
    .action((config: string, flags: { out: string; maxCells: number }) => {
      try {
        const m = regenerateOutputs(expandPlan(loadConfigFile(config), { maxCells: flags.maxCells }), flags.out);
        err(`report written to ${flags.out}/${m.experiment}/report.html`);
        process.exit(EXIT.ok);
      } catch (e) {
        fail(e);
      }
    });

  program
    .command("reproduce")
    .description("rerun every shipped experiment and check each results.csv sha256 against its committed manifest")
    .option("--configs <dir>", "folder of configs", new URL("../configs", import.meta.url).pathname)
    .option("--results <dir>", "folder of committed results", "results")
    .option("-w, --workers <n>", "worker threads", intOption("--workers", 0))
    .option("--only <names...>", "only these experiments")
    .action(async (flags: { configs: string; results: string; workers?: number; only?: string[] }) => {
      try {
        const verdicts = await reproduceAll({
          configsDir: flags.configs,
          resultsRoot: flags.results,
          workers: flags.workers ?? defaultWorkerCount(),
          only: flags.only,
        });
        const bad = verdicts.filter((v) => v.status !== "match");
        err(`${verdicts.length - bad.length}/${verdicts.length} experiments reproduced byte for byte`);
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

const isMain =
  process.argv[1] !== undefined && new URL(import.meta.url).pathname === (await import("node:fs")).realpathSync(process.argv[1]);
if (isMain) await buildProgram().parseAsync(process.argv);
