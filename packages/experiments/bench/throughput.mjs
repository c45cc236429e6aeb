// A sweep's end-to-end throughput on 1 vs 2 workers, and where the time goes (issue 14):
//   node packages/experiments/bench/throughput.mjs [--configs quickstart,scaling] [--reps 3] [--json] [--allow-stale]
// Each config runs from scratch into a temporary folder through the CLI (`randattn run`, report
// included), per worker count the median of --reps runs, the two counts alternating. From the run's journal it sums, over the
// tasks: input generation, the exact reference (0 when the previous task's cache served it), the
// method, the error metrics; "start-up, scheduling, I/O" is the wall time not covered by those sums
// spread over the workers (process and worker start-up, the plan, journal/CSV/figure writing).
// On Linux it also reads every thread's CPU time from /proc while the run goes (threadCpu below):
// the main thread, the worker threads, and the threads Node starts with the process — V8's
// platform pool, where its optimizing compiler and concurrent GC run for every isolate — because
// per-task wall time cannot tell a worker that computes from one that waits for a core. And it runs
// two 1-worker copies of the config at once (runPair): what the host itself gives two such jobs.
// Needs the build (`pnpm run build`). Absolute times on a shared machine mean little: compare the
// two worker counts of one run. The default configs (DEFAULT_CONFIGS) are the quickstart and the
// longest shipped experiment on one worker. That was mha-to-mla from stop 24 (≈ 8 s on 2 workers);
// since the sweeps' own speed-ups it is scaling (stop 41, one run of each on one worker: scaling
// 8.2 s, features-attention 7.0, kv-compression 6.7, frontier 6.5, mha-to-mla 4.6 s) — its exact
// references at N = 4096 do not shrink with the method code, so re-measure when that changes.
import { spawn } from "node:child_process";
import { mkdtempSync, readFileSync, readdirSync, rmSync } from "node:fs";
import { cpus, loadavg, tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { currentBundle } from "../dist/platform/bundle.js";

const argv = process.argv.slice(2);
const at = argv.indexOf("--configs");
/** The quickstart and the longest shipped experiment (see the header). */
const DEFAULT_CONFIGS = ["quickstart", "scaling"];
const configs = at >= 0 ? argv[at + 1].split(",") : DEFAULT_CONFIGS;
const json = argv.includes("--json");
const cli = fileURLToPath(new URL("../dist/cli.js", import.meta.url));
const configDir = fileURLToPath(new URL("../configs/", import.meta.url));
const root = fileURLToPath(new URL("../../../", import.meta.url));
const fmt = (x, digits = 1) => (Number.isFinite(x) ? x.toFixed(digits) : "—");

/** Clock ticks per second of /proc's CPU times (sysconf(_SC_CLK_TCK): 100 on Linux's usual builds). */
const CLK_TCK = 100;

/**
 * Every thread of process `pid` now: tid → { cpu: user + system ticks, start: ticks after boot }
 * (/proc/PID/task/TID/stat fields 14, 15 and 22); an empty map where /proc is missing.
 */
function threadStats(pid) {
  const out = new Map();
  let tids = [];
  try {
    tids = readdirSync(`/proc/${pid}/task`);
  } catch {
    return out;
  }
  for (const tid of tids) {
    try {
      const stat = readFileSync(`/proc/${pid}/task/${tid}/stat`, "utf8");
      // The fields after the parenthesised name start at field 3 (state).
      const f = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
      out.set(Number(tid), { cpu: Number(f[11]) + Number(f[12]), start: Number(f[19]) });
    } catch {} // the thread ended between the listing and the read
  }
  return out;
}

/**
 * CPU seconds per kind of thread, from the last sample of each: the main thread (tid = pid); the
 * worker threads — the `workers` busiest of the threads started over 30 ms after the first thread
 * Node started beside the main one (Node starts V8's platform pool and libuv's within a few ms of
 * each other while it boots; the pool spawns the workers once the CLI has loaded, ≈ 0.1–0.4 s
 * later — a fixed 0.2 s after the process missed them on a fast start); and the rest: V8's platform
 * pool, where every isolate's optimizing compiler (TurboFan: ≈ 80 % of it in a quickstart, `perf`,
 * stop 38) and concurrent GC run, and libuv's pool.
 * A thread's CPU after its last sample (≤ one poll interval) is missed. Null without /proc.
 */
function threadCpu(pid, seen, workers) {
  const main = seen.get(pid);
  if (!main) return null;
  const others = [...seen].filter(([tid]) => tid !== pid);
  const boot = Math.min(...others.map(([, t]) => t.start));
  const late = others.filter(([, t]) => t.start - boot > 0.03 * CLK_TCK).sort((a, b) => b[1].cpu - a[1].cpu);
  const workerTids = new Set(late.slice(0, workers).map(([tid]) => tid));
  let worker = 0;
  let helper = 0;
  for (const [tid, t] of seen) {
    if (tid === pid) continue;
    if (workerTids.has(tid)) worker += t.cpu;
    else helper += t.cpu;
  }
  return { main: main.cpu / CLK_TCK, workers: worker / CLK_TCK, helpers: helper / CLK_TCK };
}

async function runOnce(config, workers) {
  const out = mkdtempSync(join(tmpdir(), "randattn-throughput-"));
  try {
    const t0 = performance.now();
    const child = spawn(
      process.execPath,
      [cli, "run", join(configDir, `${config}.yaml`), "--workers", String(workers), "--out", out, "--progress", "none"],
      { cwd: root, stdio: ["ignore", "ignore", "pipe"] },
    );
    let stderr = "";
    child.stderr.on("data", (d) => {
      stderr += d;
    });
    // Sample the threads every 20 ms (≈ 15 small reads: well under 1 % of a core), keeping each
    // thread's last reading.
    const seen = new Map();
    const sample = () => {
      for (const [tid, t] of threadStats(child.pid)) seen.set(tid, t);
    };
    sample();
    const poll = setInterval(sample, 20);
    const status = await new Promise((resolve) => child.on("exit", (code) => resolve(code)));
    clearInterval(poll);
    const wall = (performance.now() - t0) / 1000;
    if (status !== 0) throw new Error(`${config} (workers ${workers}) exited ${status}: ${stderr.trim().split("\n").pop()}`);
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
    return { config, workers, wall, ...s, other: Math.max(0, wall - covered), cpu: threadCpu(child.pid, seen, workers) };
  } finally {
    rmSync(out, { recursive: true, force: true });
  }
}

/**
 * Two 1-worker runs of the whole config at once, as two processes: what this host gives two
 * independent copies of the job — each with its own start-up, JIT warm-up and V8 helper threads,
 * nothing shared. Their throughput against one run alone, 2 · wall(1 worker) ÷ wall(both), is the
 * reference for a 2-worker run, which warms two isolates as the copies do: a 2-worker speed-up far
 * below it would point at the pool, one near it at the host.
 */
async function runPair(config) {
  const t0 = performance.now();
  const both = await Promise.all([runOnce(config, 1), runOnce(config, 1)]);
  return { config, workers: "pair", tasks: both[0].tasks + both[1].tasks, wall: (performance.now() - t0) / 1000 };
}

// Time the sweep users run: the CLI and the worker load esbuild bundles while those are current
// (platform/bundle.ts) and fall back to the ≈ 600 modules otherwise — correct, but each worker then
// starts ≈ 0.2 s later and runs colder code. A `tsc -b` without `scripts/bundle.mjs` leaves them
// stale; timing that silently would compare the fallback with earlier figures (stop 38 did, once).
const stale = [
  ["the CLI bundle", "../dist/", "cli.bundle.json"],
  ["the sweep worker's bundle", "../dist/run/", "worker.bundle.json"],
].filter(([, dir, record]) => currentBundle(new URL(dir, import.meta.url), record) === null);
if (stale.length > 0 && !argv.includes("--allow-stale")) {
  console.error(
    `throughput.mjs: ${stale.map(([what]) => what).join(" and ")} ${stale.length > 1 ? "are" : "is"} not current (sources changed since the last bundle): run \`npx -y pnpm@12.4.2 run build\`, or pass --allow-stale to time the module fallback`,
  );
  process.exit(2);
}

const rows = [];
// --reps R (default 3): 1 worker, 2 workers and the pair of 1-worker copies (runPair) rotate R times
// (1, 2, pair, 2, pair, 1, …) and each keeps its median-wall run (with that run's breakdown): one run
// each, back to back, compared three moments of a host whose speed drifts by tens of per cent.
const ri = argv.indexOf("--reps");
const reps = ri >= 0 ? Number(argv[ri + 1]) : 3;
for (const config of configs) {
  const runs = { 1: [], 2: [], pair: [] };
  const order = [1, 2, "pair"];
  for (let r = 0; r < reps; r++) {
    for (let i = 0; i < order.length; i++) {
      const workers = order[(i + r) % order.length];
      runs[workers].push(workers === "pair" ? await runPair(config) : await runOnce(config, workers));
    }
  }
  for (const workers of [1, 2, "pair"]) {
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
  const header = [
    "config",
    "workers",
    "tasks",
    "wall s",
    "speed-up",
    "generate",
    "exact ref.",
    "method",
    "metrics",
    "start-up+I/O (wall)",
    "CPU s: main",
    "workers",
    "V8/libuv pool",
  ];
  const body = rows.map((r) => {
    const one = rows.find((x) => x.config === r.config && x.workers === 1);
    if (r.workers === "pair") {
      return [r.config, "2 × 1 (copies)", r.tasks, fmt(r.wall), `${fmt((2 * one.wall) / r.wall, 2)}×`, ...Array(8).fill("")];
    }
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
      fmt(r.cpu?.main),
      fmt(r.cpu?.workers),
      fmt(r.cpu?.helpers),
    ];
  });
  console.log(
    "2 × 1 (copies): two 1-worker runs of the whole config at once (two processes); its speed-up is their throughput, 2 × wall(1 worker) ÷ wall: what this host gives two such jobs at once",
  );
  const all = [header, ...body].map((r) => r.map(String));
  const w = header.map((_, j) => Math.max(...all.map((r) => r[j].length)));
  for (const [i, r] of all.entries()) {
    console.log(r.map((c, j) => c.padStart(w[j])).join("  "));
    if (i === 0) console.log(w.map((x) => "-".repeat(x)).join("  "));
  }
}
