/**
 * The append-only journal of completed tasks: `journal.jsonl` in the results folder.
 *
 * Line 1 is a header (config identity hash, shard, task count); each further line is one finished
 * task's outcome, or a new header when a later run grew the experiment (the last header is the
 * folder's current config). A task line is written with a single write() and fsynced before the task
 * counts as done: the write at once, in order; the fsync asynchronously, one for every line written
 * while the previous was in flight (group commit), with the task's `onDurable` called once it is on
 * disk — the runner counts it done there and waits for {@link Journal.flush} before it writes the
 * outputs. Issue 14: a synchronous fsync per task held the main thread 0.4–0.6 ms per task, and on
 * sweeps of short tasks (kernel-features: 1 920 of ≈ 1 ms) that made the main thread the bottleneck
 * (two workers ran slower than one). A process killed at any instant leaves a prefix of complete
 * lines plus at most one partial line (no final newline), which `openJournal` cuts off. So resume never loses a finished task (its line is on
 * disk) and never repeats one (its key is in the journal).
 */
import { closeSync, existsSync, fsync, fsyncSync, openSync, readFileSync, truncateSync, writeSync } from "node:fs";
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
  /** Callbacks of the lines written since the last fsync began (they become durable with the next). */
  private unsynced: ((error: Error | null) => void)[] = [];
  /** Whether an asynchronous fsync is in flight. */
  private syncing = false;
  /** The first fsync error (every later callback gets it too). */
  private syncError: Error | null = null;
  /** Resolvers of {@link Journal.flush} calls waiting for the in-flight and queued fsyncs. */
  private idle: (() => void)[] = [];
  /** close() was called while an fsync was in flight: close when it ends. */
  private closeWhenIdle = false;

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
      if (!existing.header) j.appendDurably(header);
      return j;
    }
    const j = new Journal(path, fd, header, new Map());
    j.appendDurably(header);
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
  }

  /** A header line, written and fsynced before returning (headers are rare: no group commit). */
  private appendDurably(header: JournalHeader): void {
    this.appendLine(header);
    fsyncSync(this.fd);
  }

  /** Records that the folder now holds a grown config (the old records stay valid: same task keys); durable on return. */
  appendHeader(header: JournalHeader): void {
    this.appendDurably(header);
    this.header = header;
  }

  /**
   * Records a finished task: its line written (in order) before returning, `onDurable` called once an
   * fsync that began after the write has completed (with its error, if it failed). A write error
   * (and the fault injection of the reliability tests) is thrown here, before anything is written.
   */
  append(record: JournalRecord, onDurable: (error: Error | null) => void = () => {}): void {
    this.appendLine(record);
    this.records.set(record.key, record);
    this.unsynced.push(onDurable);
    if (!this.syncing) this.sync();
  }

  /** Starts one fsync covering every line written so far. */
  private sync(): void {
    const batch = this.unsynced;
    this.unsynced = [];
    this.syncing = true;
    fsync(this.fd, (error) => {
      this.syncing = false;
      if (error && !this.syncError) this.syncError = error;
      for (const done of batch) done(this.syncError);
      if (this.unsynced.length > 0 && this.fd >= 0 && !this.closeWhenIdle) this.sync();
      else this.settle();
    });
  }

  /** No fsync in flight: wake flush() callers, finish a deferred close. */
  private settle(): void {
    if (this.syncing) return;
    if (this.closeWhenIdle) {
      this.closeWhenIdle = false;
      this.close(); // syncs what is left, then closes
    }
    if (this.unsynced.length > 0) return;
    for (const wake of this.idle.splice(0)) wake();
  }

  /** Resolves once every line written so far is durable (its callback called); the first fsync error, if any, as `null | Error`. */
  flush(): Promise<Error | null> {
    if (!this.syncing && this.unsynced.length === 0) return Promise.resolve(this.syncError);
    if (!this.syncing) this.sync();
    return new Promise((resolve) => this.idle.push(() => resolve(this.syncError)));
  }

  /** Closes the file (after the fsync in flight, if one is; lines not yet synced are synced first). */
  close(): void {
    if (this.fd < 0) return;
    if (this.syncing) {
      this.closeWhenIdle = true;
      return;
    }
    if (this.unsynced.length > 0) {
      let error: Error | null = null;
      try {
        fsyncSync(this.fd);
      } catch (e) {
        error = e as Error;
      }
      for (const done of this.unsynced.splice(0)) done(error ?? this.syncError);
    }
    closeSync(this.fd);
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
