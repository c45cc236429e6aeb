import { readFileSync } from "node:fs";
import { join } from "node:path";
import { beforeAll, describe, expect, it } from "vitest";
import { cli, fileHash, requireBuild, tempDir, tinyConfig, writeConfig } from "../helpers.js";

describe("results.csv is byte-identical across reruns, worker counts and shard counts", () => {
  const dir = tempDir();
  const config = writeConfig(dir, tinyConfig({ trials: 3 }));
  const results = (out: string) => join(dir, out, "tiny", "results.csv");
  let reference = "";

  beforeAll(() => {
    requireBuild();
    const r = cli(["run", config, "--out", join(dir, "a"), "--workers", "1", "--progress", "none"]);
    expect(r.status, r.stderr).toBe(0);
    reference = fileHash(results("a"));
  });

  it("two runs with one worker", () => {
    const r = cli(["run", config, "--out", join(dir, "b"), "--workers", "1", "--progress", "none"]);
    expect(r.status, r.stderr).toBe(0);
    expect(fileHash(results("b"))).toBe(reference);
  });

  it("two workers", () => {
    const r = cli(["run", config, "--out", join(dir, "c"), "--workers", "2", "--progress", "none"]);
    expect(r.status, r.stderr).toBe(0);
    expect(fileHash(results("c"))).toBe(reference);
  });

  it("three shards merged", () => {
    for (let i = 0; i < 3; i++) {
      const r = cli(["run", config, "--out", join(dir, "d"), "--workers", "1", "--shard", `${i}/3`, "--progress", "none"]);
      expect(r.status, r.stderr).toBe(0);
    }
    const m = cli(["merge", config, "--out", join(dir, "d")]);
    expect(m.status, m.stderr).toBe(0);
    expect(fileHash(results("d"))).toBe(reference);
    const manifest = JSON.parse(readFileSync(join(dir, "d", "tiny", "manifest.json"), "utf8"));
    expect(manifest.results_sha256).toBe(reference);
    expect(manifest.merged_from.shard_count).toBe(3);
  });
});
