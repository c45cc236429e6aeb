import { spawnSync } from "node:child_process";
import { existsSync, writeFileSync } from "node:fs";
import { hostname } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { EMPTY_LOCK_STALE_MS, FolderLock, LockError } from "@randattn/experiments/internal";
import { catchError, cli, requireBuild, tempDir, tinyConfig, writeConfig } from "../helpers.js";

/** The pid of a process that has exited. */
function deadPid(): number {
  return Number(spawnSync(process.execPath, ["-e", "process.stdout.write(String(process.pid))"], { encoding: "utf8" }).stdout);
}

describe("two processes on one results folder: the second is refused", () => {
  it("a CLI run is refused (exit 3) while another process holds the folder", () => {
    requireBuild();
    const dir = tempDir();
    const config = writeConfig(dir, tinyConfig());
    const lock = FolderLock.acquire(join(dir, "tiny"), "test holder");
    try {
      const r = cli(["run", config, "--out", dir, "--workers", "1", "--progress", "none"]);
      expect(r.status).toBe(3);
      expect(r.stderr).toContain(`refused: ${join(dir, "tiny")} is in use: locked by pid ${process.pid}`);
      expect(r.stderr).toContain("(test holder)");
      expect(existsSync(join(dir, "tiny", "journal.jsonl"))).toBe(false);
    } finally {
      lock.release();
    }
    expect(existsSync(join(dir, "tiny", ".lock"))).toBe(false);
  });

  it("in-process: a second acquire throws LockError naming the owner", () => {
    const dir = tempDir();
    const a = FolderLock.acquire(dir, "first");
    const e = catchError(() => FolderLock.acquire(dir, "second"));
    expect(e).toBeInstanceOf(LockError);
    expect(e.message).toContain("(first)");
    a.release();
    FolderLock.acquire(dir, "third").release();
  });

  // A kill -9 between the lock's O_EXCL create and its write leaves an empty lock whose owner
  // cannot be named: acquire waits for it to turn stale (EMPTY_LOCK_STALE_MS) instead of refusing
  // — before, a resume right after such a kill exited 3 (refused).
  it("an empty lock (its owner killed before writing it) is waited on, then taken over", () => {
    const dir = tempDir();
    writeFileSync(join(dir, ".lock"), "");
    const t0 = Date.now();
    const lock = FolderLock.acquire(dir, "after the crash");
    const waited = Date.now() - t0;
    lock.release();
    expect(waited).toBeGreaterThanOrEqual(EMPTY_LOCK_STALE_MS - 100);
  });

  it("a lock left by a dead process (kill -9) is taken over at once", () => {
    const dir = tempDir();
    const dead = spawnSync(process.execPath, ["-e", "process.stdout.write(String(process.pid))"], { encoding: "utf8" });
    const pid = Number(dead.stdout);
    writeFileSync(join(dir, ".lock"), JSON.stringify({ pid, host: hostname(), token: "old", since: "then", command: "killed" }));
    const lock = FolderLock.acquire(dir, "after the crash");
    lock.release();
  });

  // A kill -9 while breaking a stale lock leaves the breaker (.lock.break) behind: the next acquire
  // must not wait for its age limit (10 s; before, it was refused with "contention on the lock").
  it("a breaker left by a dead process is taken over at once, with its stale lock", () => {
    const dir = tempDir();
    const [p1, p2] = [deadPid(), deadPid()];
    writeFileSync(join(dir, ".lock"), JSON.stringify({ pid: p1, host: hostname(), token: "old", since: "then", command: "killed" }));
    writeFileSync(join(dir, ".lock.break"), JSON.stringify({ pid: p2, host: hostname(), token: "break", since: "then", command: "break" }));
    const lock = FolderLock.acquire(dir, "after the crash"); // the old rule threw "contention on the lock" here
    expect(existsSync(join(dir, ".lock.break"))).toBe(false);
    lock.release();
  });

  it("a breaker held by a live process still blocks (the lock is being broken right now)", () => {
    const dir = tempDir();
    writeFileSync(join(dir, ".lock"), JSON.stringify({ pid: deadPid(), host: hostname(), token: "old", since: "then", command: "killed" }));
    // A live process (this one's parent) as the breaker's owner: another process breaking the lock now.
    writeFileSync(
      join(dir, ".lock.break"),
      JSON.stringify({ pid: process.ppid, host: hostname(), token: "break", since: "now", command: "break" }),
    );
    const e = catchError(() => FolderLock.acquire(dir, "second"));
    expect(e).toBeInstanceOf(LockError);
    expect(e.message).toContain("contention on the lock");
  });
});
