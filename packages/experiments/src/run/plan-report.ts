/**
 * `randattn plan` / `run --dry-run`: what a run would do, before it does it — the cells (method ×
 * swept values), the task count, how many tasks earlier runs in the output folder already finished
 * (reused), the estimated flops (from each method's closed-form cost where it has one, else the
 * flops an earlier run of the same cell recorded) and, once timings exist, the estimated time.
 */
import { existsSync } from "node:fs";
import { join } from "node:path";
import { formatDisplay } from "../base/format.js";
import type { JournalRecord } from "../base/records.js";
import { cellAxes, type Plan, planTasks } from "../plan/expand.js";
import { inputSeed } from "../plan/seeds.js";
import { type Shard, inShard } from "../plan/shard.js";
import { getMethod } from "../registry/methods.js";
import { getProblem } from "../registry/problems.js";
import type { ProblemInstance } from "../registry/types.js";
import { readCommittedResults } from "./committed.js";
import { JOURNAL_FILE, readJournal } from "./journal.js";
import { runDir } from "./runner.js";

/** The estimate of a plan. */
export interface PlanEstimate {
  readonly cells: number;
  readonly tasks: number;
  /** Tasks already recorded in the output folder (a run reuses them). */
  readonly reused: number;
  /** Estimated flops of the tasks to run (cells with a known cost only) and how many tasks lack one. */
  readonly flops: number;
  readonly tasksWithoutFlops: number;
  /** Estimated wall seconds on `workers` workers, or null without timings of every method. */
  readonly seconds: number | null;
  /** Human-readable lines. */
  readonly lines: readonly string[];
}

function existingRecords(dir: string): ReadonlyMap<string, JournalRecord> {
  const path = join(dir, JOURNAL_FILE);
  if (existsSync(path)) return readJournal(path).records;
  return readCommittedResults(dir)?.records ?? new Map();
}

/** Estimates a plan (see module doc). Generates each problem point's inputs once when a method has a cost formula. */
export function estimatePlan(plan: Plan, options: { outRoot: string; workers: number; shard?: Shard | null }): PlanEstimate {
  const shard = options.shard ?? null;
  const dir = runDir(plan, options.outRoot, shard);
  const records = existingRecords(dir);
  const tasks = planTasks(plan).filter((t) => inShard(t.index, shard));
  const pending = tasks.filter((t) => !records.has(t.key));
  // Flops per cell: recorded by an earlier run of the same cell (exact, it is deterministic), else the formula.
  const instances = new Map<string, ProblemInstance | null>();
  const instance = (cell: number): ProblemInstance | null => {
    const c = plan.cells[cell];
    const key = JSON.stringify([c.problem, c.problemIndex]);
    if (!instances.has(key)) {
      try {
        const gen = getProblem(c.problem.generator);
        const seed = inputSeed(plan.loaded.config.seed, gen.name, c.problem.params, gen.structuralParams, 0);
        instances.set(
          key,
          gen.generate(
            c.problem.params,
            {
              baseDir: plan.loaded.baseDir,
              wantWeights: false,
              kernel: plan.loaded.problems[c.problemIndex].kernel,
              mask: plan.loaded.problems[c.problemIndex].mask,
            },
            seed,
          ),
        );
      } catch {
        instances.set(key, null);
      }
    }
    return instances.get(key) ?? null;
  };
  const recordedFlops = new Map<number, number>();
  const timeByLabel = new Map<string, number[]>();
  for (const t of planTasks(plan)) {
    const r = records.get(t.key);
    if (r?.status !== "ok") continue;
    if (r.flops !== null) recordedFlops.set(t.cell, r.flops);
    const label = plan.cells[t.cell].method.label;
    if (r.session !== "committed" || r.wallMs > 0) {
      const list = timeByLabel.get(label) ?? [];
      list.push(r.wallMs + r.setupMs);
      timeByLabel.set(label, list);
    }
  }
  const cellFlops = (cell: number): number | null => {
    if (recordedFlops.has(cell)) return recordedFlops.get(cell)!;
    const c = plan.cells[cell];
    const def = getMethod(c.method.name);
    if (!def.estimateCost) return null;
    const inst = instance(cell);
    if (!inst) return null;
    try {
      return def.estimateCost(inst, c.method.params).flops;
    } catch {
      return null;
    }
  };
  const flopsOf = new Map<number, number | null>();
  let flops = 0;
  let without = 0;
  let ms = 0;
  let timed = true;
  for (const t of pending) {
    if (!flopsOf.has(t.cell)) flopsOf.set(t.cell, cellFlops(t.cell));
    const f = flopsOf.get(t.cell)!;
    if (f === null) without++;
    else flops += f;
    const times = timeByLabel.get(plan.cells[t.cell].method.label);
    if (times && times.length > 0) ms += times.reduce((a, b) => a + b, 0) / times.length;
    else timed = false;
  }
  const workers = Math.max(1, options.workers);
  const seconds = pending.length === 0 ? 0 : timed ? ms / 1000 / workers : null;

  const cfg = plan.loaded.config;
  const lines: string[] = [];
  lines.push(
    `${cfg.experiment} (${plan.loaded.source}), config sha256 ${plan.loaded.hash.slice(0, 12)}…${shard ? `, shard ${shard.index}/${shard.count}` : ""}`,
  );
  lines.push(
    `  ${plan.cells.length} cells × ${plan.trials} trial(s) = ${planTasks(plan).length} tasks${shard ? ` (${tasks.length} in this shard)` : ""}; ${tasks.length - pending.length} already in ${dir} (reused), ${pending.length} to run`,
  );
  lines.push("  cells:");
  const byLabel = new Map<string, number[]>();
  for (const c of plan.cells) byLabel.set(c.method.label, [...(byLabel.get(c.method.label) ?? []), c.index]);
  for (const [label, cells] of byLabel) {
    const axes = new Map<string, Set<string>>();
    for (const i of cells) for (const a of cellAxes(plan, i)) axes.set(a.axis, (axes.get(a.axis) ?? new Set()).add(String(a.value)));
    const swept = [...axes.entries()].map(
      ([k, v]) => `${k.startsWith(`${label}.`) ? k.slice(label.length + 1) : k} ∈ {${[...v].join(", ")}}`,
    );
    // Several problems: which ones this method runs on (its `problems:` filter, or all).
    if (plan.loaded.problems.length > 1) swept.unshift(`on ${[...new Set(cells.map((i) => plan.cells[i].problemLabel))].join(", ")}`);
    const fl = cells.map((i) => (flopsOf.has(i) ? flopsOf.get(i) : cellFlops(i)) ?? null);
    const known = fl.filter((x): x is number => x !== null);
    const flText =
      known.length === 0
        ? "flops/task ?"
        : `flops/task ${formatDisplay(Math.min(...known))}${known.length > 1 ? `–${formatDisplay(Math.max(...known))}` : ""}${known.length < fl.length ? " (some ?)" : ""}`;
    lines.push(
      `    ${label.padEnd(18)} ${String(cells.length).padStart(4)} cell(s)  ${swept.join("; ") || "(no swept values)"}  ${flText}`,
    );
  }
  lines.push(
    `  estimated flops to run: ${pending.length === 0 ? "0" : formatDisplay(flops)}${without > 0 ? ` + ${without} task(s) without a cost formula or earlier result (?)` : ""}`,
  );
  lines.push(
    `  estimated time: ${seconds === null ? "? (no timings yet for every method: run once, then plan again)" : `${seconds < 1 ? seconds.toFixed(2) : seconds.toFixed(0)} s on ${workers} worker(s), from earlier timings`}`,
  );
  return {
    cells: plan.cells.length,
    tasks: tasks.length,
    reused: tasks.length - pending.length,
    flops,
    tasksWithoutFlops: without,
    seconds,
    lines,
  };
}
