/**
 * An exclusive lock on a results folder, so two processes never write the same results.
 *
 * The lock is a file `.lock` created with O_EXCL (atomic "create if absent") holding the owner's
 * pid, host and a random token; the owner touches it every HEARTBEAT_MS. It is stale — and may be
 * taken over — when its owner is on this host and no longer alive (a kill -9 is detected at once),
 * or when it has not been touched for STALE_MS (an owner on another host of a shared file system
 * that died). Taking over is itself serialized by a second O_EXCL file, so two processes that
 * find the same stale lock cannot both win. (proper-lockfile was not used: it can only detect a
 * dead owner by mtime, which would make every resume after kill -9 wait ≥ 5 s.)
 */
import { randomBytes } from "node:crypto";
import { closeSync, mkdirSync, openSync, readFileSync, rmSync, statSync, utimesSync, writeSync } from "node:fs";
import { hostname } from "node:os";
import { join } from "node:path";
import { RandAttnError } from "@randattn/core";

/** Lock file name inside the folder. */
export const LOCK_FILE = ".lock";
/** How often the owner refreshes the lock's mtime. */
export const HEARTBEAT_MS = 5_000;
/** A lock untouched for this long is stale even if its owner cannot be checked. */
export const STALE_MS = 60_000;
/**
 * A lock with no readable content (created, its write not yet done — or never done: the owner was
 * killed between the O_EXCL create and the write) is stale this long after it was created.
 */
export const EMPTY_LOCK_STALE_MS = 2_000;
/** A breaker (`.lock.break`, held while a stale lock is removed) whose owner cannot be checked is stale after this long. */
const BREAKER_STALE_MS = 10_000;

/** Blocks this thread for `ms` milliseconds (acquire is synchronous). */
function sleepMs(ms: number): void {
  Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, ms);
}

/** The folder is locked by another live process. */
export class LockError extends RandAttnError {}

interface LockContent {
  pid: number;
  host: string;
  token: string;
  since: string;
  command: string;
}

function pidAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (e) {
    return (e as NodeJS.ErrnoException).code === "EPERM";
  }
}

function readLock(path: string): { content: LockContent | null; mtimeMs: number } | null {
  try {
    const st = statSync(path);
    let content: LockContent | null = null;
    try {
      content = JSON.parse(readFileSync(path, "utf8"));
    } catch {
      content = null; // being written right now, or garbage: judged by age alone
    }
    return { content, mtimeMs: st.mtimeMs };
  } catch {
    return null;
  }
}

/** Whether a lock (or a breaker, with `maxAgeMs` its own limit) is abandoned: too old, or its owner on this host is gone. */
function isStale(lock: { content: LockContent | null; mtimeMs: number }, maxAgeMs = STALE_MS): boolean {
  if (Date.now() - lock.mtimeMs > maxAgeMs) return true;
  const c = lock.content;
  if (!c) return Date.now() - lock.mtimeMs > EMPTY_LOCK_STALE_MS;
  return c.host === hostname() && c.pid !== process.pid && !pidAlive(c.pid);
}

function tryCreate(path: string, content: LockContent): boolean {
  let fd: number;
  try {
    fd = openSync(path, "wx");
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === "EEXIST") return false;
    throw e;
  }
  try {
    writeSync(fd, JSON.stringify(content));
  } finally {
    closeSync(fd);
  }
  return true;
}

/** A held lock. */
export class FolderLock {
  readonly dir: string;
  readonly path: string;
  private readonly token: string;
  private timer: NodeJS.Timeout | null;

  private constructor(dir: string, path: string, token: string) {
    this.dir = dir;
    this.path = path;
    this.token = token;
    this.timer = setInterval(() => {
      try {
        const now = new Date();
        utimesSync(this.path, now, now);
      } catch {
        // The next acquire by someone else will judge staleness; nothing to do here.
      }
    }, HEARTBEAT_MS);
    this.timer.unref();
  }

  /**
   * Takes the lock on `dir` (created if needed).
   * @param command what this process is doing, shown to a process that is refused.
   * @throws LockError naming the owner when another live process holds it.
   */
  static acquire(dir: string, command: string): FolderLock {
    mkdirSync(dir, { recursive: true });
    const path = join(dir, LOCK_FILE);
    const token = randomBytes(12).toString("hex");
    const content: LockContent = { pid: process.pid, host: hostname(), token, since: new Date().toISOString(), command };
    // An unreadable lock is waited on until its owner has written it (then judged as any lock) or it
    // turns stale: refusing at once made a resume right after a kill -9 that landed between the
    // create and the write fail with "locked by another process" (seen in resume-after-kill.test.ts).
    const waitUntil = Date.now() + EMPTY_LOCK_STALE_MS + 1_000;
    for (let attempt = 0; attempt < 3; ) {
      if (tryCreate(path, content)) return new FolderLock(dir, path, token);
      const existing = readLock(path);
      if (!existing) {
        attempt++; // released in between: try again
        continue;
      }
      if (!isStale(existing)) {
        const c = existing.content;
        if (!c && Date.now() < waitUntil) {
          sleepMs(50);
          continue;
        }
        throw new LockError(
          dir,
          "a results folder no other process is using",
          c ? `locked by pid ${c.pid} on ${c.host} since ${c.since} (${c.command})` : "locked by another process",
          `${dir} is in use: locked by ${c ? `pid ${c.pid} on ${c.host} since ${c.since} (${c.command})` : "another process"}. ` +
            `Wait for it to finish, or if it is gone (another host), remove ${path}.`,
        );
      }
      breakStale(path, existing);
      attempt++;
    }
    throw new LockError(dir, "a lock that could be taken", "contention on the lock (retry)");
  }

  /** Releases the lock if this process still owns it. */
  release(): void {
    if (this.timer) clearInterval(this.timer);
    this.timer = null;
    const current = readLock(this.path);
    if (current?.content?.token === this.token) rmSync(this.path, { force: true });
  }
}

function breakStale(path: string, seen: { content: LockContent | null; mtimeMs: number }): void {
  const breaker = `${path}.break`;
  const b = readLock(breaker);
  // A breaker left by a process killed while breaking is itself stale: at once when it names a dead
  // process on this host, else after a few seconds. (Before, only the age counted: a resume right
  // after a kill -9 that landed while breaking a stale lock was refused for 10 s — exit 3, seen in
  // resume-after-kill.test.ts under CI load.) Removing a dead owner's breaker is safe even if another
  // process breaks the same lock at once: the lock is only removed if it is still the one judged stale.
  if (b && isStale(b, BREAKER_STALE_MS)) rmSync(breaker, { force: true });
  if (!tryCreate(breaker, { pid: process.pid, host: hostname(), token: "break", since: new Date().toISOString(), command: "break" }))
    return;
  try {
    const again = readLock(path);
    // Only remove the very lock judged stale (same token), never one taken meanwhile.
    if (again && again.content?.token === seen.content?.token && isStale(again)) rmSync(path, { force: true });
  } finally {
    rmSync(breaker, { force: true });
  }
}
