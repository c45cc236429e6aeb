/**
 * The append-only journal of completed tasks: `journal.jsonl` in the results folder.
 *
 * Line 1 is a header (config identity hash, shard, task count); each further line is one finished
 * task's outcome, or a new header when a later run grew the experiment (the last header is the
 * folder's current config). A task line is written with a single write() and fsynced before the task counts as done. A process
 * killed at any instant leaves a prefix of complete lines plus at most one partial line (no final
 * newline), which `openJournal` cuts off. So resume never loses a finished task (its line is on
 * disk) and never repeats one (its key is in the journal).
 */
import { closeSync, existsSync, fsyncSync, openSync, readFileSync, truncateSync, writeSync } from "node:fs";
import { join } from "node:path";
import { FormatError } from "@randattn/core";
import { writeFileAtomic } from "../output/atomic.js";
import type { JournalHeader, JournalRecord } from "../base/records.js";

/** File name of the journal inside a results folder. */
export const JOURNAL_FILE = "journal.jsonl";

export type { JournalHeader, JournalRecord } from "../base/records.js";

/** An open journal. */
export class Journal {
  readonly path: string;
  /** The latest header (the config the folder's records now belong to). */
  header: JournalHeader;
  /** Latest record per task key. */
  readonly records: Map<string, JournalRecord>;
  private fd: number;

  private constructor(path: string, fd: number, header: JournalHeader, records: Map<string, JournalRecord>) {
    this.path = path;
    this.fd = fd;
    this.header = header;
    this.records = records;
  }

  /**
   * Opens (or creates with `header`) the journal in `dir`. An existing journal keeps its own header;
   * the caller compares it. A trailing partial line (a kill mid-write) is cut off.
   * @throws FormatError for a corrupt journal (a bad line before the last).
   */
  static open(dir: string, header: JournalHeader): Journal {
    const path = join(dir, JOURNAL_FILE);
    const existing = existsSync(path) ? readJournal(path) : null;
    // Cut a partial last line, then append only ("a": every write goes to the end).
    if (existing) truncateSync(path, existing.validBytes);
    const fd = openSync(path, "a");
    if (existing) {
      const j = new Journal(path, fd, existing.header ?? header, existing.records);
      if (!existing.header) j.appendLine(header);
      return j;
    }
    const j = new Journal(path, fd, header, new Map());
    j.appendLine(header);
    return j;
  }

  /** Writes a new journal holding `header` and `records` (atomically: a kill leaves none or all). */
  static create(dir: string, header: JournalHeader, records: readonly JournalRecord[]): void {
    const lines = [header, ...records].map((v) => JSON.stringify(v));
    writeFileAtomic(join(dir, JOURNAL_FILE), `${lines.join("\n")}\n`);
  }

  private appendLine(value: JournalHeader | JournalRecord): void {
    const line = Buffer.from(`${JSON.stringify(value)}\n`, "utf8");
    if (process.env.RANDATTN_FAIL_JOURNAL_AFTER !== undefined && value.type === "task") {
      // Fault injection for the reliability tests: fail the (k+1)-th task append of this session.
      const left = Number(process.env.RANDATTN_FAIL_JOURNAL_AFTER);
      if (left <= 0) {
        const err = new Error(`EIO: i/o error, write '${this.path}' (injected by RANDATTN_FAIL_JOURNAL_AFTER)`) as NodeJS.ErrnoException;
        err.code = "EIO";
        throw err;
      }
      process.env.RANDATTN_FAIL_JOURNAL_AFTER = String(left - 1);
    }
    let off = 0;
    while (off < line.length) off += writeSync(this.fd, line, off, line.length - off);
    fsyncSync(this.fd);
  }

  /** Records that the folder now holds a grown config (the old records stay valid: same task keys). */
  appendHeader(header: JournalHeader): void {
    this.appendLine(header);
    this.header = header;
  }

  /** Records a finished task durably (write + fsync) before returning. */
  append(record: JournalRecord): void {
    this.appendLine(record);
    this.records.set(record.key, record);
  }

  close(): void {
    if (this.fd >= 0) closeSync(this.fd);
    this.fd = -1;
  }
}

/** The parsed content of a journal file. */
export interface JournalContent {
  header: JournalHeader | null;
  records: Map<string, JournalRecord>;
  /** Bytes up to the end of the last complete line. */
  validBytes: number;
}

/**
 * Reads a journal without opening it for writing (merge, report).
 * @throws FormatError naming the file and line for a corrupt line.
 */
export function readJournal(path: string): JournalContent {
  const buf = readFileSync(path);
  const text = buf.toString("utf8");
  const lastNewline = text.lastIndexOf("\n");
  const complete = lastNewline < 0 ? "" : text.slice(0, lastNewline + 1);
  const validBytes = Buffer.byteLength(complete, "utf8");
  const records = new Map<string, JournalRecord>();
  let header: JournalHeader | null = null;
  const lines = complete.split("\n");
  lines.pop();
  lines.forEach((line, i) => {
    let v: { type?: string };
    try {
      v = JSON.parse(line);
    } catch {
      throw new FormatError(`${path}:${i + 1}`, "a JSON journal line", JSON.stringify(line.slice(0, 60)));
    }
    if (v.type === "header") header = v as JournalHeader;
    else if (v.type === "task" && typeof (v as JournalRecord).key === "string") records.set((v as JournalRecord).key, v as JournalRecord);
    else throw new FormatError(`${path}:${i + 1}`, i === 0 ? "a journal header" : "a task record", JSON.stringify(line.slice(0, 60)));
  });
  return { header, records, validBytes };
}
