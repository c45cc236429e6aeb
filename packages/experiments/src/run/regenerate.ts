/** `randattn report`: rewrites the outputs of a finished run from its journal (no task is rerun). */
import { existsSync } from "node:fs";
import { join } from "node:path";
import { type Plan, planTasks } from "../plan/expand.js";
import type { Manifest } from "../output/manifest.js";
import { writeOutputs } from "../output/write.js";
import { JOURNAL_FILE, readJournal } from "./journal.js";
import { FolderLock } from "./lock.js";
import { RunRefusedError, runDir } from "./runner.js";

/**
 * Regenerates results.csv, summary.csv, figures, tables, report.html and manifest.json.
 * @throws RunRefusedError when there is no finished run of this config in the folder.
 */
export function regenerateOutputs(plan: Plan, outRoot = "results"): Manifest {
  const dir = runDir(plan, outRoot, null);
  const path = join(dir, JOURNAL_FILE);
  if (!existsSync(path)) throw new RunRefusedError(dir, "a finished run (journal.jsonl)", "no journal");
  const lock = FolderLock.acquire(dir, `randattn report ${plan.loaded.source}`);
  try {
    const j = readJournal(path);
    if (j.header?.configHash !== plan.loaded.hash) {
      throw new RunRefusedError(
        dir,
        `results of this config (sha256 ${plan.loaded.hash.slice(0, 12)}…)`,
        `results of another config (${j.header?.configHash.slice(0, 12) ?? "?"}…)`,
      );
    }
    const tasks = planTasks(plan);
    const missing = tasks.filter((t) => !j.records.has(t.key)).length;
    if (missing > 0) throw new RunRefusedError(dir, "a finished run", `${missing} task(s) not run yet — use \`randattn resume\``);
    return writeOutputs(plan, dir, tasks, j.records, { shard: null, report: true, indexRoot: outRoot });
  } finally {
    lock.release();
  }
}
