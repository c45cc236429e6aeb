/**
 * The largest eigenvalue of a small symmetric matrix, by cyclic Jacobi rotations (Golub & Van Loan,
 * Alg. 8.5.2–8.5.3): exact to rounding and deterministic — the experiments' spectral norms
 * ‖M‖₂ = √λ_max(MᵀM) of every task's error (packages/experiments base/metrics.ts) are computed with
 * it, so its bits are in the committed results. The kernel module's `sym_max_eig_f64`
 * (kernels/watJacobi.ts) performs the same operations in the same order, 2.5–3.8× faster; the
 * JavaScript form is the reference and the fallback without WebAssembly SIMD.
 */
import { getKernelBackend, ensureKernelMemory, getKernels, packPanelsF64, wasmSimdAvailable } from "../kernels/gemm.js";
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

/**
 * The power-iteration estimate of the largest eigenvalue of a symmetric positive semidefinite n × n
 * matrix `g` (row-major; not modified) that the experiments' spectral norm uses past its exact
 * (Jacobi) sizes: from v₀ = (1/√n)·1, `steps` times w = g v, λ = ‖w‖₂, v = w / λ; returns the last
 * λ, or 0 as soon as some w is zero. Every w_i = ((0 + g_i0·v_0) + g_i1·v_1) + … and ‖w‖² = Σ w_i²
 * are summed in index order, so the bits are those of the written-out loops
 * ({@link powerIterationEigenvalueJs}). With WebAssembly SIMD (backend not "scalar") each product
 * runs on core's one-row kernel `gemv_f64_seq` — the same terms (g_ij·v_j = v_j·g_ij exactly) in the
 * same order — over gᵀ packed once into panels: issue 14 measured 200 steps at n = 512 (the frontier
 * sweep's ‖D⁻¹A‖₂) at ≈ 1/5 of the JavaScript loop's time.
 * @throws ValueError when n is not a non-negative integer or steps not a positive integer; ShapeError
 *   when `g` holds fewer than n × n entries.
 */
export function powerIterationEigenvalue(g: Float64Array, n: number, steps: number): number {
  if (!Number.isInteger(n) || n < 0) throw new ValueError("n", "a non-negative integer", String(n));
  if (!Number.isInteger(steps) || steps < 1) throw new ValueError("steps", "a positive integer", String(steps));
  if (g.length < n * n) throw new ShapeError("g", `${n} × ${n} = ${n * n} entries`, `${g.length}`);
  if (n === 0) return 0;
  if (getKernelBackend() === "scalar" || !wasmSimdAvailable()) return powerIterationEigenvalueJs(g, n, steps);
  const k = getKernels();
  const panels = Math.ceil(n / 4);
  const base = KERNEL_RESERVED_BYTES / 8;
  const xo = base + panels * 4 * n; // v (n floats) after gᵀ's panels
  const co = xo + n + (n & 1); // w: panels · 4 floats (16-byte aligned)
  ensureKernelMemory(k, (co + panels * 4) * 8);
  const m = k.f64;
  // gᵀ in 4-column panels of depth n: panel q, row p, lane t = (gᵀ)[p, 4q + t] = g[4q + t, p].
  packPanelsF64(g, true, n, n, m, base);
  m.fill(1 / Math.sqrt(n), xo, xo + n);
  let lambda = 0;
  for (let it = 0; it < steps; it++) {
    k.gemv_f64_seq(xo * 8, base * 8, co * 8, n, panels);
    let norm = 0;
    for (let i = 0; i < n; i++) norm += m[co + i] * m[co + i];
    norm = Math.sqrt(norm);
    if (norm === 0) return 0;
    lambda = norm;
    for (let i = 0; i < n; i++) m[xo + i] = m[co + i] / norm;
  }
  return lambda;
}

/** The JavaScript form of {@link powerIterationEigenvalue}: the written-out loops (the reference). */
export function powerIterationEigenvalueJs(g: Float64Array, n: number, steps: number): number {
  let v = new Float64Array(n).fill(1 / Math.sqrt(n));
  let lambda = 0;
  for (let it = 0; it < steps; it++) {
    const w = new Float64Array(n);
    for (let i = 0; i < n; i++) {
      let s = 0;
      for (let j = 0; j < n; j++) s += g[i * n + j] * v[j];
      w[i] = s;
    }
    let norm = 0;
    for (let i = 0; i < n; i++) norm += w[i] * w[i];
    norm = Math.sqrt(norm);
    if (norm === 0) return 0;
    lambda = norm;
    for (let i = 0; i < n; i++) w[i] /= norm;
    v = w;
  }
  return lambda;
}
