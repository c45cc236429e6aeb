// RandAttn exact-core benchmark (issues #2 and #5): prints, side by side in one run, matmul
// (scalar / WebAssembly SIMD / ml-matrix), exact softmax attention (materialized vs streaming,
// float64 vs float32, vs NumPy), streaming at N = 65,536 (peak RSS) and multi-head attention on
// 1 vs 2 worker threads. Single thread unless stated. Timings are the best of a few repetitions.
//
//   pnpm bench                           (builds first, then: node packages/core/bench/run.mjs)
//   node packages/core/bench/run.mjs --quick        fewer repetitions, N = 65,536 with 4,096 queries
//   node packages/core/bench/run.mjs --skip-large   no N = 65,536 run
import { spawnSync } from "node:child_process";
import { cpus, loadavg } from "node:os";
import { fileURLToPath } from "node:url";
import * as core from "../dist/index.js";

const args = new Set(process.argv.slice(2));
const quick = args.has("--quick");
const child = fileURLToPath(new URL("./attention-child.mjs", import.meta.url));
const fmt = (x, digits = 2) => (Number.isFinite(x) ? x.toFixed(digits) : "—");
const gflops = (flops, s) => flops / s / 1e9;

function best(f, reps) {
  f(); // warm-up (JIT, WebAssembly tier-up)
  let t = Number.POSITIVE_INFINITY;
  for (let r = 0; r < reps; r++) {
    const t0 = performance.now();
    f();
    t = Math.min(t, (performance.now() - t0) / 1000);
  }
  return t;
}

function table(header, rows) {
  const all = [header, ...rows].map((r) => r.map(String));
  const w = header.map((_, j) => Math.max(...all.map((r) => r[j].length)));
  for (const [i, r] of all.entries()) {
    console.log(r.map((c, j) => c.padStart(w[j])).join("  "));
    if (i === 0) console.log(w.map((x) => "-".repeat(x)).join("  "));
  }
}

console.log(
  `RandAttn bench — Node ${process.version}, ${cpus()[0]?.model ?? "?"} × ${cpus().length}, load ${loadavg()
    .map((x) => x.toFixed(1))
    .join(" ")}`,
);
console.log(
  `WebAssembly SIMD128: ${core.wasmSimdAvailable() ? "yes" : "no (scalar fallback)"}; backend setting: ${core.getKernelBackend()}\n`,
);

// ---------------------------------------------------------------- matmul
console.log("## matmul C = A B (n×n·n×n), GFLOP/s = 2n³/t");
const mmRows = [];
for (const n of [512, 1024]) {
  const a = core.randomMatrix(n, n, [1, "mm", "a"]);
  const b = core.randomMatrix(n, n, [1, "mm", "b"]);
  const reps = n === 1024 ? (quick ? 1 : 3) : quick ? 2 : 5;
  core.setKernelBackend("scalar");
  const tScalar = best(() => core.matmul(a, b), reps);
  core.setKernelBackend("wasm");
  const tWasm = best(() => core.matmul(a, b), reps);
  const tF32 = best(() => core.matmul32(a, b), reps);
  core.setKernelBackend("auto");
  const ma = a.toMlMatrix();
  const mb = b.toMlMatrix();
  const tMl = best(() => ma.mmul(mb), n === 1024 ? 1 : reps);
  const f = 2 * n ** 3;
  mmRows.push([
    `${n}³`,
    fmt(gflops(f, tScalar)),
    fmt(gflops(f, tWasm)),
    fmt(gflops(f, tF32)),
    fmt(gflops(f, tMl)),
    `${fmt(tMl / tWasm, 1)}×`,
    `${fmt(tScalar / tWasm, 1)}×`,
  ]);
}
table(["size", "scalar", "wasm f64", "wasm f32", "ml-matrix", "wasm/ml-matrix", "wasm/scalar"], mmRows);

// Where the WebAssembly time goes: packing (= copying operands in), copying C out, the kernel.
{
  core.setKernelBackend("wasm");
  const split = (label, f) => {
    f();
    core.setGemmProfiling(true);
    f();
    const p = core.gemmProfile();
    core.setGemmProfiling(false);
    const total = p.packMs + p.copyMs + p.kernelMs;
    return [
      label,
      fmt(total, 1),
      `${fmt((100 * p.packMs) / total, 1)}%`,
      `${fmt((100 * p.copyMs) / total, 1)}%`,
      `${fmt((100 * p.kernelMs) / total, 1)}%`,
    ];
  };
  const a = core.randomMatrix(1024, 1024, [1, "mm", "a"]);
  const q = core.randomMatrix(128, 64, [1, "tile", "q"]);
  const kb = core.randomMatrix(256, 64, [1, "tile", "k"]);
  const p = core.randomMatrix(128, 256, [1, "tile", "p"]);
  const out = new Float64Array(128 * 64);
  const s = new Float64Array(128 * 256);
  console.log("\n## copy cost of the WebAssembly path (profiled run)");
  table(
    ["product", "ms", "pack A,B (copy in)", "C in/out", "kernel"],
    [
      split("1024³ A·B", () => core.matmul(a, a)),
      split("tile Q·Kᵀ 128×64·(256×64)ᵀ ×200", () => {
        for (let i = 0; i < 200; i++) core.matmulTransBInto(q.data, kb.data, s, 128, 64, 256);
      }),
      split("tile P·V 128×256·256×64 ×200 (acc)", () => {
        for (let i = 0; i < 200; i++) core.matmulInto(p.data, kb.data, out, 128, 256, 64, true);
      }),
    ],
  );
  core.setKernelBackend("auto");
}

// ---------------------------------------------------------------- attention
function runChild(impl, n, d, reps, nQ = n) {
  const r = spawnSync(process.execPath, [child, impl, String(n), String(d), String(reps), String(nQ)], { encoding: "utf8" });
  if (r.status !== 0) return { impl, error: (r.stderr || r.stdout).trim().split("\n").slice(-3).join(" | ") };
  return JSON.parse(r.stdout.trim().split("\n").pop());
}

const d = 64;
const hasCore = typeof core.attention === "function" && typeof core.streamingAttention === "function";
if (!hasCore) console.log("\n(attention/ module's attention/streamingAttention not exported yet: core-* rows skipped)");
console.log(`\n## exact softmax attention, N_Q = N_KV = N, d = ${d}; each row a fresh process (peak RSS); GFLOP/s = 4N²d/t`);
const attRows = [];
const results = {};
for (const n of [1024, 4096]) {
  const reps = n === 4096 ? (quick ? 1 : 3) : quick ? 2 : 5;
  for (const impl of [
    "core-materialized",
    "core-streaming",
    "fast64-materialized",
    "fast64-streaming",
    "fast32-materialized",
    "fast32-streaming",
  ]) {
    const r = runChild(impl, n, d, reps);
    results[`${impl}@${n}`] = r;
    if (r.skipped || r.error) attRows.push([impl, n, r.skipped ?? r.error, "", "", ""]);
    else attRows.push([impl, n, fmt(r.seconds, 3), fmt(r.gflops), fmt(r.peakRssMB, 0), fmt(r.rssAfterInputsMB, 0)]);
  }
}
table(["implementation", "N", "seconds", "GFLOP/s", "peak RSS MB", "RSS w/ inputs MB"], attRows);
const ratio = (a, b) => {
  const x = results[a]?.seconds;
  const y = results[b]?.seconds;
  return x && y ? `${fmt(x / y)}` : "—";
};
console.log(
  `streaming / materialized time: core ${ratio("core-streaming@1024", "core-materialized@1024")} (N=1024), ${ratio("core-streaming@4096", "core-materialized@4096")} (N=4096); fast64 ${ratio("fast64-streaming@4096", "fast64-materialized@4096")}; fast32 ${ratio("fast32-streaming@4096", "fast32-materialized@4096")} (N=4096)`,
);
console.log(
  `float32 / float64 time (N=4096, materialized): ${ratio("fast32-materialized@4096", "fast64-materialized@4096")} (fast), ${ratio("fast32-materialized@4096", "core-materialized@4096")} (vs core)`,
);

// float32 accuracy against float64 at N = 1024.
{
  const q = core.randomMatrix(1024, d, [1, "acc", "q"]);
  const k = core.randomMatrix(1024, d, [1, "acc", "k"]);
  const v = core.randomMatrix(1024, d, [1, "acc", "v"]);
  const ref = core.fastAttention(q, k, v, { precision: "float64" });
  const err = (y) => {
    let e = 0;
    let s = 0;
    for (let i = 0; i < y.data.length; i++) {
      e = Math.max(e, Math.abs(y.data[i] - ref.data[i]));
      s = Math.max(s, Math.abs(ref.data[i]));
    }
    return e / s;
  };
  console.log(
    `float32 accuracy (N=1024, d=64, Gaussian Q, K, V): max|Y32 − Y64|/max|Y64| = ${err(core.attention32(q, k, v)).toExponential(2)} materialized, ${err(core.streamingAttention32(q, k, v)).toExponential(2)} streaming; a-priori bound / max|Y64| = ${(core.float32AttentionErrorBound(q, k, v) / Math.max(...ref.data.map(Math.abs))).toExponential(2)}`,
  );
}

// ---------------------------------------------------------------- NumPy
{
  const n = 4096;
  const py = `
import time, numpy as np
rng = np.random.default_rng(1)
n, d = ${n}, ${d}
q, k, v = (rng.standard_normal((n, d)) for _ in range(3))
def att(q, k, v):
    s = (q @ k.T) / np.sqrt(d)
    s -= s.max(axis=1, keepdims=True)
    np.exp(s, out=s)
    s /= s.sum(axis=1, keepdims=True)
    return s @ v
att(q, k, v)
best = min((lambda t0: (att(q, k, v), time.perf_counter() - t0)[1])(time.perf_counter()) for _ in range(${quick ? 2 : 5}))
a = rng.standard_normal((1024, 1024)); b = rng.standard_normal((1024, 1024)); a @ b
mm = min((lambda t0: (a @ b, time.perf_counter() - t0)[1])(time.perf_counter()) for _ in range(3))
print(best, mm, np.__version__)
`;
  const env = { ...process.env, OPENBLAS_NUM_THREADS: "1", OMP_NUM_THREADS: "1", MKL_NUM_THREADS: "1" };
  const r = spawnSync("python3", ["-c", py], { encoding: "utf8", env });
  console.log("\n## NumPy (same machine, one thread: OPENBLAS_NUM_THREADS=1)");
  if (r.status !== 0 || r.error) {
    console.log(`skipped: python3 with NumPy not available (${(r.error?.message ?? r.stderr ?? "").trim().split("\n").pop()})`);
  } else {
    const [tNp, tMm, ver] = r.stdout.trim().split(/\s+/);
    const tn = Number(tNp);
    console.log(
      `NumPy ${ver}: attention N=${n} d=${d} ${fmt(tn, 3)} s (${fmt(gflops(4 * n * n * d, tn))} GFLOP/s); matmul 1024³ ${fmt(gflops(2 * 1024 ** 3, Number(tMm)))} GFLOP/s`,
    );
    for (const impl of ["core-materialized", "core-streaming", "fast64-materialized", "fast32-materialized"]) {
      const t = results[`${impl}@${n}`]?.seconds;
      if (t) console.log(`  ${impl} / NumPy = ${fmt(t / tn)}× (target ≤ 3×)`);
    }
  }
}

// ---------------------------------------------------------------- N = 65,536 streaming
if (!args.has("--skip-large")) {
  const n = 65_536;
  const nQ = quick ? 4096 : n;
  const impl = hasCore ? "core-streaming" : "fast64-streaming";
  console.log(`\n## streaming exact attention at N_KV = ${n}, N_Q = ${nQ}, d = ${d} (${impl}, child process)`);
  const r = runChild(impl, n, d, 1, nQ);
  if (r.error) console.log(`failed: ${r.error}`);
  else {
    console.log(
      `${fmt(r.seconds, 1)} s, ${fmt(r.gflops)} GFLOP/s, peak RSS ${fmt(r.peakRssMB, 0)} MB (target < 300 MB; inputs ${fmt(r.inputsMB, 0)} MB; the score matrix alone would be ${fmt((nQ * n * 8) / 2 ** 30, 1)} GiB)`,
    );
  }
}

// ---------------------------------------------------------------- workers
{
  const H = 8;
  const n = 1024;
  const dIn = 512;
  const w = (r, c, ...t) => core.randomMatrix(r, c, [1, "mha", ...t], { scale: 1 / Math.sqrt(r) });
  const weights = {
    queries: Array.from({ length: H }, (_, h) => w(dIn, d, "q", h)),
    keys: Array.from({ length: H }, (_, h) => w(dIn, d, "k", h)),
    values: Array.from({ length: H }, (_, h) => w(dIn, d, "v", h)),
    output: w(H * d, dIn, "o"),
  };
  const x = core.randomMatrix(n, dIn, [1, "mha", "x"]);
  const reps = quick ? 2 : 3;
  const timeAsync = async (f) => {
    await f();
    let t = Number.POSITIVE_INFINITY;
    for (let r = 0; r < reps; r++) {
      const t0 = performance.now();
      await f();
      t = Math.min(t, (performance.now() - t0) / 1000);
    }
    return t;
  };
  const tIn = await timeAsync(async () => core.multiHeadAttentionFast(x, x, weights));
  const t1 = await timeAsync(() => core.parallelMultiHeadAttention(x, x, weights, { workers: 1 }));
  const t2 = await timeAsync(() => core.parallelMultiHeadAttention(x, x, weights, { workers: 2 }));
  const y1 = core.multiHeadAttentionFast(x, x, weights);
  const y2 = await core.parallelMultiHeadAttention(x, x, weights, { workers: 2 });
  const same = y1.data.every((v, i) => Object.is(v, y2.data[i]));
  await core.closeAttentionWorkers();
  console.log(`\n## multi-head attention, H = ${H}, N = ${n}, d_in = ${dIn}, d = ${d} (float64, materialized per head)`);
  table(
    ["threads", "seconds", "speedup vs 1 worker"],
    [
      ["calling thread", fmt(tIn, 3), fmt(t1 / tIn)],
      ["1 worker", fmt(t1, 3), "1.00"],
      ["2 workers", fmt(t2, 3), fmt(t1 / t2)],
    ],
  );
  console.log(
    `2-worker result bit-identical to single-thread: ${same}; cores: ${cpus().length}, load ${loadavg()[0].toFixed(1)} (target ≥ 1.7× on 2 idle cores)`,
  );
}
