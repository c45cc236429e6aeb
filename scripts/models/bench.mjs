// `pnpm bench:models` (issue 10 benchmark, issue 14 target "prefill and per-token decode of the
// shipped models ≥ torch 1.13 on one CPU thread, same run, same checkpoint").
//
// For every checkpoint folder (default: the two shipped models under models/), in ONE run:
//  - RandAttn (this process: one JavaScript thread, WebAssembly SIMD kernels), float64 (default) and
//    the float32 option (`precision: "float32"`: QKᵀ/PV and every projection, FFN and the LM head
//    as float32 GEMMs; norms, RoPE, softmax's max/exp/sum and the residual stream stay float64);
//  - torch 1.13 on one thread (Debian's /usr/bin/python3, scripts/models/bench_torch.py, the model
//    code of arch.py on the same model.safetensors), float32 (the checkpoint's dtype) and float64.
// Measured: prefill of N = 128 and 512 tokens of models/heldout.txt (a forward from empty caches),
// and per-token cached decoding (64 one-token steps after a 64-token prompt; teacher-forced with
// the held-out ids so both sides do identical work; RandAttn decodes MLA in the absorbed form, as
// `generate` does). The two sides alternate run by run: torch is a server in a child process
// (bench_torch.py) timing one call per request, so each RandAttn run has a torch run seconds from
// it, and each ratio is the median of the --reps per-pair ratios (the range is printed too). Why
// pairs: this host's throughput drifts by tens of per cent over tens of seconds with no steal time
// the guest can see (the same attention call took 240–390 ms within one process, and the SIMD
// probe 15.4–19.7 GFLOP/s), so two medians taken a minute apart — RandAttn's, then torch's, the form
// before stop 20 — compared the drift as much as the code. Times are the median of --reps runs
// after the warm-up (--warmup untimed runs on each side).
// Ratio = torch time ÷ RandAttn time (> 1: RandAttn is faster); like with like: RandAttn f64 vs
// torch f64, RandAttn f32 option vs torch f32. Also checked: last-token logits of RandAttn f64
// equal torch f64's (max relative difference printed), so both ran the same checkpoint.
//
//   node scripts/models/bench.mjs [--reps 11] [--warmup 2] [--warm-cpu 3] [--json FILE] [--quick] [--no-install]
//        [--arithmetic mul-add|fma] [--malloc retain|default] [--no-pin] [DIR ...]
// Writes the table as JSON to FILE (default .tmp/bench-models.json, git-ignored). --quick: 3 reps,
// 1 warm-up. --arithmetic fma: RandAttn's GEMM kernels with relaxed SIMD's fused multiply-add
// (`setKernelArithmetic("fma")`, opt-in: last bits machine-dependent; V8's flag set on Node 20), as
// torch's BLAS uses FMA; the default is the bit-reproducible mul+add. Without torch on
// /usr/bin/python3 the RandAttn columns are printed and torch is "n/a". --malloc (default retain):
// glibc's malloc keeps freed memory for both sides, or "default" leaves it as configured (below).
// --no-pin: the two sides run wherever the scheduler puts them (default: each pair on one core, below).
// On a shared machine absolute times mean little: only the ratios measured side by side count.
import { execFileSync, spawnSync } from "node:child_process";
import { mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { cpus, loadavg } from "node:os";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { coreChooser } from "../../packages/core/bench/affinity.mjs";
import { hostCpu } from "../../packages/core/bench/host.mjs";
import { startLineServer } from "../../packages/core/bench/line-server.mjs";
import { matmul, randomMatrix, setKernelArithmetic } from "../../packages/core/dist/index.js";
import { enableRelaxedSimd, loadPretrained } from "../../packages/core/dist/node/index.js";

const root = resolve(dirname(fileURLToPath(import.meta.url)), "../..");
const argv = process.argv.slice(2);
const flag = (name, fallback) => {
  const i = argv.indexOf(name);
  if (i < 0) return fallback;
  const v = argv[i + 1];
  argv.splice(i, 2);
  return v;
};
const quick = argv.includes("--quick");
if (quick) argv.splice(argv.indexOf("--quick"), 1);
const noInstall = argv.includes("--no-install");
if (noInstall) argv.splice(argv.indexOf("--no-install"), 1);
const noPin = argv.includes("--no-pin"); // see coreChooser below
if (noPin) argv.splice(argv.indexOf("--no-pin"), 1);
const reps = Number(flag("--reps", quick ? 3 : 11));
const warmup = Number(flag("--warmup", quick ? 1 : 2));
const WARM_CPU_S = Number(flag("--warm-cpu", 3)); // see warmUp
const jsonPath = resolve(flag("--json", join(root, ".tmp", "bench-models.json")));
const arithmetic = flag("--arithmetic", "mul-add");
const malloc = flag("--malloc", "retain");

// glibc's malloc under both sides (issue 14, stop 29). A forward returns fresh ArrayBuffers (the
// N × vocab logits: 1 MiB at N = 128 in f64) that V8 frees in batches at its GCs, every ≈ 0.2 s here;
// glibc then returns the freed top of its heap to the kernel (trim) or serves the next 1 MiB by mmap,
// so each forward first-touches ≈ 200–257 pages again — 5–15 µs each on this Firecracker VM — and
// a process falls, after a few seconds or not at all, into a phase of 2× slower forwards (DeepSeek
// f32 N = 128: 2.8–3.3 ms with 0 faults, then 5.5–7.2 ms with ≈ 200 faults per forward, measured
// every 0.5 s). torch frees each tensor when its last reference goes (the same chunk comes back next
// time), so it never pays this. "retain" raises glibc's trim and mmap thresholds (GLIBC_TUNABLES:
// set together — either alone still faulted 200–257 pages per forward) so freed memory stays in the
// process: 0 faults, 2.8–2.9 ms throughout, three 20-s runs. Both sides run under it (torch's server
// inherits the environment); "default" runs glibc as configured. A setting of the process, read
// at its start: the bench re-executes itself with it.
const MALLOC_RETAIN = "glibc.malloc.trim_threshold=536870912:glibc.malloc.mmap_threshold=33554432";
if (malloc !== "retain" && malloc !== "default") {
  console.error(`--malloc: expected "retain" or "default", got ${JSON.stringify(malloc)}`);
  process.exit(2);
}
const wantTunables = malloc === "retain" ? MALLOC_RETAIN : undefined;
if (process.env.GLIBC_TUNABLES !== wantTunables && process.env.RANDATTN_BENCH_MALLOC === undefined) {
  const env = { ...process.env, RANDATTN_BENCH_MALLOC: malloc };
  if (wantTunables) env.GLIBC_TUNABLES = wantTunables;
  else delete env.GLIBC_TUNABLES;
  const r = spawnSync(process.execPath, [...process.execArgv, fileURLToPath(import.meta.url), ...process.argv.slice(2)], {
    stdio: "inherit",
    env,
  });
  process.exit(r.status ?? 1);
}
if (arithmetic === "fma" && !enableRelaxedSimd()) {
  console.error("--arithmetic fma: this runtime has no relaxed SIMD (Node ≥ 22, or Node 20's V8 flag)");
  process.exit(2);
}
setKernelArithmetic(arithmetic); // a typed error names an unknown value
const dirs = argv.length
  ? argv.map((d) => resolve(d))
  : ["llama-gqa-fortunes", "deepseek-mla-fortunes"].map((m) => join(root, "models", m));
const PREFILL = [128, 512];
const PROMPT = 64;
const DECODE = 64;
const PYTHON = "/usr/bin/python3";

// The torch side needs Debian's python3-torch and, so that torch is a fair baseline, OpenBLAS under
// it (without libopenblas0 Debian's torch runs on netlib's reference BLAS: 31 ms instead of 4.9 ms
// for a prefill here). As root with apt-get, the bench installs what is missing (once; --no-install:
// never), as check-playground.mjs installs chromium; otherwise it says what to install.
function ensureTorch() {
  const torchThere = () => spawnSync(PYTHON, ["-c", "import torch"]).status === 0;
  const openblasThere = () => spawnSync("sh", ["-c", "ls /usr/lib/*/openblas*/libblas.so.3 >/dev/null 2>&1"]).status === 0;
  const missing = [...(torchThere() ? [] : ["python3-torch"]), ...(openblasThere() ? [] : ["libopenblas0-pthread"])];
  if (missing.length === 0 || noInstall) return;
  if (process.getuid?.() !== 0 || spawnSync("sh", ["-c", "command -v apt-get"]).status !== 0) {
    console.log(
      `bench:models: ${missing.join(" and ")} missing (apt-get install ${missing.join(" ")}); not installing without root and apt-get`,
    );
    return;
  }
  console.log(`bench:models: installing ${missing.join(", ")} (apt-get)…`);
  const opts = { stdio: ["ignore", "ignore", "inherit"], env: { ...process.env, DEBIAN_FRONTEND: "noninteractive" } };
  try {
    // Another apt-get may hold the dpkg lock: wait for it rather than fail.
    execFileSync("apt-get", ["-o", "DPkg::Lock::Timeout=600", "update", "-qq"], opts);
    execFileSync("apt-get", ["-o", "DPkg::Lock::Timeout=600", "install", "-y", "-qq", ...missing], opts);
  } catch (e) {
    console.log(`bench:models: apt-get failed (${e.message.split("\n")[0]}); the torch columns may be n/a`);
  }
}
ensureTorch();

const median = (xs) => {
  const s = [...xs].sort((a, b) => a - b);
  const m = s.length >> 1;
  return s.length % 2 ? s[m] : (s[m - 1] + s[m]) / 2;
};
// CPU seconds of this process (all its threads: V8's GC and compiler helpers count against RandAttn).
const cpuNow = () => {
  const u = process.cpuUsage();
  return (u.user + u.system) / 1e6;
};
// RandAttn's warm-up runs until at least `warmup` runs AND WARM_CPU_S seconds of CPU: V8 tiers a
// forward's functions up over its first ≈ 10 calls (DeepSeek N = 128: 47–64 ms per call on calls
// 2–5, 25 ms from call ≈ 10 on), so a count of 1–2 timed the JIT compiler, not the steady state
// that torch (no JIT) is measured in. The torch side keeps the count. 3 s, not 1: the first row
// timed (Llama f64 N = 128) ran 1.5–1.9× its steady state after 1 s (15–16 ms against 8.5–11,
// three runs at load 4–6; per-forward CPU in one process spikes to ≈ 19 ms around 1.1–1.5 s of CPU:
// a major GC and late compiles on V8's helper threads, which process.cpuUsage counts).
function warmUp(fn) {
  const c0 = cpuNow();
  for (let i = 0; i < warmup || cpuNow() - c0 < WARM_CPU_S; i++) fn();
}
/** Wall and CPU seconds of one call of `fn`. */
function timeOnce(fn) {
  const t0 = performance.now();
  const c0 = cpuNow();
  fn();
  return { cpu: cpuNow() - c0, wall: (performance.now() - t0) / 1000 };
}
const maxRel = (a, b) => {
  let num = 0;
  let den = 0;
  for (let i = 0; i < b.length; i++) {
    num = Math.max(num, Math.abs(a[i] - b[i]));
    den = Math.max(den, Math.abs(b[i]));
  }
  return num / den;
};

/**
 * bench_torch.py as a server for one checkpoint (`startLineServer`, one JSON object per line):
 * `request(obj)` resolves with the parsed answer. Resolves with { error } when torch is not there.
 */
async function startTorch(dir) {
  const env = { ...process.env, OMP_NUM_THREADS: "1", OPENBLAS_NUM_THREADS: "1", MKL_NUM_THREADS: "1" };
  const s = await startLineServer(PYTHON, [join(root, "scripts/models/bench_torch.py"), dir], env);
  if ("error" in s) return s;
  const hello = JSON.parse(s.hello);
  const request = async (obj) => JSON.parse(await s.request(JSON.stringify(obj)));
  return { version: hello.torch, blas: hello.blas, request, close: s.close, pid: s.pid };
}

// Both sides of a phase on one core, this thread and every torch thread: the faster of a 512³ matmul
// calibration just before the phase's warm-up (packages/core/bench/affinity.mjs — on this VM the
// two vCPUs drift apart by up to 1.5× for minutes and change places; unpinned, the same DeepSeek f64
// N = 512 prefill read 26 or 39 ms depending on where a process landed). Once per phase, not per
// pair: pinning runs taskset, a fork of this process, whose copy-on-write faults (and the
// calibration's evicted caches) the warm-up absorbs — per pair they doubled a prefill's CPU time.
const calA = randomMatrix(512, 512, {}, [1, "pin", "a"]);
const chooser = noPin ? null : coreChooser(() => matmul(calA, calA));

/**
 * One phase in one precision, the two sides alternating: after the warm-ups, `reps` pairs of one
 * RandAttn run and one torch run (which goes first alternates). Medians of each side's times and
 * of the per-pair ratios torch ÷ RandAttn (with their range).
 */
async function paired(raOnce, torch, torchRequest) {
  const onOneCore = () => chooser?.choose([torch?.pid]);
  onOneCore();
  warmUp(raOnce);
  if (torch) for (let i = 0; i < warmup; i++) await torch.request(torchRequest);
  const ra = [];
  const th = [];
  for (let i = 0; i < reps; i++) {
    if (torch && i % 2 === 1) th.push(await torch.request(torchRequest));
    ra.push(raOnce());
    if (torch && i % 2 === 0) th.push(await torch.request(torchRequest));
  }
  const side = (xs) => ({ wall: median(xs.map((x) => x.wall)), cpu: median(xs.map((x) => x.cpu)) });
  if (!torch) return { randattn: side(ra), torch: null, ratio: null };
  const ratios = (key) => ra.map((r, i) => th[i][key] / r[key]);
  const cpuRatios = ratios("cpu");
  return {
    randattn: side(ra),
    torch: side(th),
    ratio: { cpu: median(cpuRatios), wall: median(ratios("wall")), cpuMin: Math.min(...cpuRatios), cpuMax: Math.max(...cpuRatios) },
  };
}

/** Every phase of one model in one precision: { prefill: {n: paired}, decode: paired, logits }. */
async function measure(model, ids, precision, torch) {
  const prefill = {};
  for (const n of PREFILL)
    prefill[n] = await paired(() => timeOnce(() => model.forward(ids.slice(0, n), { precision })), torch, {
      op: "prefill",
      dtype: precision,
      n,
    });
  let lastDecode = null;
  const decodeOnce = () => {
    const state = model.createState();
    model.step(state, ids.slice(0, PROMPT), { precision });
    let logits;
    const t0 = performance.now();
    const c0 = cpuNow();
    for (let i = PROMPT; i < PROMPT + DECODE; i++) logits = model.step(state, [ids[i]], { precision, mlaForm: "absorbed" }).logits;
    lastDecode = logits;
    return { cpu: (cpuNow() - c0) / DECODE, wall: (performance.now() - t0) / 1000 / DECODE };
  };
  const decode = await paired(decodeOnce, torch, { op: "decode", dtype: precision, prompt: PROMPT, decode: DECODE });
  return {
    prefill,
    decode,
    prefillLastLogits: model.forward(ids.slice(0, PREFILL[0]), { precision }).logits.row(PREFILL[0] - 1),
    decodeLastLogits: lastDecode.row(0),
  };
}

const ms = (s) => (Number.isFinite(s) ? (s * 1000).toFixed(s < 0.01 ? 2 : 1) : "n/a");
function table(header, rows) {
  const all = [header, ...rows].map((r) => r.map(String));
  const w = header.map((_, j) => Math.max(...all.map((r) => r[j].length)));
  for (const [i, r] of all.entries()) {
    console.log(r.map((c, j) => (j === 0 ? c.padEnd(w[j]) : c.padStart(w[j]))).join("  "));
    if (i === 0) console.log(w.map((x) => "-".repeat(x)).join("  "));
  }
}

console.log(
  `RandAttn bench:models — Node ${process.version}, ${hostCpu()}, load ${loadavg()
    .map((x) => x.toFixed(1))
    .join(
      " ",
    )}; median of ${reps} after ${warmup} warm-up (RandAttn: and ≥ ${WARM_CPU_S} s CPU); one thread each; RandAttn GEMM arithmetic ${arithmetic}${arithmetic === "fma" ? " (relaxed SIMD, opt-in)" : ""}; malloc ${malloc}${process.env.GLIBC_TUNABLES ? ` (GLIBC_TUNABLES=${process.env.GLIBC_TUNABLES}, both sides)` : ""}`,
);
const text = readFileSync(join(root, "models", "heldout.txt"), "utf8");
const results = [];
const rows = [];
for (const dir of dirs) {
  const model = loadPretrained(dir);
  if (!model.tokenizer) throw new Error(`${dir}: no tokenizer.json (the bench tokenizes models/heldout.txt)`);
  const maxN = Math.min(PREFILL.at(-1), model.config.maxPositions);
  const all = model.tokenizer.encode(text);
  if (all.length < Math.max(maxN, PROMPT + DECODE)) throw new Error(`${dir}: heldout.txt gives only ${all.length} tokens`);
  const ids = all.slice(0, Math.max(maxN, PROMPT + DECODE));
  const started = await startTorch(dir);
  const torch = started.error ? null : started;
  if (torch) await torch.request({ op: "ids", ids });
  const ra = { float64: await measure(model, ids, "float64", torch), float32: await measure(model, ids, "float32", torch) };
  const name = dir.split("/").pop();
  let agree;
  if (torch) {
    const pre = await torch.request({ op: "logits", dtype: "float64", n: PREFILL[0] });
    const dec = await torch.request({ op: "decode", dtype: "float64", prompt: PROMPT, decode: DECODE, logits: true });
    agree = { prefill: maxRel(ra.float64.prefillLastLogits, pre.lastLogits), decode: maxRel(ra.float64.decodeLastLogits, dec.lastLogits) };
    torch.close();
  }
  const phases = [...PREFILL.map((n) => [`prefill N=${n}`, (r) => r.prefill[n]]), [`decode/token (${PROMPT}+${DECODE})`, (r) => r.decode]];
  const entry = {
    model: name,
    torch: torch ? torch.version : null,
    torchBlas: torch?.blas ?? null,
    torchError: started.error,
    logitsRelDiff: agree,
    phases: [],
  };
  for (const [label, get] of phases) {
    const f64 = get(ra.float64);
    const f32 = get(ra.float32);
    // torch ÷ RandAttn: medians of the per-pair ratios, on CPU seconds (robust on a loaded machine) and on wall seconds.
    const e = {
      phase: label,
      randattnF64: f64.randattn,
      torchF64: f64.torch,
      ratioF64: f64.ratio,
      randattnF32: f32.randattn,
      torchF32: f32.torch,
      ratioF32: f32.ratio,
    };
    entry.phases.push(e);
    const r2 = (x) => (x === null ? "n/a" : `${x.cpu.toFixed(2)}× [${x.cpuMin.toFixed(2)}–${x.cpuMax.toFixed(2)}] (${x.wall.toFixed(2)}×)`);
    rows.push([
      name,
      label,
      ms(e.randattnF64.cpu),
      ms(e.torchF64?.cpu ?? Number.NaN),
      r2(e.ratioF64),
      ms(e.randattnF32.cpu),
      ms(e.torchF32?.cpu ?? Number.NaN),
      r2(e.ratioF32),
    ]);
  }
  results.push(entry);
}
console.log(
  `CPU ms (median); ratio = torch ÷ RandAttn on CPU time, median of the ${reps} alternating pairs [their range] (on wall time in parentheses); > 1: RandAttn faster`,
);
table(["model", "phase", "RandAttn f64", "torch f64", "torch÷RA f64", "RandAttn f32", "torch f32", "torch÷RA f32"], rows);
for (const r of results) {
  if (r.torchError) console.log(`${r.model}: torch not run (${PYTHON} with torch needed: apt-get install python3-torch): ${r.torchError}`);
  else
    console.log(
      `${r.model}: torch ${r.torch} with ${r.torchBlas.name} (${r.torchBlas.paths.join(", ") || "no BLAS library mapped"}); last-token logits RandAttn f64 vs torch f64: max rel. diff ${r.logitsRelDiff.prefill.toExponential(1)} (prefill), ${r.logitsRelDiff.decode.toExponential(1)} (decode)`,
    );
}
// torch's speed is its BLAS's: against netlib's reference BLAS (what apt's python3-torch gets when no
// libopenblas0 is installed) RandAttn would look several times faster than torch really is.
const weakBlas = results.filter((r) => r.torchBlas && !r.torchBlas.optimized);
if (weakBlas.length)
  console.log(
    `WARNING: torch ran on ${weakBlas[0].torchBlas.name}, not an optimized BLAS: these ratios overstate RandAttn. apt-get install libopenblas0-pthread, then rerun.`,
  );
const ratios = results
  .flatMap((r) => r.phases.flatMap((p) => [p.ratioF64, p.ratioF32]))
  .filter((x) => x !== null)
  .map((x) => x.cpu);
const summary = {
  minRatio: ratios.length ? Math.min(...ratios) : null,
  target: 1,
  torchBlas: results[0]?.torchBlas?.name ?? null,
  optimizedBlas: weakBlas.length === 0,
};
console.log(
  summary.minRatio === null
    ? "issue 14 target (≥ torch on one thread): not measured (no torch)"
    : `issue 14 target (RandAttn ≥ torch speed, every row, CPU time): slowest ratio ${summary.minRatio.toFixed(2)}× — ${summary.optimizedBlas ? (summary.minRatio >= 1 ? "met" : "not met") : "not judged (torch on a reference BLAS)"}`,
);
chooser?.release();
const pinning = chooser ? chooser.describe() : "one-thread pairs not pinned (--no-pin)";
console.log(`(${pinning})`);
mkdirSync(dirname(jsonPath), { recursive: true });
const machine = { node: process.version, cpu: cpus()[0]?.model, host: hostCpu(), cores: cpus().length, load: loadavg()[0] };
summary.arithmetic = arithmetic;
summary.malloc = { setting: malloc, glibcTunables: process.env.GLIBC_TUNABLES ?? null };
summary.pinning = pinning;
writeFileSync(
  jsonPath,
  `${JSON.stringify({ machine, reps, warmup, prefill: PREFILL, prompt: PROMPT, decode: DECODE, results, summary }, null, 2)}\n`,
);
console.log(`JSON: ${jsonPath}`);
