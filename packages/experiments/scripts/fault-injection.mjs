#!/usr/bin/env node
/**
 * Fault-injection campaign (issue 6): runs a sweep, kills it with SIGKILL at N random instants
 * (default 25), resuming after each kill, and checks that the final results.csv is byte-identical
 * to an uninterrupted run and that the journal holds every task exactly once. Prints the counts.
 *
 *   node packages/experiments/scripts/fault-injection.mjs [kills=25] [seed=2026]
 *
 * Needs the built CLI (npx tsc -b packages/experiments). The test suite runs a 5-kill version
 * (test/run/resume-after-kill.test.ts); this script is the full campaign.
 */
import { spawn, spawnSync } from "node:child_process";
import { createHash } from "node:crypto";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";

const kills = Number(process.argv[2] ?? 25);
const seed = Number(process.argv[3] ?? 2026);
const cli = fileURLToPath(new URL("../dist/cli.js", import.meta.url));
const env = { ...process.env, RANDATTN_DEBUG_METHODS: "1" };
const dir = mkdtempSync(join(tmpdir(), "randattn-faults-"));
const config = join(dir, "killme.json");
writeFileSync(
  config,
  JSON.stringify({
    experiment: "killme",
    seed: 3,
    trials: 4,
    problem: { generator: "gaussian", params: { d: 4, dv: 3 } },
    methods: [{ method: "exact" }, { method: "debug-sleep", params: { ms: 15 } }, { method: "exact-streaming", params: { blockSize: 2 } }],
    sweep: { "problem.n": [4, 6, 8, 10] },
  }),
);
const hash = (p) => createHash("sha256").update(readFileSync(p)).digest("hex");
// xorshift32 for the kill instants (reproducible campaign).
let state = seed >>> 0 || 1;
const uniform = () => {
  state ^= state << 13;
  state >>>= 0;
  state ^= state >>> 17;
  state ^= state << 5;
  state >>>= 0;
  return state / 2 ** 32;
};

const ref = spawnSync(process.execPath, [cli, "run", config, "--out", join(dir, "ref"), "--workers", "2", "--progress", "none"], {
  env,
  encoding: "utf8",
});
if (ref.status !== 0) throw new Error(`reference run failed: ${ref.stderr}`);
// Campaigns: each kills one sweep folder at random instants (resuming after each kill) until it
// completes, then checks it; campaigns repeat in fresh folders until `kills` kills have landed.
let killed = 0;
let sessions = 0;
let campaigns = 0;
let failures = 0;
let records = 0;
let duplicates = 0;
const t0 = Date.now();
while (killed < kills) {
  const out = join(dir, `k${campaigns++}`);
  let first = true;
  for (;;) {
    const child = spawn(process.execPath, [cli, first ? "run" : "resume", config, "--out", out, "--workers", "2", "--progress", "none"], {
      env,
      stdio: "ignore",
    });
    first = false;
    sessions++;
    const exited = new Promise((resolve) => child.on("exit", (code) => resolve(code)));
    const timer = killed < kills ? setTimeout(() => child.kill("SIGKILL"), 100 + uniform() * 1400) : undefined;
    const code = await exited;
    clearTimeout(timer);
    if (code === null) {
      killed++;
      continue;
    }
    if (code !== 0) throw new Error(`session ${sessions} exited ${code}`);
    break;
  }
  const lines = readFileSync(join(out, "killme", "journal.jsonl"), "utf8")
    .trim()
    .split("\n")
    .slice(1);
  const keys = lines.map((l) => JSON.parse(l).key);
  records += keys.length;
  duplicates += keys.length - new Set(keys).size;
  if (hash(join(out, "killme", "results.csv")) !== hash(join(dir, "ref", "killme", "results.csv")) || keys.length !== 48) failures++;
}
console.log(
  JSON.stringify({
    kills: killed,
    sessions,
    campaigns,
    tasksPerCampaign: 48,
    journalRecords: records,
    duplicates,
    campaignsNotByteIdentical: failures,
    seconds: (Date.now() - t0) / 1000,
  }),
);
rmSync(dir, { recursive: true, force: true });
process.exit(failures === 0 && duplicates === 0 ? 0 : 1);
