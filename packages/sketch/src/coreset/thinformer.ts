/**
 * Thinformer (Carrell, Gong, Shetty, Dwivedi & Mackey, "Low-rank thinning", ICML 2025,
 * arXiv 2502.12063, §5): softmax attention over a coreset of the key–value pairs chosen by kernel
 * halving (coreset/halving.ts), with uniform coreset weights:
 *
 *   Ŷ_i = Σ_{j∈S} e^{β⟨q_i, k_j⟩} v_j / Σ_{j∈S} e^{β⟨q_i, k_j⟩}.
 *
 * Two thinning algorithms: `"kh-compress"` (the paper's: KH-Compress with oversampling g, near
 * linear, |S| = 2^g·√N for N = 4^{g+j}; 16·2^g for N = 512) and `"kh"` (h rounds of kernel halving,
 * |S| = ⌊N/2^h⌋, O(N²) entries).
 *
 * Pairs are thinned under the attention kernel k((k, v), (k', v')) = e^{β⟨k, k'⟩}(⟨v, v'⟩ + 1),
 * whose feature map φ(k) ⊗ (v, 1) reproduces both the numerator N(q) = (1/n)Σ e^{β⟨q,k_j⟩} v_j and
 * the normalizer Z(q) = (1/n)Σ e^{β⟨q,k_j⟩} as inner products with φ(q) ⊗ e_c. Hence, with
 * M = MMD_k(full set, coreset): ‖(ΔN(q), ΔZ(q))‖₂ ≤ ‖φ(q)‖·M = e^{β‖q‖²/2}·M =: e(q), and since
 * Z(Y − Ŷ) = ΔN − ΔZ·Ŷ,
 *
 *   ‖Ŷ_i − Y_i‖₂ ≤ √(1 + ‖Ŷ_i‖²) · e(q_i) / (Ẑ_i − e(q_i))   whenever Ẑ_i > e(q_i).
 *
 * This A-POSTERIORI certificate (computed when `certificate: true`, O(N²) kernel entries, costed
 * separately) is what we report — not the paper's a-priori theorem, whose constants need the
 * kernel's rank/eigenvalue parameters. The kernel is scaled by e^{−β max‖k‖²} (halving is
 * invariant to a positive factor); the certificate undoes the scaling in the log domain.
 * With `"kh"`, N_KV mod 2^h pairs (drawn uniformly) are dropped first so that every round pairs
 * all points. Exact limits: h = 0, or 4^g ≥ N_KV, keeps every pair → softmax attention.
 * No causal form: `options.mask` is refused (ValueError).
 */
import { Matrix, RandomStream, type SeedKey, derive, selectRows } from "@randattn/core";
import {
  assertInteger,
  assertNumber,
  assertOneOf,
  assertRequiredOptions,
  sequentialMatmulInto,
  transposeInto,
} from "@randattn/core/internal";
import { BITS_PER_UNIFORM } from "../lowrank/rpcholesky.js";
import type { Cost } from "../operators/types.js";
import { checkAttentionInputs, refuseMask, resolveScale, rowNorms2 } from "../nystrom/shared.js";
import { type IndexKernel, compress, thin } from "./halving.js";

/** Options of {@link thinformerAttention}. */
export interface ThinformerOptions {
  /** Thinning algorithm (module comment). @default "kh-compress" */
  algorithm?: "kh-compress" | "kh";
  /** g ≥ 0, KH-Compress's oversampling (coreset ≈ 2^g·√N_KV). @default 1 */
  oversampling?: number;
  /** h, halving rounds of `"kh"`: the coreset has ⌊N_KV/2^h⌋ pairs (0 ≤ h, 2^h ≤ N_KV). @default 1 */
  halvings?: number;
  /** β of exp(β⟨q, k⟩). @default 1/√d_QK */
  scale?: number;
  /** δ ∈ (0, 1), kernel halving's failure probability. @default 0.5 */
  delta?: number;
  /** Compute the MMD and the per-query error certificate (O(N_KV²) entries). @default false */
  certificate?: boolean;
}

/** The a-posteriori certificate of {@link thinformerAttention}. */
export interface ThinningCertificate {
  /** MMD between the uniform distributions on all pairs and on the coreset, under the attention kernel (unscaled). */
  readonly mmd: number;
  /** Per query: the bound on ‖Ŷ_i − Y_i‖₂ (Infinity where Ẑ_i ≤ e(q_i)). */
  readonly rowErrorBound: Float64Array;
  /** Cost of computing the certificate (not included in `cost`). */
  readonly cost: Cost & { kernelEvaluations: number };
}

/** What {@link thinformerAttention} returns. */
export interface ThinformerResult {
  readonly output: Matrix;
  readonly cost: Cost & { kernelEvaluations: number; randomBits: number };
  /** Indices of the kept key–value pairs. */
  readonly coreset: Int32Array;
  readonly certificate?: ThinningCertificate;
}

/** The scaled attention kernel on pair indices: e^{β(⟨k_a,k_b⟩ − M)}(⟨v_a, v_b⟩ + 1). */
export function attentionPairKernel(
  keys: Matrix,
  values: Matrix,
  beta: number,
): { kernel: IndexKernel; shift: number; entryFlops: number } {
  const d = keys.cols;
  const dV = values.cols;
  let shift = 0;
  for (const v of rowNorms2(keys)) shift = Math.max(shift, v);
  const kernel: IndexKernel = (a, b) => {
    let s = 0;
    for (let c = 0; c < d; c++) s += keys.data[a * d + c] * keys.data[b * d + c];
    let t = 1;
    for (let c = 0; c < dV; c++) t += values.data[a * dV + c] * values.data[b * dV + c];
    return Math.exp(beta * (s - shift)) * t;
  };
  return { kernel, shift, entryFlops: 2 * d + 2 * dV + 3 };
}

/** Largest N_KV for which the certificate tabulates the pair kernel (two N² arrays: 64 MiB at 2048). */
const DENSE_PAIR_KERNEL_MAX = 2048;

/**
 * {@link attentionPairKernel}'s kernel tabulated for every pair, the same bits: ⟨k_a, k_b⟩ is one sum
 * from 0 over c and ⟨v_a, v_b⟩ + 1 one sum from 1 (0 + 1·1, then the v terms: the closure's t = 1;
 * t += …), both as core's `sequentialMatmulInto` products (the closure's loops, on the WebAssembly
 * kernel); e^{β(s − M)}·t is the closure's expression. The certificate reads all N² + N|S| + |S|²
 * entries (issue 14: the closure's inner loops were 10 % of the frontier sweep).
 */
export function densePairKernel(keys: Matrix, values: Matrix, beta: number, shift: number): IndexKernel {
  const n = keys.rows;
  const d = keys.cols;
  const w = values.cols + 1;
  const kt = new Float64Array(d * n);
  transposeInto(keys.data, kt, n, d);
  const v1 = new Float64Array(n * w); // [1 | V]
  for (let a = 0; a < n; a++) {
    v1[a * w] = 1;
    v1.set(values.data.subarray(a * (w - 1), (a + 1) * (w - 1)), a * w + 1);
  }
  const v1t = new Float64Array(w * n);
  transposeInto(v1, v1t, n, w);
  const dots = new Float64Array(n * n);
  const vdots = new Float64Array(n * n);
  sequentialMatmulInto(keys.data, kt, dots, n, d, n);
  sequentialMatmulInto(v1, v1t, vdots, n, w, n);
  return (a, b) => Math.exp(beta * (dots[a * n + b] - shift)) * vdots[a * n + b];
}

/**
 * Squared MMD between the uniform distributions on `all` and on `sub` under `kernel`, plus a
 * rounding allowance (|S| · eps · max|entry| per double sum) so that the result bounds the exact value.
 */
export function mmdSquared(all: Int32Array, sub: Int32Array, kernel: IndexKernel): { value: number; evaluations: number } {
  const n = all.length;
  const s = sub.length;
  let kk = 0;
  let ks = 0;
  let ss = 0;
  let mx = 0;
  for (const a of all) {
    for (const b of all) {
      const v = kernel(a, b);
      kk += v;
      mx = Math.max(mx, Math.abs(v));
    }
    for (const b of sub) ks += kernel(a, b);
  }
  for (const a of sub) for (const b of sub) ss += kernel(a, b);
  const value = kk / (n * n) - (2 * ks) / (n * s) + ss / (s * s);
  const allowance = 4 * (n * n + s) * Number.EPSILON * mx;
  return { value: Math.max(0, value) + allowance, evaluations: n * n + n * s + s * s };
}

/**
 * Thinformer attention (module comment).
 * @param seed dropped pairs and halving signs come from `derive(seed, "thinformer")`.
 * @throws ShapeError / NonFiniteError on inputs; ValueError on options.
 */
export function thinformerAttention(
  queries: Matrix,
  keys: Matrix,
  values: Matrix,
  options: ThinformerOptions,
  seed: SeedKey,
): ThinformerResult {
  assertRequiredOptions(options, "options");
  checkAttentionInputs(queries, keys, values);
  const opts = options ?? ({} as ThinformerOptions);
  refuseMask(opts, "Thinformer");
  const n = keys.rows;
  const nQ = queries.rows;
  const d = keys.cols;
  const dV = values.cols;
  const algorithm = opts.algorithm ?? "kh-compress";
  assertOneOf(algorithm, "options.algorithm", ["kh-compress", "kh"] as const);
  const h = algorithm === "kh" ? (opts.halvings ?? 1) : 0;
  assertInteger(h, "options.halvings", 0, Math.floor(Math.log2(n)));
  const g = opts.oversampling ?? 1;
  assertInteger(g, "options.oversampling", 0, 30);
  const beta = resolveScale(opts.scale, d);
  const delta = opts.delta ?? 0.5;
  assertNumber(delta, "options.delta", { positive: true, max: 1 });
  const key = derive(seed, "thinformer");
  // Drop n mod 2^h pairs uniformly (partial Fisher–Yates), keeping the rest in input order.
  const drop = n % 2 ** h;
  const keepMask = new Uint8Array(n).fill(1);
  if (drop > 0) {
    const rng = new RandomStream(derive(key, "drop"));
    const perm = Int32Array.from({ length: n }, (_, i) => i);
    for (let t = 0; t < drop; t++) {
      const j = t + Math.floor(rng.uniform() * (n - t));
      [perm[t], perm[j]] = [perm[j], perm[t]];
      keepMask[perm[t]] = 0;
    }
  }
  const points = Int32Array.from({ length: n - drop }, () => 0);
  for (let i = 0, t = 0; i < n; i++) if (keepMask[i]) points[t++] = i;
  const { kernel, shift, entryFlops } = attentionPairKernel(keys, values, beta);
  const thinned =
    algorithm === "kh"
      ? thin(points, kernel, h, delta, derive(key, "halving"))
      : compress(points, kernel, g, delta, derive(key, "compress"));
  const coreset = thinned.kept;
  const s = coreset.length;
  const ks = selectRows(keys, coreset);
  const vs = selectRows(values, coreset);
  const output = new Matrix(nQ, dV);
  const logZhat = new Float64Array(nQ); // log of (1/s) Σ_S e^{β⟨q, k_j⟩}
  const logits = new Float64Array(s);
  for (let i = 0; i < nQ; i++) {
    let mx = Number.NEGATIVE_INFINITY;
    for (let j = 0; j < s; j++) {
      let v = 0;
      for (let c = 0; c < d; c++) v += queries.data[i * d + c] * ks.data[j * d + c];
      logits[j] = beta * v;
      mx = Math.max(mx, logits[j]);
    }
    let z = 0;
    for (let j = 0; j < s; j++) {
      const e = Math.exp(logits[j] - mx);
      z += e;
      for (let c = 0; c < dV; c++) output.data[i * dV + c] += e * vs.data[j * dV + c];
    }
    for (let c = 0; c < dV; c++) output.data[i * dV + c] /= z;
    logZhat[i] = mx + Math.log(z / s);
  }
  const flops =
    thinned.kernelEvaluations * entryFlops + 4 * thinned.kernelEvaluations + nQ * s * (2 * d + 1) + 2 * nQ * s * (dV + 1) + nQ * dV;
  const floatsStored = s * (d + dV) + 3 * (n >> 1) + s;
  const result: ThinformerResult = {
    output,
    cost: {
      flops,
      floatsStored,
      kernelEvaluations: thinned.kernelEvaluations + nQ * s,
      randomBits: thinned.randomBits + BITS_PER_UNIFORM * drop,
    },
    coreset,
  };
  if (!opts.certificate) return result;
  const all = Int32Array.from({ length: n }, (_, i) => i);
  const mmd2 = mmdSquared(all, coreset, n <= DENSE_PAIR_KERNEL_MAX ? densePairKernel(keys, values, beta, shift) : kernel);
  // log MMD of the unscaled kernel = log MMD_scaled + β·shift/2.
  const logMmd = 0.5 * Math.log(mmd2.value) + 0.5 * beta * shift;
  const qn = rowNorms2(queries);
  const rowErrorBound = new Float64Array(nQ);
  for (let i = 0; i < nQ; i++) {
    const rho = Math.exp(0.5 * beta * qn[i] + logMmd - logZhat[i]); // e(q_i)/Ẑ_i
    let y2 = 0;
    for (let c = 0; c < dV; c++) y2 += output.data[i * dV + c] ** 2;
    rowErrorBound[i] = rho < 1 ? (Math.sqrt(1 + y2) * rho) / (1 - rho) : Number.POSITIVE_INFINITY;
  }
  return {
    ...result,
    certificate: {
      mmd: Math.exp(logMmd),
      rowErrorBound,
      cost: {
        flops: mmd2.evaluations * (entryFlops + 1) + nQ * (2 * d + 2 * dV + 8),
        floatsStored: nQ,
        kernelEvaluations: mmd2.evaluations,
      },
    },
  };
}
