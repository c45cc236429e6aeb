/**
 * When the sampled estimate out[i, :] = Σ_t coef[i, t] · V[j_t, :] may run as one `gemmWasm`
 * product (coef · V[J, :]) and keep the bits of the sequential loop it replaces (sampledAttention's
 * query-free schemes, sampledValueProduct's query-free branch).
 *
 * Why the bits agree: `gemmWasm` sums each entry over the depth in order from +0 within one slice of
 * depth ≤ `GEMM_KC` (gemm.ts), with the product and the sum rounded separately (no FMA in SIMD128)
 * — the loop's `out += coef · v` from a zeroed `out`. Past GEMM_KC the slices' partial sums are added
 * to each other, which is another order, so longer samples keep the loop. A loop that skips
 * coef = 0 differs only by adding 0 · v = ±0, which changes nothing as long as v is finite (a sum
 * that starts at +0 never becomes −0; 0 · ±∞ would be NaN) — its caller must know V is finite.
 * Tested bit for bit against the loops (test/sampling/kernel-accumulation.test.ts).
 */
import { getKernelBackend, wasmSimdAvailable } from "@randattn/core";
import { AUTO_MIN_WORK, GEMM_KC } from "@randattn/core/internal";

/** Whether an nQ × s by s × dV sampled product runs on `gemmWasm` (see the module comment). */
export function sampledProductOnKernel(nQ: number, s: number, dV: number): boolean {
  return s <= GEMM_KC && nQ * s * dV >= AUTO_MIN_WORK && getKernelBackend() !== "scalar" && wasmSimdAvailable();
}
