/**
 * The sweep runner: lock the results folder, open the journal, run the tasks not yet done on the
 * worker pool, journal each outcome durably as it arrives, and, once every task has a record,
 * write the outputs. Interrupts (Ctrl-C, SIGTERM), fail-fast and journal write errors stop
 * dispatching; what finished stays journaled and `resume` continues from there.
 */
import { existsSync, rmSync } from "node:fs";
import { join } from "node:path";
import { RandAttnError } from "@randattn/core";
import { cellDescription, type Plan, planTasks, type Task } from "../plan/expand.js";
import { summaryRows } from "../output/summary.js";
import { summaryTable, textTable } from "../figures/tables.js";
import { inShard, type Shard, shardName } from "../plan/shard.js";
import { gitInfoAsync, type Manifest } from "../output/manifest.js";
import { writeOutputs } from "./outputs.js";
import { executeTask, type TaskOutcome, type TaskSpec, taskSpec } from "./execute.js";
import { jsonDiff } from "../base/diff.js";
import { readCommittedResults } from "./committed.js";
import { Journal, JOURNAL_FILE, type JournalHeader, type JournalRecord } from "./journal.js";
import { compareWithEarlier } from "./reuse.js";
import { FolderLock } from "./lock.js";
import { WorkerPool } from "./pool.js";
import { Progress, type ProgressMode } from "./progress.js";

/** A run that must not start: results from another config, or an unfinished run without `resume`. */
export class RunRefusedError extends RandAttnError {}

/** Options of `runPlan`. */
export interface RunOptions {
  /** Results root; the experiment goes to `<outRoot>/<experiment>/` (shards: `…/shards/<i>-of-<n>/`). @default "results" */
  outRoot?: string;
  /** Worker threads; 0 runs tasks in this thread. @default available parallelism */
  workers?: number;
  /** Run only this shard. @default null (all tasks) */
  shard?: Shard | null;
  /** Stop dispatching at the first failed task. @default false */
  failFast?: boolean;
  /** "run": start (refuses an unfinished run); "resume": continue one. @default "run" */
  mode?: "run" | "resume";
  /** With mode "run": discard any previous results in the folder first. @default false */
  restart?: boolean;
  /** @default "auto" */
  progress?: ProgressMode;
  /** Write figures, tables and report.html at the end. @default true */
  report?: boolean;
  /** Where status lines go. @default stderr */
  log?: (line: string) => void;
  /**
   * How the user invokes the CLI, for the commands suggested in messages (e.g. `pnpm exec randattn`).
   * @default "randattn"
   */
  command?: string;
  /**
   * Print a result table (method × swept values → mean ± 95 % CI) and the report path at the end.
   * @default false
   */
  summaryTable?: boolean;
  /** Seconds between progress lines when stderr is not a terminal. @default 30 */
  progressInterval?: number;
  /** Worker entry (tests). @default dist/run/worker.bundle.js when current, else dist/run/worker.js (`sweepWorkerUrl`) */
  workerUrl?: URL;
  /**
   * A pool the caller started before the plan was ready (`new WorkerPool(n).start()`, WorkerPool from
   * `@randattn/experiments/internal`: what the CLI does, so
   * that the workers load while it reads the config), used instead of a new one when tasks run on
   * workers. runPlan destroys it in every case, also when it runs nothing or throws — unless
   * `keepPool`. Its size should be `workers`; `workerUrl` is then ignored. @default none: runPlan
   * starts its own
   */
  pool?: WorkerPool;
  /**
   * With `pool`: leave it running when the plan is done or throws, for the caller's next plan on
   * the same warm workers (`reproduce`: one pool for all the shipped experiments); the caller
   * destroys it. A SIGINT or SIGTERM still destroys it (the result says `interrupted`).
   * @default false
   */
  keepPool?: boolean;
}

/** What a run did. */
export interface RunResult {
  readonly dir: string;
  readonly total: number;
  readonly skipped: number;
  readonly ran: number;
  readonly ok: number;
  readonly failed: number;
  readonly complete: boolean;
  readonly interrupted: boolean;
  /** Message of the I/O error that stopped the run, or null. */
  readonly ioError: string | null;
  readonly manifest: Manifest | null;
  /** Failed tasks: key, method label, the cell named by its swept values (and trial), error text. */
  readonly failures: readonly { key: string; label: string; cell: string; error: string }[];
}

/** Output files a `--restart` removes. */
const OUTPUT_FILES = [JOURNAL_FILE, "results.csv", "timings.csv", "summary.csv", "manifest.json", "report.html", "figures", "tables"];

/** The folder a run of `plan` writes to. */
export function runDir(plan: Plan, outRoot: string, shard: Shard | null): string {
  const base = join(outRoot, plan.loaded.config.experiment);
  return shard ? join(base, "shards", shardName(shard)) : base;
}

/**
 * The order tasks are handed to workers: by problem point, then trial, then cell — so the tasks
 * that share inputs and the exact reference run back to back (each worker caches the last few).
 * Execution order never affects results: results.csv is written in plan order.
 */
export function dispatchOrder(plan: Plan, tasks: readonly Task[]): Task[] {
  const pointOf = problemPoints(plan);
  return [...tasks].sort((a, b) => pointOf[a.cell] - pointOf[b.cell] || a.trial - b.trial || a.cell - b.cell);
}

/** Each cell's problem point: an index shared by the cells with the same problem parameters and problem. */
function problemPoints(plan: Plan): number[] {
  const point = new Map<string, number>();
  return plan.cells.map((c) => {
    const key = JSON.stringify([c.problem, c.problemIndex]);
    if (!point.has(key)) point.set(key, point.size);
    return point.get(key)!;
  });
}

/**
 * Tasks in `dispatchOrder` split into `workers` lanes, one per worker, whole groups at a time: a
 * group is the tasks of one problem point and trial, which share the generated inputs and the exact
 * reference (and its norms) that a worker computes once and caches. Groups go to the lane with the
 * fewest tasks so far, largest group first (LPT). The runner keeps every lane's worker fed from its
 * own lane (WorkerPool runs a lane's tasks on its worker and lets an idle worker take another
 * lane's, so the last groups are shared rather than waited for). Before, consecutive tasks went to
 * whichever worker was free, so every worker computed every group's reference (the quickstart on
 * two workers: 6 reference computations for 3 groups, now 4; mha-to-mla on two workers 17.4–17.9 s,
 * now 15.9–16.4 s in alternating runs). Results do not depend on the lanes (results.csv is written
 * in plan order).
 */
export function workerLanes(plan: Plan, ordered: readonly Task[], workers: number): Task[][] {
  if (workers <= 1) return [ordered.slice()];
  const pointOf = problemPoints(plan);
  const groups: Task[][] = [];
  const byKey = new Map<string, Task[]>();
  for (const t of ordered) {
    const key = `${pointOf[t.cell]}:${t.trial}`;
    let g = byKey.get(key);
    if (!g) {
      g = [];
      byKey.set(key, g);
      groups.push(g);
    }
    g.push(t);
  }
  const lanes: Task[][] = Array.from({ length: workers }, () => []);
  const bySize = groups.map((g, i) => ({ g, i })).sort((a, b) => b.g.length - a.g.length || a.i - b.i);
  for (const { g } of bySize) {
    let best = 0;
    for (let l = 1; l < workers; l++) if (lanes[l].length < lanes[best].length) best = l;
    lanes[best].push(...g);
  }
  // Each lane in dispatch order (LPT appended the groups by size).
  const rank = new Map(ordered.map((t, i) => [t, i]));
  for (const lane of lanes) lane.sort((a, b) => rank.get(a)! - rank.get(b)!);
  return lanes;
}

/**
 * The untaken tasks of each lane (workerLanes), handed out one at a time: a lane takes its own from
 * the front and, once they are all taken, steals the last untaken task of the lane with the most
 * left. Stealing from the tail: the victim goes on with its current group from the front while the
 * thief starts at the other end, so the two share at most one group's inputs and reference. Taking
 * the victim's next task instead put both workers on every group it had left (the quickstart on two
 * workers generated and referenced 4–5 groups for 3; now 4).
 */
export class LaneQueue<T> {
  private readonly cursor: number[];
  private readonly end: number[];

  constructor(private readonly lanes: readonly (readonly T[])[]) {
    this.cursor = lanes.map(() => 0);
    this.end = lanes.map((l) => l.length);
  }

  /** Tasks not yet taken, over all lanes. */
  get left(): number {
    let n = 0;
    for (let l = 0; l < this.lanes.length; l++) n += this.end[l] - this.cursor[l];
    return n;
  }

  /** Lane `lane`'s next task, else the last untaken one of the lane with the most left (the lowest such lane); undefined when none is left. */
  take(lane: number): T | undefined {
    if (this.cursor[lane] < this.end[lane]) return this.lanes[lane][this.cursor[lane]++];
    let victim = -1;
    for (let l = 0; l < this.lanes.length; l++) {
      const left = this.end[l] - this.cursor[l];
      if (left > 0 && (victim < 0 || left > this.end[victim] - this.cursor[victim])) victim = l;
    }
    return victim < 0 ? undefined : this.lanes[victim][--this.end[victim]];
  }
}

function sessionId(): string {
  return `${new Date().toISOString().replace(/[-:.]/g, "").slice(0, 15)}-${process.pid}`;
}

/**
 * Whether the records already in a folder may be reused by `plan`. Same identity: yes. Another
 * identity: a task's key is a hash of its own cell and trial, so every record whose key the plan
 * has is a valid result of it. The plan may grow (more trials, sweep values or methods: new tasks
 * run) and shrink (fewer: the dropped finished tasks stay in the journal, out of results.csv, and
 * are reused when it grows back) — see run/reuse.ts. A change of what finished tasks computed
 * (same grid position, another key) is refused, naming the config keys that changed.
 */
function checkReuse(
  plan: Plan,
  old: JournalHeader,
  now: JournalHeader,
  records: ReadonlyMap<string, JournalRecord>,
  planKeys: ReadonlySet<string>,
  dir: string,
  mode: "run" | "resume",
  command: string,
): { grown: boolean; reused: number; kept: number; earlierUnfinished: number | null } {
  const reused = [...planKeys].filter((k) => records.has(k)).length;
  if (old.configHash === now.configHash && old.shard === now.shard) return { grown: false, reused, kept: 0, earlierUnfinished: null };
  const stale = [...records.keys()].filter((k) => !planKeys.has(k));
  const verdict = old.shard === now.shard && old.shard === null ? compareWithEarlier(plan, old.identity, records, planKeys) : null;
  if (old.shard !== now.shard || old.shard !== null || (stale.length > 0 && (verdict === null || verdict.conflicts > 0))) {
    const changed =
      old.identity !== undefined
        ? jsonDiff(old.identity, now.identity).map((l) => l.replace(/^config\./, ""))
        : ["(the earlier config was not recorded)"];
    const what =
      old.shard !== now.shard
        ? `shard ${old.shard ?? "none"}, not ${now.shard ?? "none"}`
        : old.shard !== null
          ? `a shard of another config (changed: ${changed.join("; ")})`
          : `${verdict?.conflicts ?? stale.length} finished task(s) this config would compute differently; changed: ${changed.join("; ")}`;
    throw new RunRefusedError(
      dir,
      "results of this config, or of a config it extends or shrinks",
      `results of another run (${what})`,
      `${dir} holds results of a different run: ${what}. Refusing to ${mode}: finished tasks are reused only when a config grows or shrinks (trials, sweep values, methods or problems added or removed), not when what a task computes changes. Use \`${command} run ${plan.loaded.source} --restart\` to discard them, or --out for another folder.`,
    );
  }
  return { grown: true, reused, kept: stale.length, earlierUnfinished: verdict?.earlierUnfinished ?? null };
}

/**
 * Runs (or resumes) a plan.
 * @throws RunRefusedError when the folder holds results of another config or shard, or (mode "run")
 *   an unfinished run; LockError when another process holds the folder.
 * @example
 * ```ts
 * import { mkdtempSync } from "node:fs";
 * import { tmpdir } from "node:os";
 * import { join } from "node:path";
 * import { expandPlan, loadConfigObject, runPlan } from "@randattn/experiments";
 *
 * const plan = expandPlan(
 *   loadConfigObject(
 *     {
 *       experiment: "tiny-run",
 *       seed: 3,
 *       trials: 1,
 *       problem: { generator: "low-rank", params: { n: 64, d: 8, rank: 2 } },
 *       methods: [{ method: "exact" }, { method: "row-sampling", params: { samples: 16 } }],
 *     },
 *     process.cwd(),
 *   ),
 * );
 * const out = mkdtempSync(join(tmpdir(), "randattn-"));
 * const result = await runPlan(plan, { outRoot: out, workers: 0, progress: "none", report: false });
 * console.log(result.ok, result.complete); // 2 true — results.csv, summary.csv, manifest.json in result.dir
 * ```
 */
export async function runPlan(plan: Plan, options: RunOptions = {}): Promise<RunResult> {
  try {
    return await runPlanWith(plan, options);
  } finally {
    // A caller's pre-started pool, whatever happened (destroying twice is harmless), unless kept.
    if (!options.keepPool) await options.pool?.destroy();
  }
}

async function runPlanWith(plan: Plan, options: RunOptions): Promise<RunResult> {
  const outRoot = options.outRoot ?? "results";
  const shard = options.shard ?? null;
  const mode = options.mode ?? "run";
  const log = options.log ?? ((line: string) => process.stderr.write(`${line}\n`));
  const command = options.command ?? "randattn";
  const resumeHint = `${command} resume ${plan.loaded.source}${options.outRoot !== undefined ? ` --out ${outRoot}` : ""}`;
  const dir = runDir(plan, outRoot, shard);
  const lock = FolderLock.acquire(dir, `randattn ${mode} ${plan.loaded.source}`);
  let journal: Journal | null = null;
  try {
    if (options.restart) for (const f of OUTPUT_FILES) rmSync(join(dir, f), { recursive: true, force: true });
    const tasks = planTasks(plan).filter((t) => inShard(t.index, shard));
    const header: JournalHeader = {
      type: "header",
      version: 2,
      experiment: plan.loaded.config.experiment,
      configHash: plan.loaded.hash,
      identity: JSON.parse(plan.loaded.identity),
      shard: shard ? shardName(shard) : null,
      taskCount: tasks.length,
    };
    let hadJournal = existsSync(join(dir, JOURNAL_FILE));
    // A fresh clone has no journal, but its committed results.csv (+ timings.csv, manifest.json)
    // hold the same records: seed a journal from them so growing the experiment reuses them.
    const committed = !hadJournal && !shard && !options.restart ? readCommittedResults(dir) : null;
    if (committed) {
      Journal.create(dir, committed.header, [...committed.records.values()]);
      hadJournal = true;
    }
    journal = Journal.open(dir, header);
    const h = journal.header;
    const planKeys = new Set(tasks.map((t) => t.key));
    const reuse = checkReuse(plan, h, header, journal.records, planKeys, dir, mode, command);
    if (reuse.grown) {
      // Unfinished: a task of the earlier config lacks a record (the count alone misjudges a
      // journal that also keeps the tasks of a larger grid).
      const earlierDone = h.taskCount - (reuse.earlierUnfinished ?? Math.max(0, h.taskCount - journal.records.size));
      if (mode === "run" && earlierDone < h.taskCount) {
        throw new RunRefusedError(
          dir,
          "a finished run to grow or shrink",
          `an interrupted run (${earlierDone} of ${h.taskCount} tasks done)`,
          `${dir} holds an unfinished run (${earlierDone}/${h.taskCount} tasks done) of an earlier version of this config: finish it with \`${resumeHint}\` first, or start over with \`${command} run ${plan.loaded.source} --restart\`.`,
        );
      }
      journal.appendHeader(header);
      log(
        `${plan.loaded.config.experiment}: ${reuse.kept > 0 ? "changing the grid" : "growing the experiment"} — ${reuse.reused} finished task(s) reused, ${tasks.length - reuse.reused} new` +
          (reuse.kept > 0
            ? `; ${reuse.kept} finished task(s) outside this grid kept in ${JOURNAL_FILE} (not in results.csv; reused if the grid grows back)`
            : ""),
      );
    }
    const done = (t: Task) => journal!.records.get(t.key)?.status === "ok";
    const finished = (t: Task) => journal!.records.has(t.key);
    if (mode === "run" && hadJournal && !reuse.grown && !tasks.every(finished)) {
      throw new RunRefusedError(
        dir,
        "no unfinished run",
        `an interrupted run (${tasks.filter(finished).length} of ${tasks.length} tasks done)`,
        `${dir} holds an unfinished run of this config (${tasks.filter(finished).length}/${tasks.length} tasks done): continue it with \`${resumeHint}\`, or start over with \`${command} run ${plan.loaded.source} --restart\`.`,
      );
    }
    // "run" on a finished journal re-runs nothing; "resume" retries failed tasks.
    const pending = dispatchOrder(
      plan,
      tasks.filter((t) => (mode === "run" ? !finished(t) : !done(t))),
    );
    const skipped = tasks.length - pending.length;
    const workers = Math.max(0, Math.min(options.workers ?? 1, pending.length));
    const label = `${plan.loaded.config.experiment}${shard ? ` [shard ${shardName(shard)}]` : ""}`;
    const progress = new Progress(label, tasks.length, skipped, options.progress ?? "auto", log, options.progressInterval ?? 30);
    const session = sessionId();
    // The manifest's git facts, asked for now (output/manifest.ts, gitInfoAsync): git runs beside the
    // tasks, not after the last one. Now, before the workers start: forking a process whose workers
    // are writing hundreds of MB costs them a copy-on-write fault per page they touch next.
    const git = gitInfoAsync();
    const pool = workers > 0 ? (options.pool ?? new WorkerPool(workers, options.workerUrl)) : null;
    let stopping = false;
    let interrupted = false;
    let ioError: string | null = null;
    let ran = 0;
    const onSignal = (signal: NodeJS.Signals) => {
      if (interrupted) process.exit(130); // a second Ctrl-C: leave at once (the journal is consistent)
      interrupted = true;
      stopping = true;
      log(`\n${signal}: stopping; finished tasks are kept — continue with \`${resumeHint}\``);
      void pool?.destroy();
    };
    process.on("SIGINT", onSignal);
    process.on("SIGTERM", onSignal);
    const exec = (spec: TaskSpec, lane: number): Promise<TaskOutcome> =>
      pool ? pool.run(spec, lane) : new Promise((resolve) => setImmediate(() => resolve(executeTask(spec))));
    const lanes = workerLanes(plan, pending, workers);
    try {
      await new Promise<void>((resolveAll) => {
        let next = 0;
        let inFlight = 0;
        // Two tasks per worker keep every worker busy; in-thread (workers 0) one at a time.
        const window = workers > 0 ? workers * 2 : 1;
        // The next task goes to the lane with the fewest in flight (so each worker has a task of
        // its own queued when it frees up): its own next one, or, its own all taken, a stolen one.
        const queue = new LaneQueue(lanes);
        const laneInFlight = lanes.map(() => 0);
        const nextTask = (): { lane: number; task: Task } => {
          let lane = 0;
          for (let l = 1; l < lanes.length; l++) if (laneInFlight[l] < laneInFlight[lane]) lane = l;
          return { lane, task: queue.take(lane)! };
        };
        const finish = () => {
          if (inFlight === 0 && (stopping || next >= pending.length)) resolveAll();
        };
        const recordFailed = (e: Error) => {
          if (ioError !== null) return;
          ioError = `could not record a finished task in ${journal!.path}: ${e.message}`;
          stopping = true;
          pool?.cancelPending();
        };
        const handle = (outcome: TaskOutcome) => {
          if (outcome.status === "cancelled" || ioError !== null) return;
          const record: JournalRecord = { ...outcome, type: "task", session };
          try {
            // Written now; counted (ran, progress) once its fsync has completed (journal.ts).
            journal!.append(record, (error) => {
              if (error) recordFailed(error);
              else {
                ran++;
                progress.tick(outcome.status === "failed");
              }
            });
          } catch (e) {
            recordFailed(e as Error);
            return;
          }
          if (outcome.status === "failed" && options.failFast) {
            stopping = true;
            pool?.cancelPending();
          }
        };
        const launch = () => {
          while (!stopping && inFlight < window && next < pending.length) {
            const { lane, task } = nextTask();
            next++;
            inFlight++;
            laneInFlight[lane]++;
            void exec(taskSpec(plan, task), lane).then((outcome) => {
              inFlight--;
              laneInFlight[lane]--;
              handle(outcome);
              launch();
              finish();
            });
          }
          finish();
        };
        launch();
      });
      // Every recorded task durable (and counted) before the outputs are written from the journal.
      await journal.flush();
    } finally {
      process.off("SIGINT", onSignal);
      process.off("SIGTERM", onSignal);
      if (!(options.keepPool && pool === options.pool)) await pool?.destroy();
    }
    const complete = tasks.every(finished);
    let manifest: Manifest | null = null;
    if (complete && ioError === null && !interrupted) {
      try {
        manifest = writeOutputs(plan, dir, tasks, journal.records, {
          shard,
          report: options.report ?? true,
          indexRoot: outRoot,
          git: await git,
        });
      } catch (e) {
        ioError = `could not write the outputs: ${(e as Error).message}`;
      }
    }
    const failures = tasks
      .map((t) => ({ t, r: journal!.records.get(t.key) }))
      .filter(({ r }) => r?.status === "failed")
      .map(({ t, r }) => ({
        key: t.key,
        label: plan.cells[t.cell].method.label,
        cell: `${cellDescription(plan, t.cell)}, trial ${t.trial}`,
        error: r!.error,
      }));
    const ok = tasks.filter(done).length;
    progress.stop(
      `${label}: ${ran} run this session, ${skipped} skipped; ${ok}/${tasks.length} ok, ${failures.length} failed` +
        (complete ? (manifest ? ` → ${dir}` : "") : ` — incomplete${interrupted ? " (interrupted)" : ""}; continue with \`${resumeHint}\``),
    );
    if (manifest && options.summaryTable) {
      const table = summaryTable(plan, summaryRows(tasks, journal.records, plan.extraColumns));
      log(`\n${textTable(table)}`);
      if (options.report ?? true) log(`report: ${join(dir, "report.html")}`);
    }
    if (ioError)
      log(`error: ${ioError}\n  completed tasks are kept in ${join(dir, JOURNAL_FILE)}; fix the cause and run \`${resumeHint}\``);
    return { dir, total: tasks.length, skipped, ran, ok, failed: failures.length, complete, interrupted, ioError, manifest, failures };
  } finally {
    journal?.close();
    lock.release();
  }
}
