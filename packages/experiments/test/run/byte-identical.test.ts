import { readFileSync } from "node:fs";
import { join } from "node:path";
import { beforeAll, describe, expect, it } from "vitest";
import { cli, cliAsync, fileHash, requireBuild, tempDir, tinyConfig, writeConfig } from "../helpers.js";

/**
 * The tiny sweep plus one method of each sketch family on a tiny MLA problem, so the byte identity
 * also covers seeded sketches and their extra columns (DKM expectation, latent errors).
 */
const sketchConfig = tinyConfig({
  trials: 3,
  problem: { generator: "deepseek-v2-mla", params: { shrink: 64, decay: 0.5 } },
  methods: [
    { method: "exact" },
    { method: "exact-streaming", params: { blockSize: 3 } },
    { method: "row-sampling", params: { samples: 4, scheme: "attention" } },
    { method: "random-features", params: { numFrequencies: 6 } },
    { method: "latent-rsvd", params: { rank: 3, oversampling: 2, powerIterations: 1 } },
  ],
  sweep: { "problem.n": [5, 9] },
});

describe("results.csv is byte-identical across reruns, worker counts and shard counts", () => {
  const dir = tempDir();
  const config = writeConfig(dir, sketchConfig);
  const results = (out: string) => join(dir, out, "tiny", "results.csv");
  let reference = "";

  beforeAll(() => {
    requireBuild();
    const r = cli(["run", config, "--out", join(dir, "a"), "--workers", "1", "--progress", "none"]);
    expect(r.status, r.stderr).toBe(0);
    reference = fileHash(results("a"));
    // The sketch methods ran and filled their extra columns.
    const header = readFileSync(results("a"), "utf8").split("\n")[0];
    expect(header).toContain(
      "floats_stored,cache_floats,dkm_expected_rel_error,feature_count,hmt_bound_rel_spectral_error,latent_rel_error",
    );
    expect(readFileSync(results("a"), "utf8")).not.toContain(",failed,");
  });

  it("a second run, in the main thread (workers 0)", () => {
    const r = cli(["run", config, "--out", join(dir, "b"), "--workers", "0", "--progress", "none"]);
    expect(r.status, r.stderr).toBe(0);
    expect(fileHash(results("b"))).toBe(reference);
  });

  it("two workers", () => {
    const r = cli(["run", config, "--out", join(dir, "c"), "--workers", "2", "--progress", "none"]);
    expect(r.status, r.stderr).toBe(0);
    expect(fileHash(results("c"))).toBe(reference);
  });

  it("three shards (run as concurrent processes, as a job array would) merged", async () => {
    // Shards write to their own folders, so they can run at once (it also keeps the suite fast).
    const codes = await Promise.all(
      [0, 1, 2].map(
        (i) =>
          new Promise<number | null>((done) => {
            const child = cliAsync(["run", config, "--out", join(dir, "d"), "--workers", "0", "--shard", `${i}/3`, "--progress", "none"]);
            child.on("close", done);
          }),
      ),
    );
    expect(codes).toEqual([0, 0, 0]);
    const m = cli(["merge", config, "--out", join(dir, "d")]);
    expect(m.status, m.stderr).toBe(0);
    expect(fileHash(results("d"))).toBe(reference);
    const manifest = JSON.parse(readFileSync(join(dir, "d", "tiny", "manifest.json"), "utf8"));
    expect(manifest.results_sha256).toBe(reference);
    expect(manifest.merged_from.shard_count).toBe(3);
  });
});
