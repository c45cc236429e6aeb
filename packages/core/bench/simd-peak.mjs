// Register-only WebAssembly SIMD128 mul+add peak probe (issue 14): the ceiling the matmul kernels
// are judged against, measured in the same run. `chains` independent accumulator pairs are updated
// b_i ← b_i·c, a_i ← a_i + b_i (c = 1, so values stay fixed: no overflow, no subnormals); no memory
// is touched. Per update: 2 vector ops = 2·2 f64 flops (f64x2) or 2·4 f32 flops (f32x4).
// relaxed-SIMD (fused multiply-add) is not used, as in the default kernels. `relaxedPeakProbes` is
// the same probe for the opt-in fused kernels (`setKernelArithmetic("fma")`): a_i ← relaxed_madd(b_i, c, a_i),
// one vector op = 2·2 (f64) or 2·4 (f32) flops, 8, 10 and 12 chains tried (a 4-cycle FMA on two
// pipes needs ≥ 8 in flight).
//
// Why the loop body holds UNROLL copies of the update: with one copy per iteration (the form before
// stop 20) V8 rematerializes the constant c and runs the stack/interrupt check every 12 vector ops,
// and the probe read 13.5–16.6 GFLOP/s on a host where the matmul itself ran 19.4 (143 % of its
// "peak"); unrolled 8 times it reads 18.1–19.7 (its TurboFan code, --print-wasm-code: the 96 or 112
// vector ops in registers xmm0–xmm14 with no stack move between the loop's two checks). 6 and 7
// chains are both tried and the faster kept: with 3-cycle latencies 6 chains suffice on one core's
// two FMUL and two FADD pipes, 7 (15 live v128: all V8 allocates) covers a longer latency.
//
// `simdPeakTwoThreads` runs the same probe on two threads at once (this file as a worker) and gives
// the aggregate rate ÷ one thread alone: the ceiling for any two-worker speed-up of compute-bound
// work on this host, measured rather than assumed to be 2.
import { Worker, isMainThread, parentPort, workerData } from "node:worker_threads";
import wabtInit from "wabt";

const UNROLL = 8;
const CHAIN_COUNTS = [6, 7];
const FMA_CHAIN_COUNTS = [8, 10, 12];

function probeWat(type, chains, fma = false) {
  const lanes = type === "f64" ? "f64x2" : "f32x4";
  const locals = [];
  for (let i = 0; i < chains; i++) locals.push(`(local $a${i} v128) (local $b${i} v128)`);
  const init = [];
  for (let i = 0; i < chains; i++) {
    init.push(`(local.set $a${i} (${lanes}.splat (${type}.const ${i}.5)))`);
    init.push(`(local.set $b${i} (${lanes}.splat (${type}.const 1.${i + 1})))`);
  }
  const body = [];
  for (let u = 0; u < UNROLL; u++) {
    if (fma) {
      for (let i = 0; i < chains; i++)
        body.push(`(local.set $a${i} (${lanes}.relaxed_madd (local.get $b${i}) (local.get $c) (local.get $a${i})))`);
      continue;
    }
    for (let i = 0; i < chains; i++) body.push(`(local.set $b${i} (${lanes}.mul (local.get $b${i}) (local.get $c)))`);
    for (let i = 0; i < chains; i++) body.push(`(local.set $a${i} (${lanes}.add (local.get $a${i}) (local.get $b${i})))`);
  }
  let sum = "(local.get $a0)";
  for (let i = 1; i < chains; i++) sum = `(${lanes}.add ${sum} (local.get $a${i}))`;
  return `(module
  (func (export "probe") (param $n i32) (result ${type})
    (local $c v128) ${locals.join(" ")}
    (local.set $c (${lanes}.splat (${type}.const 1)))
    ${init.join("\n    ")}
    (block $done (loop $top
      (br_if $done (i32.eqz (local.get $n)))
      ${body.join("\n      ")}
      (local.set $n (i32.sub (local.get $n) (i32.const 1)))
      (br $top)))
    (${lanes}.extract_lane 0 ${sum})))`;
}

/** The compiled, tiered-up probe: `run(updates)` returns its GFLOP count for that many chain updates. */
async function compileProbe(wabt, type, chains, fma = false) {
  const mod = wabt.parseWat(`peak-${type}-${chains}${fma ? "-fma" : ""}.wat`, probeWat(type, chains, fma), {
    simd: true,
    relaxed_simd: fma,
  });
  const { buffer } = mod.toBinary({});
  mod.destroy();
  const { instance } = await WebAssembly.instantiate(buffer);
  const probe = instance.exports.probe;
  const perUpdate = chains * UNROLL * (type === "f64" ? 2 : 4) * 2; // flops per loop iteration
  for (let w = 0; w < 3; w++) probe(100_000); // tier up to TurboFan
  return (iterations) => {
    probe(iterations);
    return (perUpdate * iterations) / 1e9;
  };
}

/**
 * The probe as one timed call per use, for alternating with the code it is the ceiling of:
 * `f64()` / `f32()` run the faster of the 6- and 7-chain variants (picked by 3 calls of each) once
 * and return its GFLOP/s, timed by `clockMs`.
 * @returns {Promise<{f64: () => number, f32: () => number}>}
 */
export async function simdPeakProbes(iterations = 20_000_000, clockMs = () => performance.now(), fma = false) {
  const wabt = await wabtInit();
  const out = {};
  for (const type of ["f64", "f32"]) {
    const timed = [];
    for (const chains of fma ? FMA_CHAIN_COUNTS : CHAIN_COUNTS) {
      const run = await compileProbe(wabt, type, chains, fma);
      const n = Math.round((iterations * 6) / (chains * UNROLL));
      const once = () => {
        const t0 = clockMs();
        const gflop = run(n);
        return gflop / ((clockMs() - t0) / 1000);
      };
      timed.push({ once, rate: Math.max(once(), once(), once()) });
    }
    out[type] = timed.reduce((a, b) => (b.rate > a.rate ? b : a)).once;
  }
  return out;
}

/**
 * The relaxed-SIMD probe (fused multiply-add), as {@link simdPeakProbes}: the ceiling of the opt-in
 * `"fma"` kernels. The caller enables relaxed SIMD first (`enableRelaxedSimd()` on Node 20).
 * @returns {Promise<{f64: () => number, f32: () => number}>}
 */
export function relaxedPeakProbes(iterations = 20_000_000, clockMs = () => performance.now()) {
  return simdPeakProbes(iterations, clockMs, true);
}

/**
 * The worker's next message (or its error), with both listeners removed when either fires — so
 * waiting on a worker call after call builds up no listeners (attention-copies.mjs uses it too).
 */
export function nextMessage(worker) {
  return new Promise((resolve, reject) => {
    const done = (m) => {
      worker.off("error", fail);
      resolve(m);
    };
    const fail = (e) => {
      worker.off("message", done);
      reject(e);
    };
    worker.once("message", done).once("error", fail);
  });
}

/**
 * The f64 probe (7 chains) on two threads at the same time against one thread alone, alternated
 * `reps` times: the aggregate GFLOP/s of both ÷ one thread's, median and best over the reps.
 * @returns {Promise<{median: number, best: number, ratios: number[]}>}
 */
export async function simdPeakTwoThreads(reps = 5, iterations = 2_000_000) {
  const run = await compileProbe(await wabtInit(), "f64", 7);
  const signal = new Int32Array(new SharedArrayBuffer(8));
  const worker = new Worker(new URL(import.meta.url), { workerData: { signal, iterations } });
  const next = () => nextMessage(worker);
  await next(); // compiled and tiered up
  const ratios = [];
  try {
    for (let r = 0; r < reps; r++) {
      let t0 = performance.now();
      const work = run(iterations);
      const alone = work / (performance.now() - t0);
      Atomics.store(signal, 0, r + 1);
      Atomics.notify(signal, 0);
      t0 = performance.now();
      run(iterations);
      const here = work / (performance.now() - t0);
      const otherMs = await next();
      ratios.push((here + work / otherMs) / alone);
    }
  } finally {
    await worker.terminate();
  }
  const sorted = [...ratios].sort((x, y) => x - y);
  return { median: sorted[sorted.length >> 1], best: sorted.at(-1), ratios };
}

if (!isMainThread && workerData?.signal) {
  const { signal, iterations } = workerData;
  const run = await compileProbe(await wabtInit(), "f64", 7);
  parentPort.postMessage("ready");
  for (let r = 1; ; r++) {
    Atomics.wait(signal, 0, r - 1);
    const t0 = performance.now();
    run(iterations);
    parentPort.postMessage(performance.now() - t0);
  }
}
