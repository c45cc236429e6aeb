/**
 * `randattn merge`: combines the shard folders of a sharded run into the experiment folder.
 * Every shard must come from the same config (journal header hash = the config's hash), the shard
 * count must agree, every index 0…n−1 must be present exactly once, and every task must be recorded
 * by the shard it belongs to. The merged results.csv is byte-identical to an unsharded run's.
 */
import { existsSync, readdirSync } from "node:fs";
import { join } from "node:path";
import { type Plan, planTasks } from "../plan/expand.js";
import { parseShard, type Shard } from "../plan/shard.js";
import type { Manifest } from "../output/manifest.js";
import { writeOutputs } from "./outputs.js";
import { JOURNAL_FILE, type JournalHeader, type JournalRecord, readJournal } from "./journal.js";
import { writeFileAtomic } from "../output/atomic.js";
import { FolderLock } from "./lock.js";
import { RunRefusedError, runDir } from "./runner.js";

/** Options of `mergeShards`. */
export interface MergeOptions {
  /** Results root. @default "results" */
  outRoot?: string;
  /** Shard folders. @default every folder under `<outRoot>/<experiment>/shards/` */
  from?: readonly string[];
  /** @default true */
  report?: boolean;
}

/**
 * Merges shard results into `<outRoot>/<experiment>/`.
 * @throws RunRefusedError naming the shard folder at fault (other config, missing / duplicate
 *   shard, unfinished shard).
 */
export function mergeShards(plan: Plan, options: MergeOptions = {}): Manifest {
  const outRoot = options.outRoot ?? "results";
  const dir = runDir(plan, outRoot, null);
  const shardsDir = join(dir, "shards");
  const from =
    options.from ??
    (existsSync(shardsDir)
      ? readdirSync(shardsDir, { withFileTypes: true })
          .filter((d) => d.isDirectory())
          .map((d) => join(shardsDir, d.name))
          .sort()
      : []);
  if (from.length === 0) throw new RunRefusedError("merge", "shard folders to merge", `none under ${shardsDir}`);
  const shards = new Map<number, { dir: string; records: Map<string, JournalRecord> }>();
  let count: number | null = null;
  for (const d of from) {
    const path = join(d, JOURNAL_FILE);
    if (!existsSync(path)) throw new RunRefusedError(d, "a shard folder with a journal", "no journal.jsonl");
    const j = readJournal(path);
    if (!j.header) throw new RunRefusedError(d, "a journal with a header", "an empty journal");
    if (j.header.configHash !== plan.loaded.hash) {
      throw new RunRefusedError(
        d,
        `a shard of this config (sha256 ${plan.loaded.hash.slice(0, 12)}…)`,
        `a shard of another config (sha256 ${j.header.configHash.slice(0, 12)}…)`,
      );
    }
    if (!j.header.shard) throw new RunRefusedError(d, "a shard (run with --shard)", "an unsharded run");
    const shard: Shard = parseShard(j.header.shard.replace("-of-", "/"), d);
    if (count !== null && shard.count !== count) throw new RunRefusedError(d, `a shard of ${count}`, `a shard of ${shard.count}`);
    count = shard.count;
    if (shards.has(shard.index))
      throw new RunRefusedError(d, `one folder for shard ${shard.index}`, `a second one (also ${shards.get(shard.index)!.dir})`);
    shards.set(shard.index, { dir: d, records: j.records });
  }
  const n = count!;
  const missing = Array.from({ length: n }, (_, i) => i).filter((i) => !shards.has(i));
  if (missing.length > 0) throw new RunRefusedError("merge", `all ${n} shards`, `missing shard(s) ${missing.join(", ")}`);
  const tasks = planTasks(plan);
  const records = new Map<string, JournalRecord>();
  const unfinished = new Map<number, number>();
  for (const t of tasks) {
    const s = shards.get(t.index % n)!;
    const r = s.records.get(t.key);
    if (r) records.set(t.key, r);
    else unfinished.set(t.index % n, (unfinished.get(t.index % n) ?? 0) + 1);
  }
  if (unfinished.size > 0) {
    const list = [...unfinished.entries()].map(([i, k]) => `shard ${i}: ${k} task(s) missing (${shards.get(i)!.dir})`);
    throw new RunRefusedError("merge", "finished shards", `${list.join("; ")} — resume those shards first`);
  }
  const lock = FolderLock.acquire(dir, `randattn merge ${plan.loaded.source}`);
  try {
    // A combined journal, so `report` and `run` treat the merged folder like an unsharded run.
    const header: JournalHeader = {
      type: "header",
      version: 2,
      experiment: plan.loaded.config.experiment,
      configHash: plan.loaded.hash,
      identity: JSON.parse(plan.loaded.identity),
      shard: null,
      taskCount: tasks.length,
    };
    const lines = [header, ...tasks.map((t) => records.get(t.key)!)].map((v) => JSON.stringify(v));
    writeFileAtomic(join(dir, JOURNAL_FILE), `${lines.join("\n")}\n`);
    return writeOutputs(plan, dir, tasks, records, {
      shard: null,
      report: options.report ?? true,
      indexRoot: outRoot,
      extra: { merged_from: { shard_count: n, folders: [...shards.values()].map((s) => s.dir) } },
    });
  } finally {
    lock.release();
  }
}
