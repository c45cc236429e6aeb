/**
 * `randattn reproduce`: reruns every shipped experiment into a scratch folder and checks that
 * each results.csv has the sha256 recorded in its committed manifest.
 */
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { extname, join } from "node:path";
import { ConfigError } from "../config/errors.js";
import { loadConfigFile } from "../config/load.js";
import { expandPlan } from "../plan/expand.js";
import type { Manifest } from "../output/manifest.js";
import { WorkerPool } from "./pool.js";
import { runPlan } from "./runner.js";

/** One experiment's verdict. */
export interface ReproduceVerdict {
  experiment: string;
  config: string;
  status: "match" | "mismatch" | "config-changed" | "no-manifest" | "failed" | "updated";
  expected: string;
  actual: string;
  detail: string;
}

/** Options of `reproduceAll`. */
export interface ReproduceOptions {
  /** Folder of shipped configs. */
  configsDir: string;
  /** Folder of committed results (with <experiment>/manifest.json). */
  resultsRoot: string;
  /** Worker threads. @default 1 */
  workers?: number;
  /** Only these experiment names. @default all */
  only?: readonly string[];
  log?: (line: string) => void;
  /** Most cells per plan. */
  maxCells?: number;
  /**
   * Rerun each experiment into `<resultsRoot>/<experiment>/` (discarding what is there) and write
   * its outputs and manifest, instead of checking: how the shipped results are regenerated.
   * @default false
   */
  update?: boolean;
}

/** Reruns the shipped experiments and compares each results.csv sha256 with its manifest. */
export async function reproduceAll(options: ReproduceOptions): Promise<ReproduceVerdict[]> {
  const log = options.log ?? ((l: string) => process.stderr.write(`${l}\n`));
  const configs = readdirSync(options.configsDir)
    .filter((f) => [".yaml", ".yml", ".json"].includes(extname(f)))
    .sort()
    .map((f) => join(options.configsDir, f));
  const loadedAll = configs.map((path) => ({ path, loaded: loadConfigFile(path) }));
  if (options.only) {
    const names = loadedAll.map((c) => c.loaded.config.experiment);
    const unknown = options.only.filter((n) => !names.includes(n));
    if (unknown.length > 0)
      throw new ConfigError("--only", [
        {
          path: "--only",
          expected: `names of shipped experiments in ${options.configsDir}: ${names.join(", ")}`,
          actual: unknown.map((n) => JSON.stringify(n)).join(", "),
        },
      ]);
  }
  const verdicts: ReproduceVerdict[] = [];
  const scratch = mkdtempSync(join(tmpdir(), "randattn-reproduce-"));
  // One pool for every experiment (runPlan's `keepPool`): each experiment's workers start warm —
  // already loaded, the shared code (drivers, metrics, the runner's task loop) already optimized —
  // where a pool per experiment started and compiled all of it fifteen times.
  const workers = options.workers ?? 1;
  const pool = workers > 0 ? new WorkerPool(workers).start() : undefined;
  const shared = { pool, keepPool: true };
  try {
    for (const { path, loaded } of loadedAll) {
      const name = loaded.config.experiment;
      if (options.only && !options.only.includes(name)) continue;
      if (options.update) {
        const before = existsSync(join(options.resultsRoot, name, "manifest.json"))
          ? (JSON.parse(readFileSync(join(options.resultsRoot, name, "manifest.json"), "utf8")) as Manifest).results_sha256
          : "";
        const t0 = Date.now();
        const result = await runPlan(expandPlan(loaded, { maxCells: options.maxCells }), {
          outRoot: options.resultsRoot,
          workers,
          ...shared,
          progress: "none",
          restart: true,
          log: () => {},
        });
        const actual = result.manifest?.results_sha256 ?? "";
        const ok = result.manifest !== null && result.failed === 0;
        verdicts.push({
          experiment: name,
          config: path,
          status: ok ? "updated" : "failed",
          expected: before,
          actual,
          detail: result.ioError ?? "",
        });
        log(
          `${ok ? "✓" : "✗"} ${name}: written in ${((Date.now() - t0) / 1000).toFixed(1)} s, results.csv sha256 ${actual.slice(0, 16)} (${actual === before ? "unchanged" : `was ${before.slice(0, 16) || "none"}`})${result.failed ? `, ${result.failed} failed task(s)` : ""}`,
        );
        if (result.interrupted) break;
        continue;
      }
      const manifestPath = join(options.resultsRoot, name, "manifest.json");
      const base = { experiment: name, config: path };
      if (!existsSync(manifestPath)) {
        verdicts.push({ ...base, status: "no-manifest", expected: "", actual: "", detail: `no ${manifestPath}` });
        log(`✗ ${name}: no committed manifest (${manifestPath})`);
        continue;
      }
      const manifest = JSON.parse(readFileSync(manifestPath, "utf8")) as Manifest;
      if (manifest.config_sha256 !== loaded.hash) {
        verdicts.push({
          ...base,
          status: "config-changed",
          expected: manifest.config_sha256,
          actual: loaded.hash,
          detail: "the config differs from the one the committed results came from",
        });
        log(
          `✗ ${name}: config changed since the committed results (sha256 ${loaded.hash.slice(0, 12)}… ≠ ${manifest.config_sha256.slice(0, 12)}…)`,
        );
        continue;
      }
      const plan = expandPlan(loaded, { maxCells: options.maxCells });
      const t0 = Date.now();
      const result = await runPlan(plan, {
        outRoot: scratch,
        workers,
        ...shared,
        progress: "none",
        report: false,
        log: () => {},
      });
      const actual = result.manifest?.results_sha256 ?? "";
      const status = result.manifest === null ? "failed" : actual === manifest.results_sha256 ? "match" : "mismatch";
      verdicts.push({ ...base, status, expected: manifest.results_sha256, actual, detail: result.ioError ?? "" });
      log(
        `${status === "match" ? "✓" : "✗"} ${name}: results.csv sha256 ${actual.slice(0, 16) || "(none)"} ${status === "match" ? "=" : "≠"} committed ${manifest.results_sha256.slice(0, 16)} (${((Date.now() - t0) / 1000).toFixed(1)} s)`,
      );
      // Ctrl-C stopped this experiment and closed the pool: stop here, not one ✗ per experiment left.
      if (result.interrupted) break;
    }
  } finally {
    await pool?.destroy();
    rmSync(scratch, { recursive: true, force: true });
  }
  return verdicts;
}
