/** Shared helpers of the experiments tests: temp folders, configs, the built CLI. */
import { type SpawnSyncReturns, spawn, spawnSync } from "node:child_process";
import { createHash } from "node:crypto";
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { stringify } from "yaml";

/** The built CLI (`pnpm test` builds before vitest). */
export const CLI = fileURLToPath(new URL("../dist/cli.js", import.meta.url));

/** Throws a clear message when dist/ is missing. */
export function requireBuild(): void {
  if (!existsSync(CLI)) throw new Error(`${CLI} missing: build first (npx tsc -b packages/experiments)`);
}

const made: string[] = [];
process.once("exit", () => {
  for (const d of made) rmSync(d, { recursive: true, force: true });
});

/** A fresh temporary folder (removed when the test process exits). */
export function tempDir(prefix = "randattn-test-"): string {
  const d = mkdtempSync(join(tmpdir(), prefix));
  made.push(d);
  return d;
}

/** Writes a config object as YAML into `dir` and returns its path. */
export function writeConfig(dir: string, config: unknown, name = "config.yaml"): string {
  const path = join(dir, name);
  writeFileSync(path, name.endsWith(".json") ? JSON.stringify(config) : stringify(config));
  return path;
}

/** A tiny sweep: 2 sizes × 2 methods × 2 trials = 8 tasks, well under a second of compute. */
export function tinyConfig(extra: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    experiment: "tiny",
    seed: 11,
    trials: 2,
    problem: { generator: "gaussian", params: { d: 4, dv: 3 } },
    methods: [{ method: "exact" }, { method: "exact-streaming", params: { blockSize: 3 } }],
    sweep: { "problem.n": [5, 9] },
    ...extra,
  };
}

/** Runs the CLI synchronously. */
export function cli(args: string[], env: Record<string, string> = {}): SpawnSyncReturns<string> {
  return spawnSync(process.execPath, [CLI, ...args], { encoding: "utf8", env: { ...process.env, ...env }, timeout: 60_000 });
}

/** Starts the CLI without waiting. */
export function cliAsync(args: string[], env: Record<string, string> = {}) {
  return spawn(process.execPath, [CLI, ...args], { env: { ...process.env, ...env }, stdio: ["ignore", "pipe", "pipe"] });
}

/** sha256 of a file. */
export function fileHash(path: string): string {
  return createHash("sha256").update(readFileSync(path)).digest("hex");
}

/** Expects a typed error whose message contains every fragment; returns it. */
export function catchError(
  f: () => unknown,
): Error & { argument?: string; expected?: string; actual?: string; issues?: { path: string; expected: string; actual: string }[] } {
  try {
    f();
  } catch (e) {
    return e as Error;
  }
  throw new Error("expected an error, got none");
}
