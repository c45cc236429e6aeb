/**
 * The two products of CholeskyQR on a tall sample Y (m × ℓ, m ≫ ℓ), with their structure used
 * (issue 14: the 16384 × 74 samples of the latent RSVD spend ≈ a fifth of the call here):
 *
 * - the Gram matrix G = YᵀY is symmetric: only its upper block triangle is computed (SYRK, ≈ half
 *   the multiply-adds), and Y's depth slice is packed once into 4-column panels that serve as both
 *   operands (the f64 kernels' A and B panels share one layout since MR = NR = 4);
 * - Q = Y·R⁻¹ with R⁻¹ upper triangular (TRMM): column panel j of Q sums only over the first
 *   4(j + 1) rows of R⁻¹ (≈ half the multiply-adds), Y read in place by the row-major-A kernel.
 *
 * Both are bit-identical to the plain products `matmulTransAInto(Y, Y, …)` and `matmulInto(Y, R⁻¹, …)`
 * they replace: every entry is the same sum of depth-256 slices in the same order (the skipped terms
 * are products with exact zeros of the triangle — only the sign of an all-zero sum could differ).
 * They run on the kernels' resident scratch (core kernels/resident.ts) — so, like every user of it,
 * never inside another driver's call that keeps data there (the random-feature drivers do not call
 * the low-rank code) — and fall back to the plain products wherever `kernelBackendFor` would not take
 * the SIMD kernels (scalar backend, tiny shapes).
 */
import { RESIDENT_BASE_BYTES, RESIDENT_KC, kernelBackendFor, matmulInto, matmulTransAInto, residentKernels } from "@randattn/core/internal";

/** Panel width of the f64 kernels (MR = NR = 4, see core's resident.ts). */
const P = 4;

/** Rows of Y copied into kernel memory per call of the row-major-A kernel (≈ 150 KiB at ℓ = 74: L2). */
const TRMM_CHUNK_ROWS = 256;

const roundUp = (x: number, r: number) => Math.ceil(x / r) * r;

/** Floats at the start of the resident scratch held by a live {@link PackedTallOperand} (0 when none). */
let reservedFloats = 0;

/** First float of the scratch the Gram and triangular products may use (above a packed operand). */
function scratchBase(): number {
  return RESIDENT_BASE_BYTES / 8 + reservedFloats;
}

/**
 * G = YᵀY (ℓ × ℓ, exactly symmetric) for Y (m × ℓ, row-major): the upper block triangle on the SIMD
 * kernel, mirrored into the lower one. Same bits as `matmulTransAInto(y, y, g, m, ℓ, ℓ)` followed by
 * the symmetrization ½(g_ij + g_ji) (the kernel's g_ij and g_ji are the same products summed in the
 * same order, so that average is exact).
 */
export function gramMatrix(y: Float64Array, m: number, l: number): Float64Array {
  const g = new Float64Array(l * l);
  if (kernelBackendFor(l, m, l) !== "wasm") {
    matmulTransAInto(y, y, g, m, l, l, false);
    for (let i = 0; i < l; i++)
      for (let j = i + 1; j < l; j++) {
        const v = 0.5 * (g[i * l + j] + g[j * l + i]);
        g[i * l + j] = v;
        g[j * l + i] = v;
      }
    return g;
  }
  const lp = roundUp(l, P);
  const kc = Math.min(RESIDENT_KC, m);
  const base = scratchBase();
  const panels = base; // lp × kc floats: Y's depth slice in 4-column panels
  const cOff = base + roundUp(lp * kc, 2); // ℓ × ℓ, 16-byte aligned
  const K = residentKernels(cOff - RESIDENT_BASE_BYTES / 8 + l * l);
  const f = K.f64;
  f.fill(0, cOff, cOff + l * l);
  const full = l - (l % P);
  for (let p0 = 0; p0 < m; p0 += kc) {
    const kcur = Math.min(kc, m - p0);
    // panel jp, entry (p, jj) at jp·kcur·4 + p·4 + jj = Y[p0 + p, 4·jp + jj] (zero past column ℓ)
    for (let p = 0; p < kcur; p++) {
      const src = (p0 + p) * l;
      let d = panels + p * P;
      for (let j = 0; j < full; j += P, d += kcur * P) {
        f[d] = y[src + j];
        f[d + 1] = y[src + j + 1];
        f[d + 2] = y[src + j + 2];
        f[d + 3] = y[src + j + 3];
      }
      if (full < l) for (let jj = 0; jj < P; jj++) f[d + jj] = full + jj < l ? y[src + full + jj] : 0;
    }
    // row panel i against column panels i…: the upper block triangle (diagonal blocks whole)
    for (let i = 0; i < l; i += P) {
      const a = panels + i * kcur; // panel i/4 starts at (i/4)·kcur·4 = i·kcur
      K.gemm_f64(a * 8, a * 8, (cOff + i * l + i) * 8, l, Math.min(P, l - i), l - i, kcur);
    }
  }
  for (let i = 0; i < l; i++) {
    const row = cOff + i * l;
    g[i * l + i] = f[row + i];
    for (let j = i + 1; j < l; j++) {
      const v = f[row + j];
      g[i * l + j] = v;
      g[j * l + i] = v;
    }
  }
  return g;
}

/**
 * out (m × ℓ) = Y (m × ℓ) · U (ℓ × ℓ, upper triangular, row-major; entries below the diagonal are
 * ignored) for a tall Y. Same bits as `matmulInto(y, u, out, m, ℓ, ℓ, false)` on a U whose lower
 * triangle is zero, up to the sign of a zero.
 */
export function upperTriangularRightProduct(y: Float64Array, u: Float64Array, out: Float64Array, m: number, l: number): void {
  if (kernelBackendFor(m, l, l) !== "wasm") {
    matmulInto(y, u, out, m, l, l, false);
    return;
  }
  const lp = roundUp(l, P);
  const base = scratchBase();
  const bOff = base; // U in 4-column panels of depth ℓ
  const aOff = base + roundUp(lp * l, 2);
  const rows = Math.min(m, TRMM_CHUNK_ROWS);
  const cOff = aOff + roundUp(rows * l, 2);
  const K = residentKernels(cOff - RESIDENT_BASE_BYTES / 8 + roundUp(rows, P) * l);
  const f = K.f64;
  for (let p = 0; p < l; p++)
    for (let j = 0; j < lp; j++) f[bOff + (j >> 2) * l * P + p * P + (j & 3)] = j < l && p <= j ? u[p * l + j] : 0;
  for (let r0 = 0; r0 < m; r0 += rows) {
    const mc = Math.min(rows, m - r0);
    f.set(y.subarray(r0 * l, (r0 + mc) * l), aOff);
    for (let j = 0; j < l; j += P) {
      // column panel j needs rows p < j + 4 of U only (U is upper triangular)
      const depth = Math.min(l, j + P);
      const b = bOff + j * l; // panel j/4 starts at (j/4)·ℓ·4 = j·ℓ
      for (let p0 = 0; p0 < depth; p0 += RESIDENT_KC) {
        const kcur = Math.min(RESIDENT_KC, depth - p0);
        K.gemm_f64_ra((aOff + p0) * 8, l, (b + p0 * P) * 8, l, (cOff + j) * 8, l, mc, Math.min(P, l - j), kcur, p0 > 0 ? 1 : 0);
      }
    }
    out.set(f.subarray(cOff, cOff + mc * l), r0 * l);
  }
}

/** Largest m · roundUp(n, 4) kept packed by {@link PackedTallOperand} (128 MiB of kernel memory). */
export const PACKED_OPERAND_MAX_FLOATS = 1 << 24;

/**
 * A tall A (m × n, row-major) as the B operand of Yᵀ·A, packed ONCE into 4-column panels in the
 * kernels' resident scratch (slice by depth-256 slice, `gemmWasm`'s own panel layout) and reused by
 * every later product of the same call — the range finder's Aᵀ·Y per power step and QB's B = QᵀA
 * all multiply the same A, and `gemmWasm` repacks it for each (a scatter of all m·n entries, ≈ a
 * fifth of such a product; issue 14). The first product packs while it multiplies, so it costs what
 * `transposedProduct` costs; each later one skips the packing. Bit for bit `transposedProduct`'s
 * result (same panels, same kernel, same slice order).
 *
 * Lifetime: one call of the driver that owns it. While live it holds the bottom of the resident
 * scratch (the Gram and triangular products above move up); {@link PackedTallOperand.release} frees
 * it. Nothing else may use the resident scratch meanwhile (core's random-feature driver does, so it
 * must not run inside). The kernel memory grows to hold the panels and, WebAssembly memory being
 * unable to shrink, keeps that size for the thread's life — hence the cap of
 * {@link PACKED_OPERAND_MAX_FLOATS}; `create` returns null past it, on the scalar backend, or when
 * another operand is live (then the plain product runs).
 */
export class PackedTallOperand {
  private packedSlices = 0;
  private released = false;

  private constructor(
    private readonly a: Float64Array,
    private readonly m: number,
    private readonly n: number,
  ) {}

  /** A packed operand for products Yᵀ·A with Y of up to `maxCols` columns, or null (see the class doc). */
  static create(a: Float64Array, m: number, n: number, maxCols: number): PackedTallOperand | null {
    const np = roundUp(n, P);
    if (reservedFloats !== 0 || m * np > PACKED_OPERAND_MAX_FLOATS || kernelBackendFor(maxCols, m, n) !== "wasm") return null;
    reservedFloats = roundUp(m * np, 2);
    return new PackedTallOperand(a, m, n);
  }

  /** Frees the scratch (idempotent); later products fall back to the plain one. */
  release(): void {
    if (!this.released) {
      this.released = true;
      reservedFloats = 0;
    }
  }

  /**
   * Yᵀ A (c × n, row-major) for Y (m × c, row-major) — `transposedProduct(a, y, m, n, c)`'s bits.
   * Falls back to the plain product once released or when this shape would not take the SIMD kernel.
   */
  transposedProduct(y: Float64Array, c: number): Float64Array {
    const { a, m, n } = this;
    const out = new Float64Array(c * n);
    if (this.released || kernelBackendFor(c, m, n) !== "wasm") {
      matmulTransAInto(y, a, out, m, c, n, false);
      return out;
    }
    const np = roundUp(n, P);
    const cp = roundUp(c, P);
    const base = RESIDENT_BASE_BYTES / 8;
    const yOff = base + reservedFloats; // Yᵀ's depth slice in 4-row panels
    const cOff = yOff + roundUp(cp * RESIDENT_KC, 2);
    const K = residentKernels(cOff - base + c * n);
    const f = K.f64;
    f.fill(0, cOff, cOff + c * n);
    const fullY = c - (c % P);
    for (let p0 = 0; p0 < m; p0 += RESIDENT_KC) {
      const kcur = Math.min(RESIDENT_KC, m - p0);
      const aPanels = base + p0 * np; // this slice's panels: panel j at j·kcur·4, entry (p, jj) at p·4 + jj
      if (p0 >= this.packedSlices) {
        packRowsAsPanels(a, n, f, aPanels, p0, kcur);
        this.packedSlices = p0 + kcur;
      }
      // Yᵀ's slice as MR-row panels = Y's rows p0… as 4-column panels (MR = NR = 4)
      for (let p = 0; p < kcur; p++) {
        const src = (p0 + p) * c;
        let d = yOff + p * P;
        for (let j = 0; j < fullY; j += P, d += kcur * P) {
          f[d] = y[src + j];
          f[d + 1] = y[src + j + 1];
          f[d + 2] = y[src + j + 2];
          f[d + 3] = y[src + j + 3];
        }
        if (fullY < c) for (let jj = 0; jj < P; jj++) f[d + jj] = fullY + jj < c ? y[src + fullY + jj] : 0;
      }
      K.gemm_f64(yOff * 8, aPanels * 8, cOff * 8, n, c, n, kcur);
    }
    out.set(f.subarray(cOff, cOff + c * n));
    return out;
  }
}

/** Rows p0…p0+kcur−1 of A (· × n) into 4-column panels of depth kcur at `off` (zero past column n), 8 rows at a time (L1). */
function packRowsAsPanels(a: Float64Array, n: number, f: Float64Array, off: number, p0: number, kcur: number): void {
  const full = n - (n % P);
  for (let pb = 0; pb < kcur; pb += 8) {
    const pe = Math.min(kcur, pb + 8);
    for (let j = 0; j < full; j += P) {
      let src = (p0 + pb) * n + j;
      let d = off + j * kcur + pb * P;
      for (let p = pb; p < pe; p++, src += n, d += P) {
        f[d] = a[src];
        f[d + 1] = a[src + 1];
        f[d + 2] = a[src + 2];
        f[d + 3] = a[src + 3];
      }
    }
  }
  if (full < n) {
    const d0 = off + full * kcur;
    for (let p = 0; p < kcur; p++) for (let jj = 0; jj < P; jj++) f[d0 + p * P + jj] = full + jj < n ? a[(p0 + p) * n + full + jj] : 0;
  }
}
