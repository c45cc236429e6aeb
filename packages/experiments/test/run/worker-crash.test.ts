import { readFileSync } from "node:fs";
import { join } from "node:path";
import { parse } from "csv-parse/sync";
import { describe, expect, it } from "vitest";
import { cli, requireBuild, tempDir, writeConfig } from "../helpers.js";

describe("a worker that crashes mid-cell is reported; the other cells complete", () => {
  it("records the crashed task as failed with a clear error, keeps the rest, exits 1", () => {
    requireBuild();
    const dir = tempDir();
    const config = writeConfig(dir, {
      experiment: "crash",
      seed: 1,
      trials: 2,
      problem: { generator: "gaussian", params: { n: 6, d: 3, dv: 2 } },
      methods: [{ method: "exact" }, { method: "debug-crash", params: { onTrial: 1 } }],
    });
    const r = cli(["run", config, "--out", dir, "--workers", "2", "--progress", "none"], { RANDATTN_DEBUG_METHODS: "1" });
    expect(r.status).toBe(1);
    expect(r.stderr).toContain("1 failed task(s)");
    expect(r.stderr).toContain("WorkerCrash: the worker thread running this cell exited with code 70");
    const rows = parse(readFileSync(join(dir, "crash", "results.csv"), "utf8"), { columns: true }) as Record<string, string>[];
    expect(rows.map((x) => [x.method_label, x.trial, x.status])).toEqual([
      ["exact", "0", "ok"],
      ["exact", "1", "ok"],
      ["debug-crash", "0", "ok"],
      ["debug-crash", "1", "failed"],
    ]);
    expect(rows[3].error).toBe("WorkerCrash: the worker thread running this cell exited with code 70");
    expect(rows[3].rel_frobenius_error).toBe("");
  });
});
