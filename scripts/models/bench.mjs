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
// `generate` does). Each figure is the median of --reps runs after --warmup untimed runs.
// Ratio = torch time ÷ RandAttn time (> 1: RandAttn is faster); like with like: RandAttn f64 vs
// torch f64, RandAttn f32 option vs torch f32. Also checked: last-token logits of RandAttn f64
// equal torch f64's (max relative difference printed), so both ran the same checkpoint.
//
//   node scripts/models/bench.mjs [--reps 7] [--warmup 2] [--warm-cpu 3] [--json FILE] [--quick] [DIR ...]
// Writes the table as JSON to FILE (default .tmp/bench-models.json, git-ignored). --quick: 3 reps,
// 1 warm-up. Without torch on /usr/bin/python3 the RandAttn columns are printed and torch is "n/a".
// On a shared machine absolute times mean little: only the ratios measured side by side count.
import { spawnSync } from "node:child_process";
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { cpus, loadavg, tmpdir } from "node:os";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { loadPretrained } from "../../packages/core/dist/node/index.js";

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
const reps = Number(flag("--reps", quick ? 3 : 7));
const warmup = Number(flag("--warmup", quick ? 1 : 2));
const WARM_CPU_S = Number(flag("--warm-cpu", 3)); // see warmUp
const jsonPath = resolve(flag("--json", join(root, ".tmp", "bench-models.json")));
const dirs = argv.length
  ? argv.map((d) => resolve(d))
  : ["llama-gqa-fortunes", "deepseek-mla-fortunes"].map((m) => join(root, "models", m));
const PREFILL = [128, 512];
const PROMPT = 64;
const DECODE = 64;
const PYTHON = "/usr/bin/python3";

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
/** Median wall and CPU seconds of `fn` over `reps` runs after the warm-up. */
function medianTime(fn) {
  warmUp(fn);
  const wall = [];
  const cpu = [];
  for (let i = 0; i < reps; i++) {
    const t0 = performance.now();
    const c0 = cpuNow();
    fn();
    cpu.push(cpuNow() - c0);
    wall.push((performance.now() - t0) / 1000);
  }
  return { wall: median(wall), cpu: median(cpu) };
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

/** RandAttn's medians (seconds) for one model and precision, plus the last-token logits. */
function randattn(model, ids, precision) {
  const prefill = {};
  for (const n of PREFILL) prefill[n] = medianTime(() => model.forward(ids.slice(0, n), { precision }));
  const decodeOnce = () => {
    const state = model.createState();
    model.step(state, ids.slice(0, PROMPT), { precision });
    let logits;
    const t0 = performance.now();
    const c0 = cpuNow();
    for (let i = PROMPT; i < PROMPT + DECODE; i++) logits = model.step(state, [ids[i]], { precision, mlaForm: "absorbed" }).logits;
    return { cpu: (cpuNow() - c0) / DECODE, wall: (performance.now() - t0) / 1000 / DECODE, logits };
  };
  warmUp(decodeOnce);
  const runs = Array.from({ length: reps }, decodeOnce);
  return {
    prefill,
    decode: { wall: median(runs.map((r) => r.wall)), cpu: median(runs.map((r) => r.cpu)) },
    prefillLastLogits: model.forward(ids.slice(0, PREFILL[0]), { precision }).logits.row(PREFILL[0] - 1),
    decodeLastLogits: runs.at(-1).logits.row(0),
  };
}

/** torch's medians from bench_torch.py, or { error } when torch is not there. */
function torchRun(dir, ids) {
  const tmp = mkdtempSync(join(tmpdir(), "randattn-bench-"));
  try {
    const spec = join(tmp, "spec.json");
    writeFileSync(spec, JSON.stringify({ ids, prefill: PREFILL, prompt: PROMPT, decode: DECODE, reps, warmup }));
    const env = { ...process.env, OMP_NUM_THREADS: "1", OPENBLAS_NUM_THREADS: "1", MKL_NUM_THREADS: "1" };
    const r = spawnSync(PYTHON, [join(root, "scripts/models/bench_torch.py"), dir, spec], { encoding: "utf8", env, maxBuffer: 1 << 26 });
    if (r.error || r.status !== 0) return { error: (r.error?.message ?? r.stderr ?? "").trim().split("\n").pop() };
    return JSON.parse(r.stdout);
  } finally {
    rmSync(tmp, { recursive: true, force: true });
  }
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
  `RandAttn bench:models — Node ${process.version}, ${cpus()[0]?.model ?? "?"} × ${cpus().length}, load ${loadavg()
    .map((x) => x.toFixed(1))
    .join(" ")}; median of ${reps} after ${warmup} warm-up (RandAttn: and ≥ ${WARM_CPU_S} s CPU); one thread each`,
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
  const ra = { float64: randattn(model, ids, "float64"), float32: randattn(model, ids, "float32") };
  const th = torchRun(dir, ids);
  const name = dir.split("/").pop();
  const agree = th.error
    ? undefined
    : {
        prefill: maxRel(ra.float64.prefillLastLogits, th.prefillLastLogits),
        decode: maxRel(ra.float64.decodeLastLogits, th.decodeLastLogits),
      };
  const phases = [...PREFILL.map((n) => [`prefill N=${n}`, (r) => r.prefill[n]]), [`decode/token (${PROMPT}+${DECODE})`, (r) => r.decode]];
  const entry = { model: name, torch: th.error ? null : th.torch, torchError: th.error, logitsRelDiff: agree, phases: [] };
  for (const [label, get] of phases) {
    const e = { phase: label };
    for (const [key, side, prec] of [
      ["randattnF64", ra, "float64"],
      ["torchF64", th.error ? null : th.runs, "float64"],
      ["randattnF32", ra, "float32"],
      ["torchF32", th.error ? null : th.runs, "float32"],
    ])
      e[key] = side === null ? null : get(side[prec]);
    // torch ÷ RandAttn, on CPU seconds (robust on a loaded machine) and on wall seconds.
    for (const [key, a, b] of [
      ["ratioF64", e.torchF64, e.randattnF64],
      ["ratioF32", e.torchF32, e.randattnF32],
    ])
      e[key] = a === null ? null : { cpu: a.cpu / b.cpu, wall: a.wall / b.wall };
    entry.phases.push(e);
    const r2 = (x) => (x === null ? "n/a" : `${x.cpu.toFixed(2)}× (${x.wall.toFixed(2)}×)`);
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
console.log("CPU ms (median); ratio = torch ÷ RandAttn on CPU time (on wall time in parentheses); > 1: RandAttn faster");
table(["model", "phase", "RandAttn f64", "torch f64", "torch÷RA f64", "RandAttn f32", "torch f32", "torch÷RA f32"], rows);
for (const r of results) {
  if (r.torchError) console.log(`${r.model}: torch not run (${PYTHON} with torch needed: apt-get install python3-torch): ${r.torchError}`);
  else
    console.log(
      `${r.model}: torch ${r.torch}; last-token logits RandAttn f64 vs torch f64: max rel. diff ${r.logitsRelDiff.prefill.toExponential(1)} (prefill), ${r.logitsRelDiff.decode.toExponential(1)} (decode)`,
    );
}
const ratios = results
  .flatMap((r) => r.phases.flatMap((p) => [p.ratioF64, p.ratioF32]))
  .filter((x) => x !== null)
  .map((x) => x.cpu);
const summary = { minRatio: ratios.length ? Math.min(...ratios) : null, target: 1 };
console.log(
  summary.minRatio === null
    ? "issue 14 target (≥ torch on one thread): not measured (no torch)"
    : `issue 14 target (RandAttn ≥ torch speed, every row, CPU time): slowest ratio ${summary.minRatio.toFixed(2)}× — ${summary.minRatio >= 1 ? "met" : "not met"}`,
);
mkdirSync(dirname(jsonPath), { recursive: true });
const machine = { node: process.version, cpu: cpus()[0]?.model, cores: cpus().length, load: loadavg()[0] };
writeFileSync(
  jsonPath,
  `${JSON.stringify({ machine, reps, warmup, prefill: PREFILL, prompt: PROMPT, decode: DECODE, results, summary }, null, 2)}\n`,
);
console.log(`JSON: ${jsonPath}`);
