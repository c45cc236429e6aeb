// The manifest's git facts — one `git status --porcelain=v2 --branch` read by gitInfo, or by
// gitInfoAsync, which the runner starts before its workers — against what each test repository is
// known to hold: its commit from `git rev-parse HEAD`, dirty exactly when a tracked file outside
// results/ differs (in the work tree or staged), null outside git and before the first commit.
import { execFileSync } from "node:child_process";
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { expandPlan, gitInfo, gitInfoAsync, loadConfigObject, runPlan } from "@randattn/experiments/internal";
import { tempDir as helperTempDir, tinyConfig } from "../helpers.js";

const dirs: string[] = [];
const tempDir = () => {
  const d = mkdtempSync(join(tmpdir(), "randattn-git-"));
  dirs.push(d);
  return d;
};
afterAll(() => {
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

const git = (cwd: string, ...args: string[]) =>
  execFileSync("git", ["-c", "user.name=t", "-c", "user.email=t@example.com", ...args], { cwd, stdio: "ignore" });

describe("gitInfoAsync", () => {
  it("outside git: null, as gitInfo", async () => {
    const d = tempDir();
    expect(gitInfo(d)).toBeNull();
    expect(await gitInfoAsync(d)).toBeNull();
  });

  it("a repository: the same commit and dirty flag as gitInfo, clean, dirty, and dirty only in results/", async () => {
    const d = tempDir();
    git(d, "init", "-q");
    writeFileSync(join(d, "code.ts"), "1\n");
    mkdirSync(join(d, "results"));
    writeFileSync(join(d, "results", "r.csv"), "a\n");
    git(d, "add", ".");
    git(d, "commit", "-q", "-m", "c");
    const head = execFileSync("git", ["rev-parse", "HEAD"], { cwd: d, encoding: "utf8" }).trim();
    const clean = await gitInfoAsync(d);
    expect(clean).toEqual({ commit: head, dirty: false });
    expect(clean).toEqual(gitInfo(d));
    writeFileSync(join(d, "results", "r.csv"), "b\n"); // outputs are not code
    expect(await gitInfoAsync(d)).toEqual({ commit: head, dirty: false });
    writeFileSync(join(d, "code.ts"), "2\n");
    const dirty = await gitInfoAsync(d);
    expect(dirty).toEqual({ commit: head, dirty: true });
    expect(dirty).toEqual(gitInfo(d));
  });

  it("before the first commit: null; a staged change is dirty; a detached HEAD gives its commit", async () => {
    const d = tempDir();
    git(d, "init", "-q");
    writeFileSync(join(d, "code.ts"), "1\n");
    git(d, "add", ".");
    expect(gitInfo(d)).toBeNull();
    expect(await gitInfoAsync(d)).toBeNull();
    git(d, "commit", "-q", "-m", "c1");
    writeFileSync(join(d, "code.ts"), "2\n");
    git(d, "add", "code.ts");
    const first = execFileSync("git", ["rev-parse", "HEAD"], { cwd: d, encoding: "utf8" }).trim();
    expect(gitInfo(d)).toEqual({ commit: first, dirty: true });
    expect(await gitInfoAsync(d)).toEqual({ commit: first, dirty: true });
    git(d, "commit", "-q", "-m", "c2");
    git(d, "checkout", "-q", "--detach", first);
    expect(gitInfo(d)).toEqual({ commit: first, dirty: false });
    expect(await gitInfoAsync(d)).toEqual({ commit: first, dirty: false });
  });

  it("the code that runs (the default folder): the same facts as gitInfo", async () => {
    expect(await gitInfoAsync()).toEqual(gitInfo());
  });

  it("a sweep's manifest (the runner asks before its workers start, awaits at the end) carries gitInfo's facts, also when nothing was left to run", async () => {
    const plan = expandPlan(loadConfigObject(tinyConfig(), "/tmp", "tiny.yaml"));
    const options = { outRoot: helperTempDir(), workers: 0, progress: "none", report: false, log: () => {} } as const;
    const r = await runPlan(plan, options);
    expect(r.manifest).not.toBeNull();
    expect(r.manifest!.git).toEqual(gitInfo());
    // Again, every task finished: nothing runs, and the rewritten manifest still carries the facts.
    const again = await runPlan(plan, options);
    expect(again.manifest).not.toBeNull();
    expect(again.manifest!.git).toEqual(gitInfo());
  });
});
