/**
 * `randattn plan` / `run --dry-run`: what a run would do, before it does it — the cells (method ×
 * swept values), the task count, how many tasks earlier runs in the output folder already finished
 * (reused), the estimated flops per cell and in total (every method's `estimateCost` on the
 * problem's sizes: the flops its run records, or a stated approximation for data-dependent costs)
 * and, once timings exist, the estimated time (each method's earlier ms per flop × the new flops).
 */
import { existsSync } from "node:fs";
import { join } from "node:path";
import { formatDisplay } from "../base/format.js";
import type { JournalRecord } from "../base/records.js";
import { cellAxes, cellDescription, type Plan, planTasks } from "../plan/expand.js";
import { inputSeed } from "../plan/seeds.js";
import { type Shard, inShard } from "../plan/shard.js";
import { getMethod } from "../registry/methods.js";
import { getProblem } from "../registry/problems.js";
import { type ProblemShape, shapeOf } from "../registry/shape.js";
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

/** Most cells listed one per line (larger plans list per method). */
const MAX_CELL_LINES = 60;

/**
 * Estimates a plan (see module doc). Each problem point's SIZES come from its generator's `shape`
 * (a checkpoint's config.json) or, for generators without one, from the instance drawn once.
 */
export function estimatePlan(plan: Plan, options: { outRoot: string; workers: number; shard?: Shard | null }): PlanEstimate {
  const shard = options.shard ?? null;
  const dir = runDir(plan, options.outRoot, shard);
  const records = existingRecords(dir);
  const tasks = planTasks(plan).filter((t) => inShard(t.index, shard));
  const pending = tasks.filter((t) => !records.has(t.key));
  const shapes = new Map<string, ProblemShape | null>();
  const shape = (cell: number): ProblemShape | null => {
    const c = plan.cells[cell];
    const key = JSON.stringify(c.problem);
    if (!shapes.has(key)) {
      try {
        const gen = getProblem(c.problem.generator);
        const context = { baseDir: plan.loaded.baseDir, wantWeights: false, kernel: plan.loaded.kernel, mask: plan.loaded.mask };
        if (gen.shape) shapes.set(key, gen.shape(c.problem.params, context));
        else {
          const seed = inputSeed(plan.loaded.config.seed, gen.name, c.problem.params, gen.structuralParams, 0);
          shapes.set(key, shapeOf(gen.generate(c.problem.params, context, seed)));
        }
      } catch {
        shapes.set(key, null);
      }
    }
    return shapes.get(key) ?? null;
  };
  const recordedFlops = new Map<number, number>();
  // Per method label: wall ms and flops of the timed tasks (ms per flop scales a timing to a new size).
  const timing = new Map<string, { ms: number; flops: number; tasks: number }>();
  for (const t of planTasks(plan)) {
    const r = records.get(t.key);
    if (r?.status !== "ok") continue;
    if (r.flops !== null) recordedFlops.set(t.cell, r.flops);
    const label = plan.cells[t.cell].method.label;
    if (r.session !== "committed" || r.wallMs > 0) {
      const x = timing.get(label) ?? { ms: 0, flops: 0, tasks: 0 };
      x.ms += r.wallMs + r.setupMs;
      x.flops += r.flops ?? 0;
      x.tasks++;
      timing.set(label, x);
    }
  }
  // A cell's flops per task: the method's cost formula on the problem's sizes (for a method whose
  // cost depends on the data, `costEstimate` approximate, the flops an earlier run recorded win).
  const approximate = new Set<number>();
  const cellFlops = (cell: number): number | null => {
    const c = plan.cells[cell];
    const def = getMethod(c.method.name);
    if (def.costEstimate && recordedFlops.has(cell)) return recordedFlops.get(cell)!;
    const sh = shape(cell);
    if (sh) {
      try {
        const f = def.estimateCost(sh, c.method.params).flops;
        if (def.costEstimate) approximate.add(cell);
        return f;
      } catch {
        // a method that cannot run on this problem (its run fails the same way): no estimate
      }
    }
    return recordedFlops.get(cell) ?? null;
  };
  const flopsOf = new Map<number, number | null>();
  const flopsAt = (cell: number): number | null => {
    if (!flopsOf.has(cell)) flopsOf.set(cell, cellFlops(cell));
    return flopsOf.get(cell)!;
  };
  let flops = 0;
  let without = 0;
  let ms = 0;
  let untimed = 0;
  for (const t of pending) {
    const f = flopsAt(t.cell);
    if (f === null) without++;
    else flops += f;
    const x = timing.get(plan.cells[t.cell].method.label);
    if (!x) untimed++;
    else if (f !== null && x.flops > 0) ms += (f * x.ms) / x.flops;
    else ms += x.ms / x.tasks;
  }
  const workers = Math.max(1, options.workers);
  const seconds = pending.length === 0 ? 0 : untimed < pending.length ? ms / 1000 / workers : null;

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
      ([k, v]) => `${k.startsWith("problem.") ? k : k.slice(label.length + 1)} ∈ {${[...v].join(", ")}}`,
    );
    const fl = cells.map((i) => flopsAt(i));
    const known = fl.filter((x): x is number => x !== null);
    const flText =
      known.length === 0
        ? "flops/task ?"
        : `flops/task ${cells.some((i) => approximate.has(i)) ? "≈" : ""}${formatDisplay(Math.min(...known))}${Math.max(...known) > Math.min(...known) ? `–${formatDisplay(Math.max(...known))}` : ""}${known.length < fl.length ? " (some ?)" : ""}`;
    lines.push(
      `    ${label.padEnd(18)} ${String(cells.length).padStart(4)} cell(s)  ${swept.join("; ") || "(no swept values)"}  ${flText}`,
    );
  }
  if (plan.cells.length <= MAX_CELL_LINES) {
    lines.push(`  flops per task × tasks${shard ? " (this shard's)" : ""}, per cell:`);
    for (const c of plan.cells) {
      const f = flopsAt(c.index);
      const n = tasks.filter((t) => t.cell === c.index).length;
      const text = f === null ? "?" : `${approximate.has(c.index) ? "≈" : ""}${formatDisplay(f)}`;
      lines.push(`    ${text.padStart(10)} × ${String(n).padStart(3)}  ${cellDescription(plan, c.index)}`);
    }
  }
  const approx = pending.filter((t) => approximate.has(t.cell)).length;
  lines.push(
    `  estimated flops to run: ${pending.length === 0 ? "0" : formatDisplay(flops)}${approx > 0 ? ` (${approx} task(s) of data-dependent cost: ≈, see the method's costEstimate)` : ""}${without > 0 ? ` + ${without} task(s) without an estimate (?: the method cannot run on this problem, or its sizes could not be read)` : ""}`,
  );
  lines.push(
    `  estimated time: ${
      seconds === null
        ? "? (no timings yet: run once, then plan again)"
        : `${untimed > 0 ? "≥ " : ""}${seconds < 1 ? seconds.toFixed(2) : seconds.toFixed(0)} s on ${workers} worker(s), from earlier timings scaled by flops${untimed > 0 ? ` (+ ${untimed} task(s) of methods not timed yet)` : ""}`
    }`,
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
