// One exact-attention timing in a fresh process, so its peak resident memory (VmHWM, the
// address space's high-water mark) belongs to this configuration alone. Spawned by run.mjs:
//   node attention-child.mjs <impl> <nKV> <d> <reps> [nQ]
// impl: core-materialized | core-streaming | core-float32 | core-float32-streaming (attention/ module,
//       the last two with precision "float32") | fast64-materialized | fast64-streaming |
//       fast32-materialized | fast32-streaming (fast/ module). Prints one JSON line.
import { readFileSync } from "node:fs";
import * as core from "../dist/index.js";

/**
 * Peak resident memory of this process in MB: VmHWM from /proc (per address space, so it starts
 * afresh at exec), else resourceUsage().maxRSS — which Linux carries over from the parent across
 * fork + exec, so under the bench it never reads below the parent's own RSS.
 */
function peakRssMB() {
  try {
    const m = /VmHWM:\s+(\d+) kB/.exec(readFileSync("/proc/self/status", "utf8"));
    if (m) return Number(m[1]) / 1024;
  } catch {}
  return process.resourceUsage().maxRSS / 1024;
}

const [impl, nKVArg, dArg, repsArg, nQArg] = process.argv.slice(2);
const nKV = Number(nKVArg);
const d = Number(dArg);
const reps = Number(repsArg ?? 1);
const nQ = Number(nQArg ?? nKV);

function runner(name) {
  switch (name) {
    case "core-materialized":
      return typeof core.attention === "function" ? (q, k, v) => core.attention(q, k, v) : undefined;
    case "core-streaming":
      return typeof core.streamingAttention === "function" ? (q, k, v) => core.streamingAttention(q, k, v) : undefined;
    case "core-float32":
      return (q, k, v) => core.attention(q, k, v, { precision: "float32" });
    case "core-float32-streaming":
      return (q, k, v) => core.streamingAttention(q, k, v, { precision: "float32" });
    case "fast64-materialized":
      return (q, k, v) => core.fastAttention(q, k, v, { precision: "float64" });
    case "fast64-streaming":
      return (q, k, v) => core.fastAttention(q, k, v, { precision: "float64", mode: "streaming" });
    case "fast32-materialized":
      return (q, k, v) => core.attention32(q, k, v);
    case "fast32-streaming":
      return (q, k, v) => core.streamingAttention32(q, k, v);
    default:
      throw new Error(`unknown impl ${name}`);
  }
}

const f = runner(impl);
if (!f) {
  console.log(JSON.stringify({ impl, skipped: "not exported yet" }));
  process.exit(0);
}
// Warm up on a small problem: compiles the JS and lets V8 tier the WebAssembly kernels up from
// Liftoff to TurboFan before the timed runs.
{
  const w = (r, c, t) => core.randomMatrix(r, c, {}, [1, "warm", t]);
  for (let i = 0; i < 3; i++) f(w(256, d, "q"), w(512, d, "k"), w(512, d, "v"));
}
const q = core.randomMatrix(nQ, d, {}, [1, "bench", "q"]);
const k = core.randomMatrix(nKV, d, {}, [1, "bench", "k"]);
const v = core.randomMatrix(nKV, d, {}, [1, "bench", "v"]);
const rssInputs = process.memoryUsage().rss;
let best = Number.POSITIVE_INFINITY;
for (let r = 0; r < reps; r++) {
  const t0 = performance.now();
  f(q, k, v);
  best = Math.min(best, (performance.now() - t0) / 1000);
}
const flops = 4 * nQ * nKV * d; // Q Kᵀ and P V: 2·N_Q·N_KV·d each
console.log(
  JSON.stringify({
    impl,
    nQ,
    nKV,
    d,
    seconds: best,
    gflops: flops / best / 1e9,
    inputsMB: (3 * nKV * d * 8) / 2 ** 20,
    rssAfterInputsMB: rssInputs / 2 ** 20,
    peakRssMB: peakRssMB(),
  }),
);
