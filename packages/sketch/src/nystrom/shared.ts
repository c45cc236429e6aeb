/**
 * Pieces shared by the Nyström and coreset attention methods (nystrom/, coreset/): input checks,
 * the softmax scale, exp-kernel blocks with a stabilizing shift, and the pseudo-inverse of the
 * small landmark matrix (exact by SVD, or the Nyströmformer iteration).
 */
import { Matrix, NumericalError, ValueError } from "@randattn/core";
import { assertInteger, assertNumber, describe } from "@randattn/core/internal";
import { golubKahanSvd } from "../lowrank/gkr.js";

export { checkAttentionInputs } from "../inputs.js";

/** β of exp(β⟨q, k⟩): the given scale (> 0) or core's default 1/√d_QK. */
export function resolveScale(scale: number | undefined, d: number, argument = "options.scale"): number {
  if (scale === undefined) return 1 / Math.sqrt(d);
  assertNumber(scale, argument, { positive: true });
  return scale;
}

/** Squared row norms of a matrix. */
export function rowNorms2(a: Matrix): Float64Array {
  const out = new Float64Array(a.rows);
  for (let i = 0; i < a.rows; i++) {
    let s = 0;
    for (let j = 0; j < a.cols; j++) s += a.data[i * a.cols + j] ** 2;
    out[i] = s;
  }
  return out;
}

/** X Yᵀ for row-major X (m × d), Y (n × d), scaled by `scale`. */
export function scaledGram(x: Matrix, y: Matrix, scale: number): Matrix {
  const m = x.rows;
  const n = y.rows;
  const d = x.cols;
  const out = new Matrix(m, n);
  for (let i = 0; i < m; i++) {
    for (let j = 0; j < n; j++) {
      let s = 0;
      for (let c = 0; c < d; c++) s += x.data[i * d + c] * y.data[j * d + c];
      out.data[i * n + j] = scale * s;
    }
  }
  return out;
}

/** Row-wise softmax of logits in place (max-shifted); returns the matrix. */
export function softmaxInPlace(l: Matrix): Matrix {
  const n = l.cols;
  for (let i = 0; i < l.rows; i++) {
    let mx = Number.NEGATIVE_INFINITY;
    for (let j = 0; j < n; j++) mx = Math.max(mx, l.data[i * n + j]);
    let z = 0;
    for (let j = 0; j < n; j++) {
      const e = Math.exp(l.data[i * n + j] - mx);
      l.data[i * n + j] = e;
      z += e;
    }
    for (let j = 0; j < n; j++) l.data[i * n + j] /= z;
  }
  return l;
}

/** Plain dense product A B (small matrices of the landmark algebra). */
export function mul(a: Matrix, b: Matrix): Matrix {
  const m = a.rows;
  const k = a.cols;
  const n = b.cols;
  const out = new Matrix(m, n);
  for (let i = 0; i < m; i++) {
    for (let t = 0; t < k; t++) {
      const av = a.data[i * k + t];
      if (av === 0) continue;
      for (let j = 0; j < n; j++) out.data[i * n + j] += av * b.data[t * n + j];
    }
  }
  return out;
}

/** How the m × m landmark matrix is pseudo-inverted. */
export type PseudoInverse = "iterative" | "exact";

/** Flops counted for an exact SVD-based pseudo-inverse of an m × m matrix (Golub–Van Loan: ≈ 21m³ for U, Σ, V, + 2m³ to form V Σ⁺ Uᵀ). */
export function exactPinvFlops(m: number): number {
  return 23 * m * m * m;
}

/**
 * Moore–Penrose pseudo-inverse of a square matrix by ml-matrix's SVD (run bit for bit on flat arrays
 * by lowrank/gkr.ts: issue 14), singular values below max(m)·eps·σ₁ treated as 0 (numpy's `pinv` rule).
 */
export function exactPinv(a: Matrix): Matrix {
  const svd = golubKahanSvd(a.data, a.rows, a.cols, true);
  const s = svd.s;
  const u = svd.u as Float64Array; // rows × r, r = min(rows, cols) = s.length
  const v = svd.v as Float64Array; // cols × r
  const r = s.length;
  const cut = Math.max(a.rows, a.cols) * Number.EPSILON * (s[0] ?? 0);
  const out = new Matrix(a.cols, a.rows);
  for (let t = 0; t < s.length; t++) {
    if (!(s[t] > cut)) continue;
    const inv = 1 / s[t];
    for (let i = 0; i < a.cols; i++) {
      const vi = v[i * r + t] * inv;
      if (vi === 0) continue;
      for (let j = 0; j < a.rows; j++) out.data[i * a.rows + j] += vi * u[j * r + t];
    }
  }
  return out;
}

/**
 * Nyströmformer's iterative pseudo-inverse (Xiong et al. 2021, Eq. 13–14, after Razavi et al. 2014):
 * Z₀ = Aᵀ/(‖A‖₁‖A‖_∞), Z_{j+1} = ¼ Z_j (13I − A Z_j (15I − A Z_j (7I − A Z_j))).
 * Each iteration costs four m × m products (8m³ flops).
 */
export function iterativePinv(a: Matrix, iterations: number): Matrix {
  assertInteger(iterations, "options.pinvIterations", 0);
  const m = a.rows;
  let norm1 = 0;
  let normInf = 0;
  for (let j = 0; j < m; j++) {
    let c = 0;
    for (let i = 0; i < m; i++) c += Math.abs(a.data[i * m + j]);
    norm1 = Math.max(norm1, c);
  }
  for (let i = 0; i < m; i++) {
    let r = 0;
    for (let j = 0; j < m; j++) r += Math.abs(a.data[i * m + j]);
    normInf = Math.max(normInf, r);
  }
  if (!(norm1 * normInf > 0)) throw new NumericalError("landmarks", "a nonzero landmark matrix", "‖A‖₁‖A‖_∞ = 0");
  let z = new Matrix(m, m);
  for (let i = 0; i < m; i++) for (let j = 0; j < m; j++) z.data[j * m + i] = a.data[i * m + j] / (norm1 * normInf);
  const shiftSub = (c: number, x: Matrix) => {
    const out = new Matrix(m, m);
    for (let i = 0; i < m * m; i++) out.data[i] = -x.data[i];
    for (let i = 0; i < m; i++) out.data[i * m + i] += c;
    return out;
  };
  for (let it = 0; it < iterations; it++) {
    const az = mul(a, z);
    const t1 = mul(az, shiftSub(7, az));
    const t2 = mul(az, shiftSub(15, t1));
    const next = mul(z, shiftSub(13, t2));
    for (let i = 0; i < m * m; i++) next.data[i] *= 0.25;
    z = next;
  }
  return z;
}

/**
 * Refuses `options.mask`: the method's paper gives no causal (or other masked) form, and silently
 * ignoring a mask would return unmasked attention.
 */
export function refuseMask(options: object, method: string): void {
  const mask = (options as { mask?: unknown }).mask;
  if (mask !== undefined) {
    throw new ValueError("options.mask", `no mask: ${method}'s paper gives no causal or masked form`, describe(mask));
  }
}
