/**
 * `randattn report`: rewrites the outputs of a finished run without rerunning any task — from the
 * journal, or on a fresh clone (no journal: it is git-ignored) from the committed results.csv,
 * timings.csv and manifest.json. Presentation keys (description, figures, tables) are not part of
 * a run's identity, so editing them and running `report` redraws the report from the same records.
 */
import { existsSync } from "node:fs";
import { join } from "node:path";
import type { JournalRecord } from "../base/records.js";
import type { Manifest } from "../output/manifest.js";
import { type Plan, planTasks } from "../plan/expand.js";
import { readCommittedResults } from "./committed.js";
import { JOURNAL_FILE, readJournal } from "./journal.js";
import { FolderLock } from "./lock.js";
import { writeOutputs } from "./outputs.js";
import { RunRefusedError, runDir } from "./runner.js";

/**
 * Regenerates results.csv, summary.csv, figures, tables, report.html and manifest.json.
 * @param command how the user invokes the CLI (for the suggestion in a refusal).
 * @throws RunRefusedError when the folder lacks a record of some task of `plan`.
 */
export function regenerateOutputs(plan: Plan, outRoot = "results", command = "randattn"): Manifest {
  const dir = runDir(plan, outRoot, null);
  const path = join(dir, JOURNAL_FILE);
  let records: ReadonlyMap<string, JournalRecord>;
  let manifestExtra: Record<string, unknown> | undefined;
  if (existsSync(path)) records = readJournal(path).records;
  else {
    const committed = readCommittedResults(dir);
    if (!committed) throw new RunRefusedError(dir, "a finished run (journal.jsonl, or results.csv + manifest.json)", "neither");
    records = committed.records;
    manifestExtra = { regenerated_from: "results.csv" };
  }
  const lock = FolderLock.acquire(dir, `randattn report ${plan.loaded.source}`);
  try {
    const tasks = planTasks(plan);
    const missing = tasks.filter((t) => !records.has(t.key)).length;
    if (missing > 0)
      throw new RunRefusedError(
        dir,
        "a record of every task of this config",
        `${missing} of ${tasks.length} task(s) without a record — run them with \`${command} run ${plan.loaded.source}\` (finished tasks are reused)`,
      );
    return writeOutputs(plan, dir, tasks, records, { shard: null, report: true, indexRoot: outRoot, extra: manifestExtra });
  } finally {
    lock.release();
  }
}
