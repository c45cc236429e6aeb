/**
 * The largest eigenvalue of a small symmetric matrix, by cyclic Jacobi rotations (Golub & Van Loan,
 * Alg. 8.5.2–8.5.3): exact to rounding and deterministic — the experiments' spectral norms
 * ‖M‖₂ = √λ_max(MᵀM) of every task's error (packages/experiments base/metrics.ts) are computed with
 * it, so its bits are in the committed results. The kernel module's `sym_max_eig_f64`
 * (kernels/watJacobi.ts) performs the same operations in the same order, 2.5–3.8× faster; the
 * JavaScript form is the reference and the fallback without WebAssembly SIMD.
 */
import { getKernelBackend, ensureKernelMemory, getKernels, wasmSimdAvailable } from "../kernels/gemm.js";
import { unaliasedStride } from "../kernels/stride.js";
import { KERNEL_RESERVED_BYTES } from "../kernels/wat.js";
import { ShapeError, ValueError } from "../errors.js";

/**
 * Largest eigenvalue of the symmetric n × n matrix `a` (row-major; not modified): at most 60 cyclic
 * sweeps, stopping once Σ_{i<j} a_ij² ≤ 10⁻³⁰ Σ a_ii². The WebAssembly kernel unless the backend is
 * "scalar" or SIMD is unavailable; both give the same bits.
 * @throws ValueError when n is not a non-negative integer; ShapeError when `a` holds fewer than n × n entries.
 */
export function symmetricMaxEigenvalue(a: Float64Array, n: number): number {
  if (!Number.isInteger(n) || n < 0) throw new ValueError("n", "a non-negative integer", String(n));
  if (a.length < n * n) throw new ShapeError("a", `${n} × ${n} = ${n * n} entries`, `${a.length}`);
  if (n === 0) return Number.NEGATIVE_INFINITY;
  if (getKernelBackend() === "scalar" || !wasmSimdAvailable()) return symmetricMaxEigenvalueJs(a, n);
  const k = getKernels();
  // Padded where a column walk would fall into a few L1 sets (kernels/stride.ts); n < 64 fits L1.
  const ld = unaliasedStride(n, 64);
  ensureKernelMemory(k, KERNEL_RESERVED_BYTES + n * ld * 8);
  const o = KERNEL_RESERVED_BYTES / 8;
  if (ld === n) k.f64.set(a.subarray(0, n * n), o);
  else for (let i = 0; i < n; i++) k.f64.set(a.subarray(i * n, i * n + n), o + i * ld);
  return k.sym_max_eig_f64(KERNEL_RESERVED_BYTES, n, ld);
}

/** The JavaScript form of {@link symmetricMaxEigenvalue} (the reference the kernel is tested against). */
export function symmetricMaxEigenvalueJs(a: Float64Array, n: number): number {
  const m = Float64Array.from(a.subarray(0, n * n));
  for (let sweep = 0; sweep < 60; sweep++) {
    let off = 0;
    let diag = 0;
    for (let i = 0; i < n; i++) {
      diag += m[i * n + i] * m[i * n + i];
      for (let j = i + 1; j < n; j++) off += m[i * n + j] * m[i * n + j];
    }
    if (off <= 1e-30 * diag || off === 0) break;
    for (let p = 0; p < n; p++) {
      for (let q = p + 1; q < n; q++) {
        const apq = m[p * n + q];
        if (apq === 0) continue;
        const app = m[p * n + p];
        const aqq = m[q * n + q];
        // Rotation angle zeroing m[p][q] (Golub & Van Loan, Alg. 8.5.2).
        const theta = (aqq - app) / (2 * apq);
        const t = Math.sign(theta || 1) / (Math.abs(theta) + Math.sqrt(theta * theta + 1));
        const c = 1 / Math.sqrt(t * t + 1);
        const s = t * c;
        for (let k = 0; k < n; k++) {
          const akp = m[k * n + p];
          const akq = m[k * n + q];
          m[k * n + p] = c * akp - s * akq;
          m[k * n + q] = s * akp + c * akq;
        }
        for (let k = 0; k < n; k++) {
          const apk = m[p * n + k];
          const aqk = m[q * n + k];
          m[p * n + k] = c * apk - s * aqk;
          m[q * n + k] = s * apk + c * aqk;
        }
      }
    }
  }
  let max = Number.NEGATIVE_INFINITY;
  for (let i = 0; i < n; i++) max = Math.max(max, m[i * n + i]);
  return max;
}
