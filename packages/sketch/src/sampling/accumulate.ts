/**
 * The sampled estimate out[i, :] = Σ_t coef[i, t] · R[t, :] with R = V[J, :] (the rows of V at the
 * sampled keys) — sampledAttention's query-free schemes and sampledValueProduct's query-free branch.
 * One `gemmWasm` product where that gives the sequential loop's bits, else the loop.
 *
 * Why the bits agree: `gemmWasm` sums each entry over the depth in order from +0 within one slice of
 * depth ≤ `GEMM_KC` (gemm.ts), with the product and the sum rounded separately (no FMA in SIMD128)
 * — the loop's `out += coef · r` from a zeroed `out`. Past GEMM_KC the slices' partial sums are added
 * to each other, which is another order, so longer samples take the loop. The loop skips coef = 0,
 * which the product does not: it adds 0 · r = ±0, which changes nothing because R is finite (both
 * callers check V; a sum that starts at +0 never becomes −0, and 0 · ±∞ would be NaN).
 * Tested bit for bit against the loop (test/sampling/kernel-accumulation.test.ts). Measured: the
 * loop was ≈ 9 % of the quickstart sweep's worker time; the product is 3–9× faster at N = 512.
 */
import { getKernelBackend, wasmSimdAvailable } from "@randattn/core";
import { AUTO_MIN_WORK, GEMM_KC, gemmWasm } from "@randattn/core/internal";

/**
 * out (nQ × dV, zero on entry) = coef (nQ × s) · rows (s × dV, finite), all row-major, with the
 * bits of the sequential loop over t (module comment).
 */
export function sampledProduct(coef: Float64Array, rows: Float64Array, out: Float64Array, nQ: number, s: number, dV: number): void {
  if (s <= GEMM_KC && nQ * s * dV >= AUTO_MIN_WORK && getKernelBackend() !== "scalar" && wasmSimdAvailable()) {
    gemmWasm("float64", false, false, coef, rows, out, nQ, s, dV, false);
    return;
  }
  for (let i = 0; i < nQ; i++) {
    for (let t = 0; t < s; t++) {
      const x = coef[i * s + t];
      if (x === 0) continue;
      for (let col = 0; col < dV; col++) out[i * dV + col] += x * rows[t * dV + col];
    }
  }
}
