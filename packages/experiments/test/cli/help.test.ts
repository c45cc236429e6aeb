import { describe, expect, it } from "vitest";
import { cli, requireBuild } from "../helpers.js";

describe("every CLI command has --help", () => {
  it.each([
    ["run", "--shard <i/n>"],
    ["resume", "--workers <n>"],
    ["merge", "--from <dirs...>"],
    ["validate", "--max-cells <n>"],
    ["report", "rewrite results.csv"],
    ["reproduce", "--configs <dir>"],
    ["list", "--json"],
  ])("%s --help", (cmd, fragment) => {
    requireBuild();
    const r = cli([cmd, "--help"]);
    expect(r.status).toBe(0);
    expect(r.stdout).toContain(`Usage: randattn ${cmd}`);
    expect(r.stdout).toContain(fragment);
  });

  it("list shows the registered methods and problems; validate rejects a bad config with exit 2", () => {
    const r = cli(["list"]);
    expect(r.stdout).toContain("exact-streaming");
    expect(r.stdout).toContain("deepseek-v2-mla");
    const v = cli(["validate", "/nonexistent.yaml"]);
    expect(v.status).toBe(2);
    expect(v.stderr).toContain("config: expected an existing config file");
  });
});
