import { describe, expect, it } from "vitest";
import { buildProgram } from "../../src/cli/program.js";
import { cli, requireBuild } from "../helpers.js";

describe("every CLI command has --help", () => {
  it.each([
    ["run", "--shard <i/n>"],
    ["resume", "--workers <n>"],
    ["merge", "--from <dirs...>"],
    ["validate", "--max-cells <n>"],
    ["report", "redraw results.csv"],
    ["plan", "--workers <n>"],
    ["reproduce", "--configs <dir>"],
    ["list", "--json"],
  ])("%s --help", (cmd, fragment) => {
    const sub = buildProgram().commands.find((c) => c.name() === cmd)!;
    const help = sub.helpInformation();
    expect(help).toContain(`Usage: randattn ${cmd}`);
    expect(help).toContain(fragment);
  });

  it("the built binary: --help exits 0, list shows the registry, validate rejects a bad config with exit 2", () => {
    requireBuild();
    const h = cli(["run", "--help"]);
    expect(h.status).toBe(0);
    expect(h.stdout).toContain("Usage: randattn run");
    const r = cli(["list"]);
    expect(r.stdout).toContain("exact-streaming");
    expect(r.stdout).toContain("deepseek-v2-mla");
    const v = cli(["validate", "/nonexistent.yaml"]);
    expect(v.status).toBe(2);
    expect(v.stderr).toContain("config: expected an existing config file");
  });
});
