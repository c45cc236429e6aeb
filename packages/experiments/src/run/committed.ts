/**
 * Reading a results folder's committed files back into journal records, so `randattn report` and
 * a grown `randattn run` work on a fresh clone where the (git-ignored) journal does not exist.
 * results.csv holds every journaled value of a task except its timings (numbers are written as
 * the shortest text that round-trips, so the records read back are the ones that were written),
 * and timings.csv, committed next to it, holds the timings.
 */
import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { FormatError } from "@randattn/core";
import { parse } from "csv-parse/sync";
import { parseNumber } from "../base/format.js";
import { type JournalHeader, type JournalRecord, METRIC_NAMES, type MetricValues } from "../base/records.js";
import type { Manifest } from "../output/manifest.js";
import { METRIC_COLUMNS } from "../output/results.js";

/** Records and header rebuilt from a folder's results.csv, timings.csv and manifest.json. */
export interface CommittedResults {
  readonly header: JournalHeader;
  readonly records: Map<string, JournalRecord>;
}

/**
 * Reads `dir`'s committed results, or returns null when the folder has no results.csv and
 * manifest.json (or a manifest of a shard).
 * @throws FormatError naming the file for an unreadable or inconsistent results.csv.
 */
export function readCommittedResults(dir: string): CommittedResults | null {
  const csvPath = join(dir, "results.csv");
  const manifestPath = join(dir, "manifest.json");
  if (!existsSync(csvPath) || !existsSync(manifestPath)) return null;
  const manifest = JSON.parse(readFileSync(manifestPath, "utf8")) as Manifest;
  if (manifest.shard) return null;
  const rows = parse(readFileSync(csvPath, "utf8"), { columns: true, skip_empty_lines: true }) as Record<string, string>[];
  const header = rows.length > 0 ? Object.keys(rows[0]) : [];
  for (const need of ["cell", "trial", "status", "error", "flops", "floats_stored"])
    if (rows.length > 0 && !header.includes(need)) throw new FormatError(csvPath, `a results.csv with a ${need} column`, header.join(","));
  const extraColumns = header.slice(header.indexOf("floats_stored") + 1);
  const timings = new Map<string, Record<string, string>>();
  const timingsPath = join(dir, "timings.csv");
  if (existsSync(timingsPath)) {
    for (const t of parse(readFileSync(timingsPath, "utf8"), { columns: true, skip_empty_lines: true }) as Record<string, string>[])
      timings.set(`${t.cell}/${t.trial}`, t);
  }
  const records = new Map<string, JournalRecord>();
  rows.forEach((row, i) => {
    const key = `${row.cell}/${row.trial}`;
    if (row.status !== "ok" && row.status !== "failed")
      throw new FormatError(`${csvPath}:${i + 2}`, "status ok or failed", JSON.stringify(row.status));
    const metrics = {} as Record<string, number | null>;
    for (const m of METRIC_NAMES) metrics[m] = parseNumber(row[METRIC_COLUMNS[m]] ?? "");
    const extras: Record<string, number | null> = {};
    for (const c of extraColumns) extras[c] = parseNumber(row[c]);
    const t = timings.get(key);
    records.set(key, {
      type: "task",
      key,
      index: i,
      status: row.status,
      error: row.error,
      metrics: metrics as MetricValues,
      flops: parseNumber(row.flops),
      floatsStored: parseNumber(row.floats_stored),
      extras,
      wallMs: t ? Number(t.wall_time_ms) : 0,
      setupMs: t ? Number(t.setup_time_ms) : 0,
      session: t?.session ?? "committed",
    });
  });
  return {
    header: {
      type: "header",
      version: 2,
      experiment: manifest.experiment,
      configHash: manifest.config_sha256,
      identity: (manifest as { identity?: unknown }).identity,
      shard: null,
      taskCount: manifest.task_count,
    },
    records,
  };
}
