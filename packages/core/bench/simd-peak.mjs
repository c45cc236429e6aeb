// Register-only WebAssembly SIMD128 mul+add peak probe (issue 14): the ceiling the matmul kernels
// are judged against, measured in the same run. Each loop iteration updates 6 independent
// accumulator chains (13 live v128 values: V8 allocates xmm0–15 only, so more chains spill), b_i ← b_i·c and a_i ← a_i + b_i (c = 1, so values stay fixed: no overflow, no
// subnormals); no memory is touched. Per iteration: 12 vector ops = 6·2·2 f64 flops (f64x2) or
// 6·4·2 f32 flops (f32x4). relaxed-SIMD (fused multiply-add) is not used, as in the kernels.
import wabtInit from "wabt";

const CHAINS = 6;

function probeWat(type) {
  const lanes = type === "f64" ? "f64x2" : "f32x4";
  const locals = [];
  for (let i = 0; i < CHAINS; i++) locals.push(`(local $a${i} v128) (local $b${i} v128)`);
  const init = [];
  for (let i = 0; i < CHAINS; i++) {
    init.push(`(local.set $a${i} (${lanes}.splat (${type}.const ${i}.5)))`);
    init.push(`(local.set $b${i} (${lanes}.splat (${type}.const 1.${i + 1})))`);
  }
  const body = [];
  for (let i = 0; i < CHAINS; i++) body.push(`(local.set $b${i} (${lanes}.mul (local.get $b${i}) (local.get $c)))`);
  for (let i = 0; i < CHAINS; i++) body.push(`(local.set $a${i} (${lanes}.add (local.get $a${i}) (local.get $b${i})))`);
  let sum = "(local.get $a0)";
  for (let i = 1; i < CHAINS; i++) sum = `(${lanes}.add ${sum} (local.get $a${i}))`;
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

/**
 * Best-of-`reps` GFLOP/s of the probe for "f64" and "f32" (one thread), timed by `clockMs`
 * (milliseconds; wall clock by default, CPU time under the bench's --cpu).
 * @returns {Promise<{f64: number, f32: number}>}
 */
export async function simdPeak(reps = 5, iterations = 20_000_000, clockMs = () => performance.now()) {
  const wabt = await wabtInit();
  const out = {};
  for (const type of ["f64", "f32"]) {
    const mod = wabt.parseWat(`peak-${type}.wat`, probeWat(type), { simd: true });
    const { buffer } = mod.toBinary({});
    mod.destroy();
    const { instance } = await WebAssembly.instantiate(buffer);
    const probe = instance.exports.probe;
    for (let w = 0; w < 3; w++) probe(1_000_000); // tier up to TurboFan
    const flopsPerIter = CHAINS * (type === "f64" ? 2 : 4) * 2;
    let best = Number.POSITIVE_INFINITY;
    for (let r = 0; r < reps; r++) {
      const t0 = clockMs();
      probe(iterations);
      best = Math.min(best, (clockMs() - t0) / 1000);
    }
    out[type] = (flopsPerIter * iterations) / best / 1e9;
  }
  return out;
}
