/**
 * manifest.json: what produced a results folder — the canonical config and its hash, the code
 * (git commit + dirty flag, package versions, Node), the machine, the seed, the counts and the
 * sha256 of every output file. `randattn reproduce` checks results.csv against `results_sha256`.
 */
import { execFile, execFileSync } from "node:child_process";
import { readFileSync } from "node:fs";
import { createRequire } from "node:module";
import { arch, cpus, platform, totalmem } from "node:os";
import { dirname } from "node:path";
import { fileURLToPath } from "node:url";
import type { Plan } from "../plan/expand.js";
import type { Shard } from "../plan/shard.js";

/** Version tag of the manifest format. */
export const MANIFEST_SCHEMA = "randattn-manifest/2";

/** The parsed manifest (fields used by merge and reproduce). */
export interface Manifest {
  schema: string;
  experiment: string;
  /** sha256 of the config's identity (the config without presentation keys, plus data-file hashes). */
  config_sha256: string;
  /** The identity config (what a grown run compares against, to name changed keys). */
  identity?: unknown;
  /** The whole config as run, presentation included. */
  config: unknown;
  /** Command-line overrides applied to the config file. */
  overrides?: string[];
  root_seed: number;
  trials: number;
  cell_count: number;
  task_count: number;
  shard: { index: number; count: number } | null;
  complete: boolean;
  status: { ok: number; failed: number };
  results_sha256: string;
  files: Record<string, { sha256: string; bytes: number }>;
  git: GitInfo | null;
  versions: Record<string, string | null>;
  machine: { platform: string; arch: string; cpus: number; cpu_model: string; total_memory_bytes: number };
  created_at: string;
}

/** The folder of this module: the code that runs (the package, wherever the config lives). */
export const CODE_DIR = dirname(fileURLToPath(import.meta.url));

/** The git facts a manifest records: the commit and whether a tracked file differs from it. */
export interface GitInfo {
  commit: string;
  dirty: boolean;
}

/**
 * One `git status` gives both facts: `--branch` heads porcelain v2 with `# branch.oid <commit>`
 * ("(initial)" before the first commit), and every other line is a tracked file that differs from
 * it (untracked files are not asked for), anywhere in the repository but `results/`. One process,
 * not two: starting a child process costs Node's main thread 8–20 ms of its own (issue 14).
 */
const STATUS_ARGS = ["status", "--porcelain=v2", "--branch", "--untracked-files=no", "--", ":(top)", ":(top,exclude)results"];

/** The git facts in {@link STATUS_ARGS}' output, or null where there is no commit. */
function parseStatus(out: string): GitInfo | null {
  let commit: string | null = null;
  let dirty = false;
  for (const line of out.split("\n")) {
    if (line.startsWith("# branch.oid ")) commit = line.slice("# branch.oid ".length).trim();
    else if (line !== "" && !line.startsWith("#")) dirty = true;
  }
  return commit === null || !/^[0-9a-f]{40,64}$/.test(commit) ? null : { commit, dirty };
}

/**
 * Git commit and dirty flag of the repository holding `dir` (default: the code that runs, not the
 * config's folder), or null outside git. Dirty means a tracked file differs from the commit outside
 * `results/` — the outputs being written are not code, so a run from a clean commit says
 * `dirty: false` even while it writes its results.
 */
export function gitInfo(dir: string = CODE_DIR): GitInfo | null {
  try {
    return parseStatus(
      execFileSync("git", STATUS_ARGS, { cwd: dir, encoding: "utf8", timeout: 5000, stdio: ["ignore", "pipe", "ignore"] }),
    );
  } catch {
    return null;
  }
}

/**
 * {@link gitInfo} without blocking: `git` runs as a child process while the caller goes on, and the
 * promise never rejects (null outside git, as gitInfo). Why: run synchronously when the manifest is
 * written, git was ≈ 50 ms of the main thread after the last task — serial time of every sweep (issue
 * 14); the runner asks for it before its workers start and awaits it when it writes the manifest.
 */
export function gitInfoAsync(dir: string = CODE_DIR): Promise<GitInfo | null> {
  return new Promise((resolve) => {
    try {
      const child = execFile("git", STATUS_ARGS, { cwd: dir, encoding: "utf8", timeout: 5000 }, (error, stdout) =>
        resolve(error ? null : parseStatus(stdout)),
      );
      child.stdin?.end();
    } catch {
      resolve(null);
    }
  });
}

function packageVersion(name: string): string | null {
  try {
    const require = createRequire(import.meta.url);
    const path =
      name === "@randattn/experiments" ? new URL("../../package.json", import.meta.url) : require.resolve(`${name}/package.json`);
    return (JSON.parse(readFileSync(path, "utf8")) as { version?: string }).version ?? null;
  } catch {
    return null;
  }
}

/** Versions of the three packages, Node and V8 (V8's math library determines the last bits of exp/log). */
export function versions(): Record<string, string | null> {
  return {
    "@randattn/experiments": packageVersion("@randattn/experiments"),
    "@randattn/core": packageVersion("@randattn/core"),
    "@randattn/sketch": packageVersion("@randattn/sketch"),
    node: process.versions.node,
    v8: process.versions.v8,
  };
}

/** Machine facts (no host name: manifests are committed). */
export function machine(): Manifest["machine"] {
  const c = cpus();
  return { platform: platform(), arch: arch(), cpus: c.length, cpu_model: c[0]?.model.trim() ?? "unknown", total_memory_bytes: totalmem() };
}

/** Builds a manifest object. */
export function buildManifest(
  plan: Plan,
  info: {
    shard: Shard | null;
    taskCount: number;
    complete: boolean;
    ok: number;
    failed: number;
    files: Record<string, { sha256: string; bytes: number }>;
    /** The git facts when the caller asked for them already ({@link gitInfoAsync}); else asked now. */
    git?: GitInfo | null;
    extra?: Record<string, unknown>;
  },
): Manifest & Record<string, unknown> {
  const { loaded } = plan;
  return {
    schema: MANIFEST_SCHEMA,
    experiment: loaded.config.experiment,
    description: loaded.config.description ?? "",
    config_sha256: loaded.hash,
    identity: JSON.parse(loaded.identity),
    config: JSON.parse(loaded.canonical),
    overrides: [...loaded.overrides],
    root_seed: loaded.config.seed,
    trials: loaded.config.trials,
    cell_count: plan.cells.length,
    task_count: info.taskCount,
    shard: info.shard ? { index: info.shard.index, count: info.shard.count } : null,
    complete: info.complete,
    status: { ok: info.ok, failed: info.failed },
    results_sha256: info.files["results.csv"]?.sha256 ?? "",
    files: info.files,
    git: info.git !== undefined ? info.git : gitInfo(),
    versions: versions(),
    machine: machine(),
    created_at: new Date().toISOString(),
    ...(info.extra ?? {}),
  };
}
