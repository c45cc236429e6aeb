import { readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { RandomStream } from "@randattn/core";
import { cli, cliAsync, fileHash, requireBuild, tempDir, writeConfig } from "../helpers.js";

/** Kills (SIGKILL) a sweep at `kills` random instants, resuming each time; returns the kill count. */
export async function killAndResume(
  config: string,
  out: string,
  kills: number,
  seed: number,
  env: Record<string, string>,
): Promise<number> {
  const rng = new RandomStream([seed, "kill-points"]);
  let killed = 0;
  let first = true;
  for (;;) {
    const child = cliAsync([first ? "run" : "resume", config, "--out", out, "--workers", "1", "--progress", "none"], env);
    first = false;
    const exited = new Promise<number | null>((resolve) => child.on("exit", (code) => resolve(code)));
    if (killed < kills) {
      // Uniform in [150, 900) ms: from start-up (before the journal exists) to mid-sweep.
      const delay = 150 + rng.uniform() * 750;
      const timer = setTimeout(() => child.kill("SIGKILL"), delay);
      const code = await exited;
      clearTimeout(timer);
      if (code === null) {
        killed++;
        continue;
      }
      if (code === 0) return killed; // finished before the kill fired
      throw new Error(`unexpected exit ${code}`);
    }
    const code = await exited;
    if (code !== 0) throw new Error(`final resume exited ${code}`);
    return killed;
  }
}

/** A config of slow-ish tiny cells (debug-sleep), so kills land mid-sweep. */
export function killConfig(): Record<string, unknown> {
  return {
    experiment: "killme",
    seed: 3,
    trials: 3,
    problem: { generator: "gaussian", params: { d: 4, dv: 3 } },
    methods: [{ method: "exact" }, { method: "debug-sleep", params: { ms: 25 } }],
    sweep: { "problem.n": [4, 6, 8] },
  };
}

describe("a sweep killed with SIGKILL and resumed ends byte-identical, nothing lost or duplicated", () => {
  it("at 5 random points (the full 25-point campaign: scripts/fault-injection.mjs)", async () => {
    requireBuild();
    const env = { RANDATTN_DEBUG_METHODS: "1" };
    const dir = tempDir();
    const config = writeConfig(dir, killConfig());
    const ref = cli(["run", config, "--out", join(dir, "ref"), "--workers", "1", "--progress", "none"], env);
    expect(ref.status, ref.stderr).toBe(0);
    const killed = await killAndResume(config, join(dir, "k"), 5, 2026, env);
    expect(killed).toBeGreaterThanOrEqual(3);
    expect(fileHash(join(dir, "k", "killme", "results.csv"))).toBe(fileHash(join(dir, "ref", "killme", "results.csv")));
    // Journal: every task recorded exactly once (never repeated after a kill).
    const lines = readFileSync(join(dir, "k", "killme", "journal.jsonl"), "utf8")
      .trim()
      .split("\n")
      .slice(1);
    const keys = lines.map((l) => JSON.parse(l).key);
    expect(new Set(keys).size).toBe(keys.length);
    expect(keys.length).toBe(3 * 2 * 3);
  }, 120_000);
});
