/**
 * Prebuilt esbuild bundles (scripts/bundle.mjs, run by the root `pnpm run build`): the CLI (cli.ts),
 * the sweep worker (run/pool.ts) and the config expression parser (config/expressions.ts) each load as one file,
 * far faster than the modules they were built from (issue 14). A bundle is used only while it is
 * current; otherwise the caller loads the modules, so a bundle can cost speed, never correctness.
 */
import { builtinModule } from "./builtin.js";

/** What scripts/bundle.mjs writes beside a bundle: each input's size and modification time. */
interface BundleRecord {
  bundle: string;
  inputs: Record<string, { bytes: number; mtimeMs: number }>;
}

/**
 * The bundle named by the record `dir`/`record` when every file it was built from still has the
 * size and modification time recorded there, else null: a missing, partial or outdated bundle (a
 * later `tsc -b` alone, an edited or upgraded dependency, a copied tree, an installed package —
 * the tarball leaves bundles out) only costs the speed, never runs stale code. One stat per input
 * (the CLI's ≈ 420, the worker's ≈ 190, the parser's 88: a few ms).
 * @param dir the folder of the bundle and its record (a file: URL ending in `/`).
 * @param record the record's file name, e.g. `"worker.bundle.json"`.
 */
export function currentBundle(dir: URL, record: string): URL | null {
  try {
    // builtin.ts, not platform/node.ts: that imports @randattn/core, and the CLI's entry (cli.ts)
    // must load nothing heavy before it picks a bundle.
    const fs = builtinModule<typeof import("node:fs")>("node:fs");
    if (!fs) return null; // a browser or Web Worker
    const meta = JSON.parse(fs.readFileSync(new URL(record, dir), "utf8")) as BundleRecord;
    const entries = Object.entries(meta.inputs ?? {});
    if (typeof meta.bundle !== "string" || entries.length === 0) return null;
    for (const [path, want] of entries) {
      const s = fs.statSync(new URL(path, dir), { throwIfNoEntry: false });
      if (s === undefined || s.size !== want.bytes || s.mtimeMs !== want.mtimeMs) return null;
    }
    const bundle = new URL(meta.bundle, dir);
    return fs.statSync(bundle, { throwIfNoEntry: false })?.isFile() ? bundle : null;
  } catch {
    return null; // no bundle (a tsc-only build, an installed package, no file system) or an unreadable record
  }
}
