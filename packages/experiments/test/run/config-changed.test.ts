import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { cli, requireBuild, tempDir, tinyConfig, writeConfig } from "../helpers.js";

describe("resume refuses when the config changed", () => {
  it("exits 3 naming both config hashes; --restart starts over", () => {
    requireBuild();
    const dir = tempDir();
    const config = writeConfig(dir, tinyConfig());
    const r = cli(["run", config, "--out", dir, "--workers", "1", "--progress", "none"], { RANDATTN_FAIL_JOURNAL_AFTER: "2" });
    expect(r.status).toBe(4);
    writeConfig(dir, tinyConfig({ trials: 3 }));
    const again = cli(["resume", config, "--out", dir, "--workers", "1", "--progress", "none"]);
    expect(again.status).toBe(3);
    expect(again.stderr).toMatch(/holds results of a different run \(config sha256 [0-9a-f]{12}…, not [0-9a-f]{12}…\); refusing to resume/);
    const run = cli(["run", config, "--out", dir, "--workers", "1", "--progress", "none"]);
    expect(run.status).toBe(3);
    const restart = cli(["run", config, "--out", dir, "--workers", "1", "--progress", "none", "--restart"]);
    expect(restart.status, restart.stderr).toBe(0);
    expect(restart.stderr).toContain("12/12 ok");
  });

  it("run refuses an unfinished run of the same config and points to resume", () => {
    const dir = tempDir();
    const config = writeConfig(dir, tinyConfig());
    cli(["run", config, "--out", join(dir), "--workers", "1", "--progress", "none"], { RANDATTN_FAIL_JOURNAL_AFTER: "2" });
    const r = cli(["run", config, "--out", dir, "--workers", "1", "--progress", "none"]);
    expect(r.status).toBe(3);
    expect(r.stderr).toContain("continue it with `randattn resume`");
  });
});
