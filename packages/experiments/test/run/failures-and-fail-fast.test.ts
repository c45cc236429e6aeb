import { readFileSync } from "node:fs";
import { join } from "node:path";
import { parse } from "csv-parse/sync";
import { describe, expect, it } from "vitest";
import { cli, requireBuild, tempDir, writeConfig } from "../helpers.js";

const config = (dir: string) =>
  writeConfig(dir, {
    experiment: "fails",
    seed: 1,
    trials: 3,
    problem: { generator: "gaussian", params: { n: 5, d: 3, dv: 2 } },
    methods: [{ method: "debug-fail", params: { onTrial: 0 } }, { method: "exact" }],
  });
const env = { RANDATTN_DEBUG_METHODS: "1" };

describe("failing cells are recorded without stopping the others", () => {
  it("records status and error per task, summarizes, exits 1", () => {
    requireBuild();
    const dir = tempDir();
    const r = cli(["run", config(dir), "--out", dir, "--workers", "1", "--progress", "none"], env);
    expect(r.status).toBe(1);
    expect(r.stderr).toContain("5/6 ok, 1 failed");
    const rows = parse(readFileSync(join(dir, "fails", "results.csv"), "utf8"), { columns: true }) as Record<string, string>[];
    expect(rows.filter((x) => x.status === "failed").map((x) => [x.method_label, x.trial, x.error])).toEqual([
      ["debug-fail", "0", "NumericalError: debug-fail: expected no failure, got an injected failure"],
    ]);
    const summary = readFileSync(join(dir, "fails", "summary.csv"), "utf8");
    expect(summary).toMatch(/debug-fail,0,rel_frobenius_error,2,1,/);
  });

  it("--fail-fast stops at the first failure, leaves the run resumable", () => {
    const dir = tempDir();
    const r = cli(["run", config(dir), "--out", dir, "--workers", "1", "--progress", "none", "--fail-fast"], env);
    expect(r.status).toBe(1);
    expect(r.stderr).toContain("incomplete");
    const lines = readFileSync(join(dir, "fails", "journal.jsonl"), "utf8")
      .trim()
      .split("\n");
    expect(lines.length).toBeLessThan(1 + 6);
  });
});
