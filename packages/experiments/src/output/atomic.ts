/**
 * Atomic file writes: the content goes to a temporary file in the same folder, is fsynced, then
 * renamed over the target (rename is atomic on POSIX within one file system), and the folder is
 * fsynced. A reader sees the old file or the new one, never half of one; a failed write leaves
 * the old file in place and removes the temporary.
 */
import { closeSync, fsyncSync, mkdirSync, openSync, renameSync, rmSync, writeSync } from "node:fs";
import { basename, dirname, join } from "node:path";
import { FormatError } from "@randattn/core";

/** Fault injection for the reliability tests: RANDATTN_FAIL_WRITE=<file name> makes writes of that file fail. */
function injectedFailure(path: string): void {
  const target = process.env.RANDATTN_FAIL_WRITE;
  if (target && basename(path) === target) {
    const err = new Error(`EIO: i/o error, write '${path}' (injected by RANDATTN_FAIL_WRITE)`) as NodeJS.ErrnoException;
    err.code = "EIO";
    throw err;
  }
}

/**
 * Writes `content` to `path` atomically (temp + fsync + rename + folder fsync).
 * @throws FormatError naming the file when the write fails (the previous file is untouched).
 */
export function writeFileAtomic(path: string, content: string | Uint8Array): void {
  const dir = dirname(path);
  mkdirSync(dir, { recursive: true });
  const tmp = join(dir, `.${basename(path)}.${process.pid}.${Date.now().toString(36)}.tmp`);
  try {
    injectedFailure(path);
    const fd = openSync(tmp, "wx");
    try {
      const buf = typeof content === "string" ? Buffer.from(content, "utf8") : content;
      let off = 0;
      while (off < buf.length) off += writeSync(fd, buf, off, buf.length - off);
      fsyncSync(fd);
    } finally {
      closeSync(fd);
    }
    renameSync(tmp, path);
    syncDir(dir);
  } catch (e) {
    rmSync(tmp, { force: true });
    const err = e as NodeJS.ErrnoException;
    throw new FormatError(path, "a writable file", `${err.code ?? "error"}: ${err.message}`);
  }
}

/** fsync a directory so a rename in it is durable (ignored where the platform cannot). */
export function syncDir(dir: string): void {
  let fd: number | undefined;
  try {
    fd = openSync(dir, "r");
    fsyncSync(fd);
  } catch {
    // Some platforms (Windows) cannot open or fsync a directory; the rename is still atomic.
  } finally {
    if (fd !== undefined) closeSync(fd);
  }
}
