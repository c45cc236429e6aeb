// A sweep's end-to-end throughput on 1 vs 2 workers, and where the time goes (issue 14):
//   node packages/experiments/bench/throughput.mjs [--configs quickstart,real-perplexity] [--reps 3] [--json]
// Each config runs from scratch into a temporary folder through the CLI (`randattn run`, report
// included), per worker count the median of --reps runs, the two counts alternating. From the run's journal it sums, over the
// tasks: input generation, the exact reference (0 when the previous task's cache served it), the
// method, the error metrics; "start-up, scheduling, I/O" is the wall time not covered by those sums
// spread over the workers (process and worker start-up, the plan, journal/CSV/figure writing).
// Needs the build (`pnpm run build`). Absolute times on a shared machine mean little: compare the
// two worker counts of one run. The default configs are the quickstart and the longest shipped
// experiment (real-perplexity: ≈ 56 s of task time).
import { spawnSync } from "node:child_process";
import { mkdtempSync, readFileSync, readdirSync, rmSync } from "node:fs";
import { cpus, loadavg, tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";

const argv = process.argv.slice(2);
const at = argv.indexOf("--configs");
const configs = (at >= 0 ? argv[at + 1] : "quickstart,real-perplexity").split(",");
const json = argv.includes("--json");
const cli = fileURLToPath(new URL("../dist/cli.js", import.meta.url));
const configDir = fileURLToPath(new URL("../configs/", import.meta.url));
const root = fileURLToPath(new URL("../../../", import.meta.url));
const fmt = (x, digits = 1) => (Number.isFinite(x) ? x.toFixed(digits) : "—");

function runOnce(config, workers) {
  const out = mkdtempSync(join(tmpdir(), "randattn-throughput-"));
  try {
    const t0 = performance.now();
    const r = spawnSync(
      process.execPath,
      [cli, "run", join(configDir, `${config}.yaml`), "--workers", String(workers), "--out", out, "--progress", "none"],
      { cwd: root, encoding: "utf8" },
    );
    const wall = (performance.now() - t0) / 1000;
    if (r.status !== 0)
      throw new Error(`${config} (workers ${workers}) exited ${r.status}: ${(r.stderr || r.stdout).trim().split("\n").pop()}`);
    const folder = readdirSync(out, { withFileTypes: true }).find((e) => e.isDirectory()).name;
    const lines = readFileSync(join(out, folder, "journal.jsonl"), "utf8")
      .trim()
      .split("\n");
    const s = { tasks: 0, generate: 0, reference: 0, method: 0, metrics: 0 };
    for (const line of lines) {
      const v = JSON.parse(line);
      if (v.type !== "task") continue;
      s.tasks++;
      s.reference += (v.referenceMs ?? 0) / 1000;
      s.generate += (v.setupMs - (v.referenceMs ?? 0)) / 1000;
      s.method += v.wallMs / 1000;
      s.metrics += (v.metricsMs ?? 0) / 1000;
    }
    const covered = (s.generate + s.reference + s.method + s.metrics) / workers;
    return { config, workers, wall, ...s, other: Math.max(0, wall - covered) };
  } finally {
    rmSync(out, { recursive: true, force: true });
  }
}

const rows = [];
// --reps R (default 3): the two worker counts alternate R times (1, 2, 1, 2, …) and each keeps its
// median-wall run (with that run's breakdown): one run each, back to back, compared two moments of
// a host whose speed drifts by tens of per cent, on a quickstart of ≈ 4 s mostly start-up.
const ri = argv.indexOf("--reps");
const reps = ri >= 0 ? Number(argv[ri + 1]) : 3;
for (const config of configs) {
  const runs = { 1: [], 2: [] };
  for (let r = 0; r < reps; r++) for (const workers of r % 2 === 0 ? [1, 2] : [2, 1]) runs[workers].push(runOnce(config, workers));
  for (const workers of [1, 2]) {
    const sorted = [...runs[workers]].sort((a, b) => a.wall - b.wall);
    rows.push({ ...sorted[sorted.length >> 1], reps, walls: runs[workers].map((x) => x.wall) });
  }
}
if (json) {
  console.log(JSON.stringify(rows));
} else {
  console.log(
    `## sweep throughput, 1 vs 2 workers (${cpus().length} cores, load ${loadavg()[0].toFixed(1)}); task sums in s, over all workers`,
  );
  const header = ["config", "workers", "tasks", "wall s", "speed-up", "generate", "exact ref.", "method", "metrics", "start-up+I/O (wall)"];
  const body = rows.map((r) => {
    const one = rows.find((x) => x.config === r.config && x.workers === 1);
    return [
      r.config,
      r.workers,
      r.tasks,
      fmt(r.wall),
      `${fmt(one.wall / r.wall, 2)}×`,
      fmt(r.generate),
      fmt(r.reference),
      fmt(r.method),
      fmt(r.metrics),
      fmt(r.other),
    ];
  });
  const all = [header, ...body].map((r) => r.map(String));
  const w = header.map((_, j) => Math.max(...all.map((r) => r[j].length)));
  for (const [i, r] of all.entries()) {
    console.log(r.map((c, j) => c.padStart(w[j])).join("  "));
    if (i === 0) console.log(w.map((x) => "-".repeat(x)).join("  "));
  }
}
