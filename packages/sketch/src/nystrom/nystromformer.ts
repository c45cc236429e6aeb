/**
 * Nyströmformer (Xiong et al., "Nyströmformer: a Nyström-based algorithm for approximating
 * self-attention", AAAI 2021, Eq. 14): with m landmarks Q̃, K̃ the segment means of Q and K,
 *
 *   Ŷ = softmax(β Q K̃ᵀ) · softmax(β Q̃ K̃ᵀ)⁺ · (softmax(β Q̃ Kᵀ) V),
 *
 * each softmax row-normalized. The paper requires m to divide N; here segment t is rows
 * [⌊tN/m⌋, ⌊(t+1)N/m⌋) (near-equal segments, the paper's when m | N). The m × m pseudo-inverse is
 * the paper's iteration (6 steps by default, nystrom/shared.ts) or an exact SVD pseudo-inverse.
 * Deterministic (no seed). Exact limit: m = N_Q = N_KV with the exact pseudo-inverse gives
 * A A⁺ A = A, i.e. softmax attention. No causal form in the paper: `options.mask` is refused (ValueError).
 */
import { Matrix } from "@randattn/core";
import { assertInteger, assertOneOf, assertRequiredOptions } from "@randattn/core/internal";
import type { Cost } from "../operators/types.js";
import {
  type PseudoInverse,
  checkAttentionInputs,
  refuseMask,
  exactPinv,
  exactPinvFlops,
  iterativePinv,
  mul,
  resolveScale,
  scaledGram,
  softmaxInPlace,
} from "./shared.js";

/** Options of {@link nystromformerAttention}. */
export interface NystromformerOptions {
  /** m, the number of landmarks (1 ≤ m ≤ min(N_Q, N_KV)). */
  landmarks: number;
  /** β of exp(β⟨q, k⟩). @default 1/√d_QK */
  scale?: number;
  /** The paper's iterative pseudo-inverse, or an exact one (SVD). @default "iterative" */
  pinv?: PseudoInverse;
  /** Iterations of the iterative pseudo-inverse. @default 6 (the paper's) */
  pinvIterations?: number;
}

/** What {@link nystromformerAttention} returns. */
export interface NystromformerResult {
  readonly output: Matrix;
  readonly cost: Cost & { kernelEvaluations: number };
}

/** Means of m near-equal contiguous row segments (segment t = rows ⌊tN/m⌋ … ⌊(t+1)N/m⌋ − 1). */
export function segmentMeans(a: Matrix, m: number): Matrix {
  assertInteger(m, "m", 1, a.rows);
  const out = new Matrix(m, a.cols);
  for (let t = 0; t < m; t++) {
    const lo = Math.floor((t * a.rows) / m);
    const hi = Math.floor(((t + 1) * a.rows) / m);
    for (let i = lo; i < hi; i++) for (let c = 0; c < a.cols; c++) out.data[t * a.cols + c] += a.data[i * a.cols + c];
    for (let c = 0; c < a.cols; c++) out.data[t * a.cols + c] /= hi - lo;
  }
  return out;
}

/**
 * Nyströmformer attention (module comment).
 * @throws ShapeError / NonFiniteError on inputs; ValueError on options.
 */
export function nystromformerAttention(queries: Matrix, keys: Matrix, values: Matrix, options: NystromformerOptions): NystromformerResult {
  assertRequiredOptions(options, "options");
  checkAttentionInputs(queries, keys, values);
  const opts = options ?? ({} as NystromformerOptions);
  refuseMask(opts, "Nyströmformer");
  const nQ = queries.rows;
  const n = keys.rows;
  const d = keys.cols;
  const dV = values.cols;
  assertInteger(opts.landmarks, "options.landmarks", 1, Math.min(nQ, n));
  const m = opts.landmarks;
  const beta = resolveScale(opts.scale, d);
  const pinv = opts.pinv ?? "iterative";
  assertOneOf(pinv, "options.pinv", ["iterative", "exact"] as const);
  const iterations = opts.pinvIterations ?? 6;
  assertInteger(iterations, "options.pinvIterations", 0, 1000);
  const ql = segmentMeans(queries, m);
  const kl = segmentMeans(keys, m);
  const f = softmaxInPlace(scaledGram(queries, kl, beta)); // N_Q × m
  const a = softmaxInPlace(scaledGram(ql, kl, beta)); // m × m
  const b = softmaxInPlace(scaledGram(ql, keys, beta)); // m × N_KV
  const bv = mul(b, values); // m × d_V
  const z = pinv === "exact" ? exactPinv(a) : iterativePinv(a, iterations);
  const output = mul(f, mul(z, bv));
  // Softmax of an r × c logit block: 2rcd (products) + 3rc (exp, sum, divide).
  const sm = (r: number, c: number) => 2 * r * c * d + 3 * r * c;
  const flops =
    (nQ + n) * d +
    sm(nQ, m) +
    sm(m, m) +
    sm(m, n) +
    2 * m * n * dV +
    (pinv === "exact" ? exactPinvFlops(m) : 8 * m * m * m * iterations + 2 * m * m) +
    2 * m * m * dV +
    2 * nQ * m * dV;
  const floatsStored = 2 * m * d + nQ * m + m * n + m * dV + (pinv === "exact" ? 4 * m * m : 5 * m * m) + m * dV;
  return { output, cost: { flops, floatsStored, kernelEvaluations: nQ * m + m * m + m * n } };
}
