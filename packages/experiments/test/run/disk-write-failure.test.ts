import { readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { cli, fileHash, requireBuild, tempDir, tinyConfig, writeConfig } from "../helpers.js";

describe("a failing disk write is reported and loses no completed cell", () => {
  it("journal append fails after 3 tasks: exit 4, 3 tasks kept, resume completes to the same bytes", () => {
    requireBuild();
    const dir = tempDir();
    const config = writeConfig(dir, tinyConfig());
    const ref = cli(["run", config, "--out", join(dir, "ref"), "--workers", "1", "--progress", "none"]);
    expect(ref.status, ref.stderr).toBe(0);
    const out = join(dir, "x");
    const r = cli(["run", config, "--out", out, "--workers", "1", "--progress", "none"], { RANDATTN_FAIL_JOURNAL_AFTER: "3" });
    expect(r.status).toBe(4);
    expect(r.stderr).toContain("could not record a finished task");
    expect(r.stderr).toContain("EIO");
    expect(r.stderr).toContain("randattn resume");
    const lines = readFileSync(join(out, "tiny", "journal.jsonl"), "utf8")
      .trim()
      .split("\n");
    expect(lines).toHaveLength(1 + 3);
    const again = cli(["resume", config, "--out", out, "--workers", "1", "--progress", "none"]);
    expect(again.status, again.stderr).toBe(0);
    expect(again.stderr).toContain("3 skipped");
    expect(fileHash(join(out, "tiny", "results.csv"))).toBe(fileHash(join(dir, "ref", "tiny", "results.csv")));
  });

  it("results.csv write fails: exit 4, previous file untouched, `report` regenerates it", () => {
    const dir = tempDir();
    const config = writeConfig(dir, tinyConfig());
    const r = cli(["run", config, "--out", dir, "--workers", "1", "--progress", "none"], { RANDATTN_FAIL_WRITE: "results.csv" });
    expect(r.status).toBe(4);
    expect(r.stderr).toContain("could not write the outputs");
    expect(() => readFileSync(join(dir, "tiny", "results.csv"))).toThrow();
    const rep = cli(["report", config, "--out", dir]);
    expect(rep.status, rep.stderr).toBe(0);
    expect(readFileSync(join(dir, "tiny", "results.csv"), "utf8").split("\n")).toHaveLength(1 + 8 + 1);
  });
});
