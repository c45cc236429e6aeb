/**
 * Writes a results folder from a plan and its journal records: results.csv, timings.csv,
 * summary.csv, manifest.json and (unless a shard) figures, tables, report.html and the index.
 */
import { join } from "node:path";
import { sha256 } from "../base/canonical.js";
import { writeIndex, writeReport } from "../figures/report.js";
import type { Plan, Task } from "../plan/expand.js";
import type { Shard } from "../plan/shard.js";
import type { JournalRecord } from "../base/records.js";
import { writeFileAtomic } from "../output/atomic.js";
import { buildManifest, type GitInfo, type Manifest } from "../output/manifest.js";
import { resultsCsv, timingsCsv } from "../output/results.js";
import { summaryCsv, summaryRows } from "../output/summary.js";

/** Options of `writeOutputs`. */
export interface WriteOptions {
  shard: Shard | null;
  /** Write figures, tables and report.html (and refresh `<reportRoot>/index.html`). */
  report: boolean;
  /** Folder whose index.html lists the experiments (the results root). */
  indexRoot?: string;
  /** Extra manifest fields (e.g. the shards a merge combined). */
  extra?: Record<string, unknown>;
  /** The manifest's git facts, when the caller asked for them ahead (`gitInfoAsync`). @default asked now (`gitInfo`) */
  git?: GitInfo | null;
}

/**
 * Writes every output file of a complete run atomically. The manifest is written last, so a
 * folder with a manifest always has the results it describes.
 * @returns the manifest written.
 */
export function writeOutputs(
  plan: Plan,
  dir: string,
  tasks: readonly Task[],
  records: ReadonlyMap<string, JournalRecord>,
  options: WriteOptions,
): Manifest {
  const files: Record<string, { sha256: string; bytes: number }> = {};
  const put = (name: string, text: string) => {
    writeFileAtomic(join(dir, name), text);
    files[name] = { sha256: sha256(text), bytes: Buffer.byteLength(text, "utf8") };
  };
  put("results.csv", resultsCsv(plan, tasks, records));
  put("timings.csv", timingsCsv(plan, tasks, records));
  const rows = summaryRows(tasks, records, plan.extraColumns);
  if (!options.shard) put("summary.csv", summaryCsv(plan, rows));
  let ok = 0;
  let failed = 0;
  for (const t of tasks) {
    if (records.get(t.key)?.status === "ok") ok++;
    else failed++;
  }
  const manifest = buildManifest(plan, {
    shard: options.shard,
    taskCount: tasks.length,
    complete: true,
    ok,
    failed,
    files,
    git: options.git,
    extra: options.extra,
  });
  if (options.report && !options.shard) {
    writeReport(plan, dir, tasks, records, rows, manifest);
  }
  writeFileAtomic(join(dir, "manifest.json"), `${JSON.stringify(manifest, null, 2)}\n`);
  if (options.report && !options.shard && options.indexRoot) writeIndex(options.indexRoot);
  return manifest;
}
