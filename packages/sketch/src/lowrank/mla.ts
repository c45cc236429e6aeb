/**
 * Low-rank tools for multi-head latent attention (paper §4.2; DeepSeek-V2; TransMLA [MYZ25]).
 *
 * 1. Latent-cache compression. The cache of an MLA is the latent L = X W_L (N_KV × d_L). With Ṽ
 *    (d_L × k, orthonormal) the top-k right singular vectors of L (randomized SVD),
 *        L̃ = L Ṽ Ṽᵀ = C Ṽᵀ,   C = L Ṽ = X (W_L Ṽ)   (N_KV × k),
 *    is the best approximation of L with row space in span(Ṽ) — at least as good as the SVD's
 *    U_k Σ_k V_kᵀ, equal to it when Ṽ is exact (Eckart–Young). Because Ṽᵀ acts on the latent's
 *    columns, it folds into the merged weights (foldLatentBasis):
 *        L_Q W_LQK^h L̃ᵀ = L_Q (W_LQK^h Ṽ) Cᵀ,   P_h L̃ W_LO^h = P_h C (Ṽᵀ W_LO^h),
 *    so the folded MLA runs core's merged attention / latent-cache decoding directly on C and
 *    caches k floats per token instead of d_L — that is where cache memory is saved. New tokens are
 *    compressed online by the same map (c = x W_L Ṽ).
 * 2. Latent-rank reduction of the weights (W_L, W_LQK, W_LO, and optionally W_LQ): the same fold,
 *    with Ṽ from the SVD of W_L itself (data-free) or of L = X W_L for a calibration input X.
 * 3. MHA/GQA → MLA (TransMLA-style): the SVD of the stacked key/value weights
 *    [W_K^1 … W_K^G, W_V^1 … W_V^G] = U Σ Vᵀ gives W_L = U_r Σ_r and up-projections from the blocks
 *    of V_rᵀ; exact when d_L ≥ rank of the stacked weights (no RoPE, or RoPE applied naively by
 *    core's `mlaAttention`, which is what MHA's RoPE becomes).
 */
import {
  type MergedMla,
  Matrix,
  type MlaOptions,
  type MlaWeights,
  type MultiHeadOptions,
  type MultiHeadWeights,
  type SeedKey,
  ShapeError,
  ValueError,
  concatCols,
  derive,
  kvHeadFor,
  matmul,
  matmulTransB,
  mergedMlaAttention,
  mergedMlaDimensions,
  mlaAttention,
  multiHeadAttention,
  multiHeadShape,
  relativeFrobeniusError,
} from "@randattn/core";
import { assertFinite, assertInteger, assertMatrix, assertOneOf, describe } from "@randattn/core/internal";
import type { Cost } from "../operators/index.js";
import { type RangeFinderOptions, checkInputMatrix } from "./rangefinder.js";
import { type SvdFactors, exactSvd, randomizedSvd } from "./svd.js";

/** How a low-rank basis is computed: randomized SVD (HMT) or ml-matrix's full SVD. */
export type SvdMethod = "randomized" | "exact";

/** Rank + randomized-SVD options shared by the MLA tools. */
export interface LowRankOptions extends RangeFinderOptions {
  /** Randomized SVD or ml-matrix's full SVD. @default "randomized" */
  method?: SvdMethod;
}

function svdOf(a: Matrix, options: LowRankOptions, seed: SeedKey, argument: string): { factors: SvdFactors; cost: Cost } {
  const method = options.method ?? "randomized";
  assertOneOf(method, `${argument}.method`, ["randomized", "exact"] as const);
  if (method === "randomized") {
    const r = randomizedSvd(a, options, seed);
    return { factors: r, cost: r.cost };
  }
  assertInteger(options.rank, `${argument}.rank`, 1, Math.min(a.rows, a.cols));
  const f = exactSvd(a, { rank: options.rank });
  return { factors: f, cost: f.cost };
}

/** ‖A − X‖_F / ‖A‖_F (0 for a zero A). */
function relError(approx: Matrix, exact: Matrix): number {
  let num = 0;
  let den = 0;
  for (let i = 0; i < exact.data.length; i++) {
    num += (exact.data[i] - approx.data[i]) ** 2;
    den += exact.data[i] ** 2;
  }
  return den === 0 ? Math.sqrt(num) : Math.sqrt(num / den);
}

export interface CompressedLatent {
  /** C = L Ṽ (N_KV × k): what the compressed cache stores. */
  factor: Matrix;
  /** Ṽᵀ (k × d_L), orthonormal rows: L̃ = C Ṽᵀ. */
  basis: Matrix;
  /** The k leading singular values found. */
  singularValues: Float64Array;
  /** ‖L − C Ṽᵀ‖_F / ‖L‖_F. */
  relativeError: number;
  /** Floats to hold L exactly (N_KV·d_L) and compressed (N_KV·k + k·d_L; the k·d_L is folded into weights by foldLatentBasis). */
  floatsStored: { exact: number; compressed: number };
  /** Cost of the SVD and of forming C. */
  cost: Cost;
}

/**
 * Compresses a latent cache L (N_KV × d_L) to rank k: C = L Ṽ and the basis Ṽᵀ from a (randomized) SVD.
 * @param latent L, finite, non-empty.
 * @param options rank k ≤ min(N_KV, d_L) and the SVD options (method, oversampling, power iterations, test matrix).
 * @param seed the SVD's test-matrix seed.
 * @throws ShapeError / NonFiniteError for a bad latent; ValueError for a bad rank or options.
 * @example
 * ```ts
 * import { matmul, randomMatrix } from "@randattn/core";
 * import { compressLatent } from "@randattn/sketch";
 *
 * // An MLA latent cache L (N × d_L) of rank 8 compressed to rank 8: (nearly) exact, fewer floats.
 * const latent = matmul(randomMatrix(512, 8, {}, [13, "a"]), randomMatrix(8, 64, {}, [13, "b"]));
 * const c = compressLatent(latent, { rank: 8 }, [13, "rsvd"]);
 * console.log(c.relativeError < 1e-10, c.floatsStored.compressed < c.floatsStored.exact); // true true
 * ```
 */
export function compressLatent(latent: Matrix, options: LowRankOptions, seed: SeedKey): CompressedLatent {
  checkInputMatrix(latent, "latent");
  if (options === null || typeof options !== "object") throw new ValueError("options", "an options object with rank", describe(options));
  const { factors, cost } = svdOf(latent, options, derive(seed, "compressLatent"), "options");
  const basis = factors.Vt;
  const factor = matmulTransB(latent, basis);
  const k = basis.rows;
  cost.flops += 2 * latent.rows * latent.cols * k;
  const relativeError = relError(matmul(factor, basis), latent);
  return {
    factor,
    basis,
    singularValues: factors.S,
    relativeError,
    floatsStored: { exact: latent.rows * latent.cols, compressed: latent.rows * k + k * latent.cols },
    cost,
  };
}

/**
 * Folds a latent basis Ṽᵀ (k × d_L) into merged MLA weights: latentDown W_L Ṽ, queryKey W_LQK^h Ṽ,
 * latentOutput blocks Ṽᵀ W_LO^h (module doc). The result is an ordinary `MergedMla` of latent width
 * k, whose attention on X equals the original's on the compressed latent L̃ = X W_L Ṽ Ṽᵀ; the
 * softmax scale and the decoupled rotary part are carried unchanged. Ṽᵀ need not be orthonormal
 * (then L̃ = L Ṽ Ṽᵀ is not a projection, but the identity still holds).
 * @throws ShapeError when basis.cols ≠ d_L or basis.rows > d_L; errors of `mergedMlaDimensions` for bad weights.
 */
export function foldLatentBasis(merged: MergedMla, basis: Matrix): MergedMla {
  const dims = mergedMlaDimensions(merged);
  assertMatrix(basis, "basis");
  if (basis.cols !== dims.latentDim || basis.rows < 1 || basis.rows > dims.latentDim) {
    throw new ShapeError("basis", `k×${dims.latentDim} with 1 ≤ k ≤ ${dims.latentDim} (cols = d_L)`, basis.shape);
  }
  assertFinite(basis, "basis");
  const k = basis.rows;
  const dL = dims.latentDim;
  const dOut = dims.dOut;
  const latentOutput = new Matrix(dims.numHeads * k, dOut);
  for (let h = 0; h < dims.numHeads; h++) {
    const block = new Matrix(dL, dOut, merged.latentOutput.data.subarray(h * dL * dOut, (h + 1) * dL * dOut));
    latentOutput.data.set(matmul(basis, block).data, h * k * dOut);
  }
  const folded: MergedMla = {
    queryDown: merged.queryDown.clone(),
    latentDown: matmulTransB(merged.latentDown, basis),
    queryKey: merged.queryKey.map((w) => matmulTransB(w, basis)),
    latentOutput,
    scale: merged.scale,
  };
  if (merged.queryRope && merged.keyRope) {
    folded.queryRope = merged.queryRope.map((w) => w.clone());
    folded.keyRope = merged.keyRope.clone();
  }
  return folded;
}

export interface CompressedMlaAttentionOptions extends LowRankOptions {
  /** Options of the merged attention (kernel, mask, RoPE of the decoupled part…). @default {} */
  attention?: MlaOptions;
}

export interface CompressedMlaAttentionResult {
  /** Y (N_Q × d_out) computed on the compressed latent. */
  output: Matrix;
  /** SVD + fold + attention flops; floatsStored = the compressed cache N_KV·(k + d_R). */
  cost: Cost;
  /** The compression of L = xKV W_L. */
  compressed: CompressedLatent;
  /** The folded merged weights (latent width k) that ran the attention. */
  merged: MergedMla;
  /** Cache floats: exact N_KV·(d_L + d_R) vs compressed N_KV·(k + d_R). */
  cacheFloats: { exact: number; compressed: number };
}

/**
 * Merged MLA attention on the rank-k compressed latent: L = xKV W_L is compressed by
 * {@link compressLatent}, Ṽᵀ folded into the weights ({@link foldLatentBasis}) and core's
 * `mergedMlaAttention` runs on C = xKV W_L Ṽ (N_KV × k). At k = d_L it reproduces exact merged
 * attention (to rounding).
 * @throws as compressLatent, foldLatentBasis and core's mergedMlaAttention.
 */
export function compressedMlaAttention(
  xQ: Matrix,
  xKV: Matrix,
  merged: MergedMla,
  options: CompressedMlaAttentionOptions,
  seed: SeedKey,
): CompressedMlaAttentionResult {
  const dims = mergedMlaDimensions(merged);
  assertMatrix(xKV, "xKV");
  if (xKV.cols !== dims.dIn) throw new ShapeError("xKV", `*×${dims.dIn} (cols = d_in = merged.queryDown.rows)`, xKV.shape);
  assertMatrix(xQ, "xQ");
  if (xQ.cols !== dims.dIn) throw new ShapeError("xQ", `*×${dims.dIn} (cols = d_in = merged.queryDown.rows)`, xQ.shape);
  const latent = matmul(xKV, merged.latentDown);
  const compressed = compressLatent(latent, options, seed);
  const folded = foldLatentBasis(merged, compressed.basis);
  const output = mergedMlaAttention(xQ, xKV, folded, options.attention ?? {});
  const k = compressed.basis.rows;
  const nQ = xQ.rows;
  const nKV = xKV.rows;
  const H = dims.numHeads;
  const dR = dims.ropeDim;
  const cost: Cost = {
    flops:
      2 * nKV * dims.dIn * dims.latentDim +
      compressed.cost.flops +
      // fold: W_L Ṽ, W_LQK^h Ṽ, Ṽᵀ W_LO^h
      2 * dims.dIn * dims.latentDim * k +
      H * 2 * dims.queryLatentDim * dims.latentDim * k +
      H * 2 * k * dims.latentDim * dims.dOut +
      // attention on C: L_Q, C, per-head queries, scores, P·C, output
      2 * nQ * dims.dIn * dims.queryLatentDim +
      2 * nKV * dims.dIn * k +
      H * (2 * nQ * dims.queryLatentDim * (k + dR) + 2 * nQ * nKV * (k + dR) + 2 * nQ * nKV * k) +
      2 * nQ * H * k * dims.dOut,
    floatsStored: nKV * (k + dR),
  };
  return { output, cost, compressed, merged: folded, cacheFloats: { exact: nKV * (dims.latentDim + dR), compressed: nKV * (k + dR) } };
}

export interface LatentRankReductionOptions {
  /** New key/value latent width k ≤ d_L. @default d_L (unchanged) */
  latentRank?: number;
  /** New query latent width ≤ d_LQ. @default d_LQ (unchanged) */
  queryLatentRank?: number;
  /** Calibration input X (N × d_in): bases from L = X W_L and L_Q = X W_LQ instead of the weights alone. @default undefined (data-free) */
  calibration?: Matrix;
  /** SVD method. @default "randomized" */
  method?: SvdMethod;
  /** Oversampling of the randomized SVD. @default 10 */
  oversampling?: number;
  /** Power iterations of the randomized SVD. @default 2 */
  powerIterations?: number;
}

export interface LatentRankReductionReport {
  latentDim: { before: number; after: number };
  queryLatentDim: { before: number; after: number };
  /** Cache floats per token: d_L + d_R before, k + d_R after. */
  cacheFloatsPerToken: { before: number; after: number };
  /** Floats of the merged weights. */
  weightFloats: { before: number; after: number };
  /** Relative Frobenius error of the latent (of W_L, or of X W_L with calibration) after projection. */
  latentError: number;
  /** Same for the query latent. */
  queryLatentError: number;
}

function mergedWeightFloats(m: MergedMla): number {
  let s = m.queryDown.data.length + m.latentDown.data.length + m.latentOutput.data.length;
  for (const w of m.queryKey) s += w.data.length;
  if (m.queryRope) for (const w of m.queryRope) s += w.data.length;
  if (m.keyRope) s += m.keyRope.data.length;
  return s;
}

/**
 * Reduces the latent width d_L (W_L, W_LQK, W_LO) and optionally the query latent width d_LQ
 * (W_LQ, W_LQK, W_QR) of merged MLA weights by projecting each latent onto its top singular
 * directions — of the weight itself (data-free: best for isotropic inputs) or of the latent of a
 * calibration input. Returns the reduced `MergedMla` and a report of sizes and projection errors.
 * @throws ValueError for ranks outside [1, current width]; ShapeError for a calibration input of the wrong width.
 */
export function reduceLatentRank(
  merged: MergedMla,
  options: LatentRankReductionOptions,
  seed: SeedKey,
): { merged: MergedMla; report: LatentRankReductionReport; cost: Cost } {
  const dims = mergedMlaDimensions(merged);
  if (options === null || typeof options !== "object") throw new ValueError("options", "an options object", describe(options));
  const k = options.latentRank ?? dims.latentDim;
  const kq = options.queryLatentRank ?? dims.queryLatentDim;
  assertInteger(k, "options.latentRank", 1, dims.latentDim);
  assertInteger(kq, "options.queryLatentRank", 1, dims.queryLatentDim);
  const x = options.calibration;
  if (x !== undefined) {
    checkInputMatrix(x, "options.calibration");
    if (x.cols !== dims.dIn) throw new ShapeError("options.calibration", `*×${dims.dIn} (cols = d_in)`, x.shape);
  }
  const svdOptions = (rank: number, source: Matrix): LowRankOptions => ({
    rank: Math.min(rank, source.rows, source.cols),
    method: options.method,
    oversampling: options.oversampling,
    powerIterations: options.powerIterations,
  });
  let out = merged;
  // cost of the factorizations (the SVDs); folding the bases into the weights is a one-off weight rewrite
  const cost: Cost = { flops: 0, floatsStored: 0 };
  const addCost = (c: Cost) => {
    cost.flops += c.flops;
    cost.floatsStored = Math.max(cost.floatsStored, c.floatsStored);
  };
  let latentError = 0;
  if (k < dims.latentDim) {
    const source = x ? matmul(x, merged.latentDown) : merged.latentDown;
    const { factors, cost: c } = svdOf(source, svdOptions(k, source), derive(seed, "reduceLatentRank", "latent"), "options");
    addCost(c);
    const basis = padBasis(factors.Vt, k);
    latentError = relError(matmul(matmulTransB(source, basis), basis), source);
    out = foldLatentBasis(merged, basis);
  }
  let queryLatentError = 0;
  if (kq < dims.queryLatentDim) {
    const source = x ? matmul(x, out.queryDown) : out.queryDown;
    const { factors, cost: c } = svdOf(source, svdOptions(kq, source), derive(seed, "reduceLatentRank", "query"), "options");
    addCost(c);
    const basis = padBasis(factors.Vt, kq); // Ũᵀ (kq × d_LQ)
    queryLatentError = relError(matmul(matmulTransB(source, basis), basis), source);
    const reduced: MergedMla = {
      queryDown: matmulTransB(out.queryDown, basis),
      latentDown: out.latentDown,
      queryKey: out.queryKey.map((w) => matmul(basis, w)),
      latentOutput: out.latentOutput,
      scale: out.scale,
    };
    if (out.queryRope && out.keyRope) {
      reduced.queryRope = out.queryRope.map((w) => matmul(basis, w));
      reduced.keyRope = out.keyRope;
    }
    out = reduced;
  }
  if (out === merged) out = foldLatentBasis(merged, Matrix.identity(dims.latentDim));
  return {
    merged: out,
    cost,
    report: {
      latentDim: { before: dims.latentDim, after: k },
      queryLatentDim: { before: dims.queryLatentDim, after: kq },
      cacheFloatsPerToken: { before: dims.latentDim + dims.ropeDim, after: k + dims.ropeDim },
      weightFloats: { before: mergedWeightFloats(merged), after: mergedWeightFloats(out) },
      latentError,
      queryLatentError,
    },
  };
}

/**
 * A basis with exactly `k` rows: the SVD's rows, completed (when the source had fewer rows than k,
 * e.g. a short calibration input) by orthonormal directions outside their span.
 */
function padBasis(vt: Matrix, k: number): Matrix {
  if (vt.rows === k) return vt;
  const d = vt.cols;
  const rows: Float64Array[] = [];
  for (let i = 0; i < vt.rows; i++) rows.push(vt.data.slice(i * d, (i + 1) * d));
  for (let e = 0; e < d && rows.length < k; e++) {
    // Gram–Schmidt of the unit vector e_e against the rows so far (twice, for orthogonality to rounding).
    const v = new Float64Array(d);
    v[e] = 1;
    for (let pass = 0; pass < 2; pass++)
      for (const r of rows) {
        let s = 0;
        for (let t = 0; t < d; t++) s += r[t] * v[t];
        for (let t = 0; t < d; t++) v[t] -= s * r[t];
      }
    let nrm = 0;
    for (let t = 0; t < d; t++) nrm += v[t] * v[t];
    nrm = Math.sqrt(nrm);
    if (nrm < 1e-8) continue;
    for (let t = 0; t < d; t++) v[t] /= nrm;
    rows.push(v);
  }
  const out = new Matrix(k, d);
  for (const [i, r] of rows.entries()) out.data.set(r, i * d);
  return out;
}

export interface MultiHeadToMlaOptions extends Omit<LowRankOptions, "rank"> {
  /** d_L, the latent width (1 ≤ d_L ≤ min(d_in, G·(d_QK + d_V))). */
  latentDim: number;
  /** Inputs on which to measure the output error (and the attention options of both forms). @default undefined (no output error) */
  calibration?: { xQ: Matrix; xKV: Matrix; options?: MultiHeadOptions };
}

export interface MultiHeadToMlaReport {
  latentDim: number;
  /** Cache floats per token: multi-head G·(d_QK + d_V) vs latent d_L. */
  cacheFloatsPerToken: { multiHead: number; latent: number };
  /** Leading singular values of the stacked [W_K, W_V] found by the SVD. */
  singularValues: Float64Array;
  /** ‖[W_K, W_V] − W_L [W_LK, W_LV]‖_F / ‖[W_K, W_V]‖_F. */
  weightRelativeError: number;
  /** ‖Y_MLA − Y_MHA‖_F / ‖Y_MHA‖_F on the calibration inputs, when given. */
  outputRelativeError?: number;
}

/**
 * Converts an MHA/GQA layer into MLA weights (TransMLA-style, module doc): W_L = U_r Σ_r from the
 * (randomized) SVD of the stacked key/value weights, W_LK^h / W_LV^h = the blocks of V_rᵀ belonging
 * to head h's KV group g(h) = ⌊h/(H/G)⌋, queries kept full (W_LQ = I_{d_in}, W_LQQ^h = W_Q^h),
 * W_O unchanged. Exact when d_L ≥ rank([W_K, W_V]).
 * @throws ValueError for a latentDim out of range or a cross-attention layer (d_in of keys ≠ of queries).
 */
export function multiHeadToMla(
  weights: MultiHeadWeights,
  options: MultiHeadToMlaOptions,
  seed: SeedKey,
): { weights: MlaWeights; report: MultiHeadToMlaReport; cost: Cost } {
  const shape = multiHeadShape(weights);
  if (options === null || typeof options !== "object")
    throw new ValueError("options", "an options object with latentDim", describe(options));
  if (shape.dInKV !== shape.dIn) {
    throw new ValueError(
      "weights.keys",
      `d_in of keys/values = d_in of queries = ${shape.dIn} (MLA shares one input width)`,
      `${shape.dInKV}`,
    );
  }
  const G = shape.numKvHeads;
  const H = shape.numHeads;
  const dK = shape.headDim;
  const dV = shape.valueDim;
  const width = G * (dK + dV);
  const maxLatent = Math.min(shape.dIn, width);
  assertInteger(options.latentDim, "options.latentDim", 1, maxLatent);
  const dL = options.latentDim;
  const stacked = concatCols([...weights.keys, ...weights.values]); // d_in × G(d_K + d_V)
  const { factors, cost } = svdOf(stacked, { ...options, rank: dL }, derive(seed, "multiHeadToMla"), "options");
  const { U, S, Vt } = factors;
  const latentDown = Matrix.from(shape.dIn, dL, (i, j) => U.get(i, j) * S[j]);
  const block = (start: number, cols: number) => Matrix.from(dL, cols, (i, j) => Vt.get(i, start + j));
  const keyBlocks = Array.from({ length: G }, (_, g) => block(g * dK, dK));
  const valueBlocks = Array.from({ length: G }, (_, g) => block(G * dK + g * dV, dV));
  const mla: MlaWeights = {
    queryDown: Matrix.identity(shape.dIn),
    queryUp: weights.queries.map((w) => w.clone()),
    latentDown,
    keyUp: Array.from({ length: H }, (_, h) => keyBlocks[kvHeadFor(h, H, G)].clone()),
    valueUp: Array.from({ length: H }, (_, h) => valueBlocks[kvHeadFor(h, H, G)].clone()),
    output: weights.output.clone(),
  };
  const rebuilt = matmul(latentDown, concatCols([...keyBlocks, ...valueBlocks]));
  const report: MultiHeadToMlaReport = {
    latentDim: dL,
    cacheFloatsPerToken: { multiHead: width, latent: dL },
    singularValues: S,
    weightRelativeError: relError(rebuilt, stacked),
  };
  if (options.calibration !== undefined) {
    const { xQ, xKV, options: attn } = options.calibration;
    const exact = multiHeadAttention(xQ, xKV, weights, attn ?? {});
    const approx = mlaAttention(xQ, xKV, mla, (attn ?? {}) as MlaOptions);
    report.outputRelativeError = relativeFrobeniusError(approx, exact);
  }
  return { weights: mla, report, cost };
}
