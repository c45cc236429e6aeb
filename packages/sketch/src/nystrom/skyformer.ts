/**
 * Skyformer's Nyström approximation (Chen, Zeng, Ji & Yang, "Skyformer: remodel self-attention
 * with Gaussian kernel and Nyström method", NeurIPS 2021, §3–4), applied to softmax attention.
 *
 * What is implemented, precisely. The paper's observation: the N_Q × N_KV kernel matrix
 * G(Q, K) is not PSD (not even square), but it is the off-diagonal block of the PSD matrix
 * B̄ = G([Q; K], [Q; K]) of the Gaussian kernel G(x, y) = exp(−β‖x − y‖²/2), so Nyström applies to
 * B̄: with m landmarks L drawn uniformly without replacement from the N_Q + N_KV rows of [Q; K]
 * (the paper's uniform sub-sampling matrix S),
 *   G(Q, K) ≈ G(Q, L) (G(L, L) + λI)⁺ G(L, K).
 * The paper's model then uses the UNNORMALIZED Gaussian-kernel attention, a different model that
 * must be trained as such; to approximate a given softmax head we use the identity
 * exp(β⟨q, k⟩) = e^{β‖q‖²/2} G(q, k) e^{β‖k‖²/2}: Â = D_Q Ĝ D_K and Ŷ = Â V / Â 1 (the row
 * normalization of softmax; D_Q cancels). D_K is multiplied by e^{−β max‖k‖²/2}, which cancels too.
 * The pseudo-inverse is exact (SVD) by default, or the Nyströmformer iteration.
 * Exact limit: m = N_Q + N_KV, λ = 0, exact pseudo-inverse → Nyström with every column is exact.
 * No causal form in the paper: `options.mask` is refused (ValueError).
 */
import { Matrix, NumericalError, RandomStream, type SeedKey, derive } from "@randattn/core";
import { assertInteger, assertNumber, assertOneOf, assertRequiredOptions } from "@randattn/core/internal";
import { BITS_PER_UNIFORM } from "../lowrank/rpcholesky.js";
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
  rowNorms2,
} from "./shared.js";

/** Options of {@link skyformerAttention}. */
export interface SkyformerOptions {
  /** m, landmarks drawn from the N_Q + N_KV rows of [Q; K] (1 ≤ m ≤ N_Q + N_KV). */
  landmarks: number;
  /** β of exp(β⟨q, k⟩) (and of the Gaussian kernel exp(−β‖x − y‖²/2)). @default 1/√d_QK */
  scale?: number;
  /** λ ≥ 0 added to the diagonal of G(L, L) before pseudo-inversion. @default 0 */
  regularization?: number;
  /** Exact (SVD) or iterative pseudo-inverse. @default "exact" */
  pinv?: PseudoInverse;
  /** Iterations of the iterative pseudo-inverse. @default 6 */
  pinvIterations?: number;
  /**
   * What to do with a query whose approximate normalizer Â1 = Ĝ(q, K)D_K1 is not positive. The
   * Nyström product is not a positive kernel estimate: on peaked real heads a query far from every
   * landmark gets Â1 ≈ 0 (seen: −5e-10 … −5e-20), and the ratio Â V / Â 1 is meaningless there.
   * `"error"` throws a NumericalError naming the query; `"zero"` writes a zero output row and lists the
   * query in `nonPositiveRows`, so the error metrics count the failure instead of the run losing it.
   * @default "error"
   */
  onNonPositiveNormalizer?: "error" | "zero";
}

/** What {@link skyformerAttention} returns. */
export interface SkyformerResult {
  readonly output: Matrix;
  readonly cost: Cost & { kernelEvaluations: number; randomBits: number };
  /** Indices of the landmarks in [Q; K] (< N_Q: a query row; ≥ N_Q: key row index − N_Q). */
  readonly landmarks: Int32Array;
  /** Queries whose Â1 ≤ 0 (output row zero; only with `onNonPositiveNormalizer: "zero"`). */
  readonly nonPositiveRows: Int32Array;
}

/** Gaussian kernel block exp(−β‖x_i − y_j‖²/2) from row norms. */
function gaussianBlock(x: Matrix, xn: Float64Array, y: Matrix, yn: Float64Array, beta: number): Matrix {
  const d = x.cols;
  const out = new Matrix(x.rows, y.rows);
  for (let i = 0; i < x.rows; i++) {
    for (let j = 0; j < y.rows; j++) {
      let s = 0;
      for (let c = 0; c < d; c++) s += x.data[i * d + c] * y.data[j * d + c];
      out.data[i * y.rows + j] = Math.exp(-0.5 * beta * Math.max(0, xn[i] + yn[j] - 2 * s));
    }
  }
  return out;
}

/**
 * Skyformer-style Nyström softmax attention (module comment).
 * @param seed landmarks are drawn from `derive(seed, "skyformer")` (partial Fisher–Yates).
 * @throws ShapeError / NonFiniteError on inputs; ValueError on options; NumericalError when a
 *   query's approximate normalizer is not positive.
 */
export function skyformerAttention(
  queries: Matrix,
  keys: Matrix,
  values: Matrix,
  options: SkyformerOptions,
  seed: SeedKey,
): SkyformerResult {
  assertRequiredOptions(options, "options");
  checkAttentionInputs(queries, keys, values);
  const opts = options ?? ({} as SkyformerOptions);
  refuseMask(opts, "Skyformer");
  const nQ = queries.rows;
  const n = keys.rows;
  const d = keys.cols;
  const dV = values.cols;
  assertInteger(opts.landmarks, "options.landmarks", 1, nQ + n);
  const m = opts.landmarks;
  const beta = resolveScale(opts.scale, d);
  const lambda = opts.regularization ?? 0;
  assertNumber(lambda, "options.regularization", { min: 0 });
  const pinv = opts.pinv ?? "exact";
  assertOneOf(pinv, "options.pinv", ["iterative", "exact"] as const);
  const iterations = opts.pinvIterations ?? 6;
  assertInteger(iterations, "options.pinvIterations", 0, 1000);
  const policy = options.onNonPositiveNormalizer ?? "error";
  assertOneOf(policy, "options.onNonPositiveNormalizer", ["error", "zero"] as const);
  // Uniform sample of m rows of [Q; K] without replacement (partial Fisher–Yates, m uniforms).
  const rng = new RandomStream(derive(seed, "skyformer"));
  const perm = new Int32Array(nQ + n);
  for (let i = 0; i < perm.length; i++) perm[i] = i;
  for (let t = 0; t < m; t++) {
    const j = t + Math.floor(rng.uniform() * (perm.length - t));
    const tmp = perm[t];
    perm[t] = perm[j];
    perm[j] = tmp;
  }
  const chosen = perm.slice(0, m);
  const land = new Matrix(m, d);
  for (let t = 0; t < m; t++) {
    const idx = chosen[t];
    const src = idx < nQ ? queries.data.subarray(idx * d, (idx + 1) * d) : keys.data.subarray((idx - nQ) * d, (idx - nQ + 1) * d);
    land.data.set(src, t * d);
  }
  const qn = rowNorms2(queries);
  const kn = rowNorms2(keys);
  const ln = rowNorms2(land);
  const gql = gaussianBlock(queries, qn, land, ln, beta); // N_Q × m
  const gll = gaussianBlock(land, ln, land, ln, beta); // m × m
  for (let t = 0; t < m; t++) gll.data[t * m + t] += lambda;
  const glk = gaussianBlock(land, ln, keys, kn, beta); // m × N_KV
  // D_K [V 1] with D_K = e^{β(‖k‖² − max‖k‖²)/2}.
  let kmax = 0;
  for (const v of kn) kmax = Math.max(kmax, v);
  const w1 = dV + 1;
  const dkv = new Matrix(n, w1);
  for (let j = 0; j < n; j++) {
    const s = Math.exp(0.5 * beta * (kn[j] - kmax));
    for (let c = 0; c < dV; c++) dkv.data[j * w1 + c] = s * values.data[j * dV + c];
    dkv.data[j * w1 + dV] = s;
  }
  const z = pinv === "exact" ? exactPinv(gll) : iterativePinv(gll, iterations);
  const num = mul(gql, mul(z, mul(glk, dkv))); // N_Q × (d_V + 1)
  const output = new Matrix(nQ, dV);
  const bad: number[] = [];
  for (let i = 0; i < nQ; i++) {
    const den = num.data[i * w1 + dV];
    if (!(den > 0)) {
      if (policy === "zero") {
        bad.push(i);
        continue;
      }
      throw new NumericalError(
        "options.landmarks",
        `a positive approximate normalizer for query ${i} (set onNonPositiveNormalizer to "zero" to accept)`,
        `Â1 = ${den}`,
      );
    }
    for (let c = 0; c < dV; c++) output.data[i * dV + c] = num.data[i * w1 + c] / den;
  }
  const g = (r: number, c: number) => 2 * r * c * d + 4 * r * c; // products + distance, scale, exp
  const flops =
    2 * (nQ + n + m) * d +
    g(nQ, m) +
    g(m, m) +
    g(m, n) +
    n * (w1 + 1) +
    2 * m * n * w1 +
    (pinv === "exact" ? exactPinvFlops(m) : 8 * m * m * m * iterations + 2 * m * m) +
    2 * m * m * w1 +
    2 * nQ * m * w1 +
    nQ * dV;
  const floatsStored = m * d + nQ * m + m * n + n * w1 + (pinv === "exact" ? 4 * m * m : 5 * m * m) + 2 * m * w1 + nQ * w1;
  return {
    output,
    cost: { flops, floatsStored, kernelEvaluations: nQ * m + m * m + m * n, randomBits: BITS_PER_UNIFORM * m },
    landmarks: chosen,
    nonPositiveRows: Int32Array.from(bad),
  };
}
