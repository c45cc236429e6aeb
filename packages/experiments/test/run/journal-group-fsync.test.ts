import { mkdtempSync, readFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import type { JournalHeader, JournalRecord } from "../../src/base/records.js";
import { JOURNAL_FILE, Journal, readJournal } from "../../src/run/journal.js";

// The journal's group commit (issue 14): a task's line is written at once and in order, its callback
// runs once an fsync begun after the write has completed, flush() resolves only when every line is
// durable, and close() during an fsync waits for it. (kill -9 and disk-full behaviour: the
// resume-after-kill and disk-write-failure tests.)
const header: JournalHeader = { type: "header", version: 2, experiment: "t", configHash: "h", shard: null, taskCount: 50 };
const record = (i: number) => ({ type: "task", key: `k${i}`, status: "ok", session: "s" }) as unknown as JournalRecord;

describe("Journal: written in order, counted when durable", () => {
  it("50 appends: lines on file at once and in order; callbacks in order, each after its write; flush waits for all", async () => {
    const dir = mkdtempSync(join(tmpdir(), "randattn-journal-"));
    const j = Journal.open(dir, header);
    const done: number[] = [];
    for (let i = 0; i < 50; i++) {
      j.append(record(i), (error) => {
        expect(error).toBeNull();
        done.push(i);
      });
      // Written before append returns (a kill now would keep it), whether or not it is synced yet.
      expect(readJournal(join(dir, JOURNAL_FILE)).records.has(`k${i}`)).toBe(true);
    }
    expect(done.length).toBeLessThan(50); // the fsyncs are asynchronous: not all durable yet
    expect(await j.flush()).toBeNull();
    expect(done).toEqual(Array.from({ length: 50 }, (_, i) => i));
    j.close();
    const lines = readFileSync(join(dir, JOURNAL_FILE), "utf8").trim().split("\n");
    expect(lines.length).toBe(51);
    expect(lines.slice(1).map((l) => JSON.parse(l).key)).toEqual(Array.from({ length: 50 }, (_, i) => `k${i}`));
  });

  it("close() while an fsync is in flight closes after it, and the pending callbacks still run", async () => {
    const dir = mkdtempSync(join(tmpdir(), "randattn-journal-"));
    const j = Journal.open(dir, header);
    let durable = 0;
    for (let i = 0; i < 5; i++) j.append(record(i), () => durable++);
    j.close(); // an fsync is in flight: deferred
    await j.flush();
    expect(durable).toBe(5);
    expect(readJournal(join(dir, JOURNAL_FILE)).records.size).toBe(5);
  });
});
