/**
 * `randattn reproduce`: reruns every shipped experiment into a scratch folder and checks that
 * each results.csv has the sha256 recorded in its committed manifest.
 */
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { extname, join } from "node:path";
import { loadConfigFile } from "../config/load.js";
import { expandPlan } from "../plan/expand.js";
import type { Manifest } from "../output/manifest.js";
import { runPlan } from "./runner.js";

/** One experiment's verdict. */
export interface ReproduceVerdict {
  experiment: string;
  config: string;
  status: "match" | "mismatch" | "config-changed" | "no-manifest" | "failed";
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
}

/** Reruns the shipped experiments and compares each results.csv sha256 with its manifest. */
export async function reproduceAll(options: ReproduceOptions): Promise<ReproduceVerdict[]> {
  const log = options.log ?? ((l: string) => process.stderr.write(`${l}\n`));
  const configs = readdirSync(options.configsDir)
    .filter((f) => [".yaml", ".yml", ".json"].includes(extname(f)))
    .sort()
    .map((f) => join(options.configsDir, f));
  const verdicts: ReproduceVerdict[] = [];
  const scratch = mkdtempSync(join(tmpdir(), "randattn-reproduce-"));
  try {
    for (const path of configs) {
      const loaded = loadConfigFile(path);
      const name = loaded.config.experiment;
      if (options.only && !options.only.includes(name)) continue;
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
      const result = await runPlan(plan, {
        outRoot: scratch,
        workers: options.workers ?? 1,
        progress: "none",
        report: false,
        log: () => {},
      });
      const actual = result.manifest?.results_sha256 ?? "";
      const status = result.manifest === null ? "failed" : actual === manifest.results_sha256 ? "match" : "mismatch";
      verdicts.push({ ...base, status, expected: manifest.results_sha256, actual, detail: result.ioError ?? "" });
      log(
        `${status === "match" ? "✓" : "✗"} ${name}: results.csv sha256 ${actual.slice(0, 16) || "(none)"} ${status === "match" ? "=" : "≠"} committed ${manifest.results_sha256.slice(0, 16)}`,
      );
    }
  } finally {
    rmSync(scratch, { recursive: true, force: true });
  }
  return verdicts;
}
