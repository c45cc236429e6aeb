/**
 * Relaxed SIMD on Node 20 (issue 14, stop 27): `setKernelArithmetic("fma")` needs the engine to
 * accept `relaxed_madd`. V8 ships relaxed SIMD from 11.4 (Node ≥ 22, Chrome ≥ 114); Node 20's V8
 * 11.3 has it behind `--experimental-wasm-relaxed-simd`, a flag `NODE_OPTIONS` does not accept.
 * V8 reads WebAssembly feature flags when it validates or compiles a module, so setting the flag at
 * run time (before the fused module is first compiled) is enough; it changes nothing else —
 * no module RandAttn compiles by default uses a relaxed instruction (test/fast/wasm-bytes.test.ts).
 */
import { setFlagsFromString } from "node:v8";
import { relaxedSimdAvailable } from "../kernels/gemm.js";

/**
 * Makes relaxed SIMD available to this process (all its threads) where the engine has it behind a
 * flag, and tells whether it now is: true at once on Node ≥ 22; on Node 20 after setting V8's
 * `--experimental-wasm-relaxed-simd`; false on an engine without it (then `"fma"` stays refused).
 * @example
 * if (enableRelaxedSimd()) setKernelArithmetic("fma");
 */
export function enableRelaxedSimd(): boolean {
  if (relaxedSimdAvailable()) return true;
  setFlagsFromString("--experimental-wasm-relaxed-simd");
  return relaxedSimdAvailable();
}
