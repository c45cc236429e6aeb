import { cpSync, mkdirSync, readFileSync, symlinkSync } from "node:fs";
import { spawnSync } from "node:child_process";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import { commandName } from "../../src/cli/program.js";
import { cli, requireBuild, tempDir, tinyConfig, writeConfig } from "../helpers.js";

const PKG = fileURLToPath(new URL("../..", import.meta.url));

describe("the randattn command line", () => {
  it("--version prints the package version; bad arguments exit 2", () => {
    requireBuild();
    const v = cli(["--version"]);
    expect(v.status).toBe(0);
    expect(v.stdout.trim()).toBe(JSON.parse(readFileSync(join(PKG, "package.json"), "utf8")).version);
    expect(cli(["run", "--no-such-option", "x.yaml"]).status).toBe(2);
    expect(cli(["run"]).status).toBe(2);
    expect(cli(["frobnicate"]).status).toBe(2);
    const only = cli(["reproduce", "--only", "no-such-experiment"]);
    expect(only.status).toBe(2);
    expect(only.stderr).toContain('got "no-such-experiment"');
  });

  it("runs from a folder whose path contains a space (the entry-point check decodes the file URL)", () => {
    requireBuild();
    const root = join(tempDir(), "a dir with spaces", "experiments");
    mkdirSync(root, { recursive: true });
    for (const p of ["dist", "configs", "package.json"]) cpSync(join(PKG, p), join(root, p), { recursive: true });
    symlinkSync(join(PKG, "node_modules"), join(root, "node_modules"));
    const help = spawnSync(process.execPath, [join(root, "dist/cli.js"), "--help"], { encoding: "utf8" });
    expect(help.status).toBe(0);
    expect(help.stdout).toContain("Usage: randattn");
    const list = spawnSync(process.execPath, [join(root, "dist/cli.js"), "list", "methods"], { encoding: "utf8" });
    expect(list.stdout).toContain("exact-streaming");
  });

  it("plan / --dry-run: cells, tasks, reuse and flops; run prints the result table and the report path", () => {
    requireBuild();
    const dir = tempDir();
    const cfg = writeConfig(dir, tinyConfig());
    const out = join(dir, "out");
    const plan = cli(["plan", cfg, "--out", out, "trials=3"]);
    expect(plan.status).toBe(0);
    expect(plan.stdout).toContain("4 cells × 3 trial(s) = 12 tasks; 0 already in");
    // exact at N = 5, d = 4, dv = 3: 2·25·4 + 5·25 + 2·25·3 + 15 = 490 flops per task.
    expect(plan.stdout).toMatch(/exact\s+2 cell\(s\)\s+problem\.n ∈ \{5, 9\}\s+flops\/task 490–/);
    const run = cli(["run", cfg, "--out", out, "-w", "0", "trials=3"]);
    expect(run.status).toBe(0);
    expect(run.stderr).toMatch(/method\s+sequence length N\s+relative Frobenius error: mean ± 95% CI/);
    expect(run.stderr).toContain(`report: ${join(out, "tiny", "report.html")}`);
    const manifest = JSON.parse(readFileSync(join(out, "tiny/manifest.json"), "utf8"));
    expect(manifest.overrides).toEqual(["trials=3"]);
    expect(manifest.git === null || typeof manifest.git.dirty === "boolean").toBe(true);
    const again = cli(["run", cfg, "--out", out, "-w", "0", "trials=4", "--dry-run"]);
    expect(again.stdout).toContain("16 tasks; 12 already in");
    expect(again.stdout).toMatch(/estimated time: \d/);
  });

  it("reproduce on two workers: every experiment through one pool — --update writes them, the check matches each", () => {
    requireBuild();
    const dir = tempDir();
    const configs = join(dir, "configs");
    const results = join(dir, "results");
    mkdirSync(configs);
    writeConfig(configs, tinyConfig({ experiment: "tiny-a" }), "a.yaml");
    writeConfig(configs, tinyConfig({ experiment: "tiny-b", seed: 12, methods: [{ method: "exact" }] }), "b.yaml");
    const update = cli(["reproduce", "--configs", configs, "--results", results, "--workers", "2", "--update"]);
    expect(update.status, update.stderr).toBe(0);
    expect(update.stderr).toContain("2/2 experiments written");
    const check = cli(["reproduce", "--configs", configs, "--results", results, "--workers", "2"]);
    expect(check.status, check.stderr).toBe(0);
    expect(check.stderr).toMatch(/✓ tiny-a: results\.csv sha256 \w{16} = committed/);
    expect(check.stderr).toMatch(/✓ tiny-b: results\.csv sha256 \w{16} = committed/);
    expect(check.stderr).toContain("2/2 experiments reproduced byte for byte");
  });

  it("suggested commands name the CLI as the user typed it", () => {
    expect(commandName({ npm_config_user_agent: "pnpm/12.4.2 npm/? node/v20" }, "/x/cli.js")).toBe("pnpm exec randattn");
    expect(commandName({ npm_config_user_agent: "npm/10.8.2 node/v20" }, "/x/cli.js")).toBe("npx randattn");
    expect(commandName({}, "/usr/local/bin/randattn")).toBe("randattn");
  });
});
