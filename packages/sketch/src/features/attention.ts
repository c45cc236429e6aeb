/**
 * Linear-time attention with random features (Performer; Choromanski et al. 2021, §2.2 eq. (5)):
 *
 *   Y ≈ D⁻¹ φ(Q) (φ(K)ᵀ V),   D = diag(φ(Q) (φ(K)ᵀ 1_{N_KV})),
 *
 * computed right to left in O(N m d) time and O(N m + m d) memory — the N_Q × N_KV matrix
 * φ(Q)φ(K)ᵀ is never formed. The causal form uses prefix sums of φ(kⱼ)vⱼᵀ (§2.6, unidirectional
 * FAVOR+), evaluated block by block with core's matmul kernels: a query block reads the running state
 * of the keys every query in the block sees, plus a masked |block| × |block| product for the keys on
 * the diagonal band. That equals masking the approximate matrix φ(Q)φ(K)ᵀ and normalizing its rows.
 *
 * Stabilization (why no ε): φ(Q) is computed with a per-query shift (its row maximum exponent) and
 * φ(K) with one global shift (the maximum over all keys, so it factors out of every key sum). Both
 * factors multiply numerator and normalizer of a row alike and cancel in D⁻¹; nothing is added
 * after the exponential, so the estimator's expectation is untouched (adding ε to D, as some
 * implementations do, biases every row towards 0). Divisions are guarded instead by looking at D:
 * positive and hyperbolic features give D > 0 unless it underflows (keys whose features are ≪ the
 * largest key's), trig features can give D ≤ 0 for real — those rows are reported in
 * `nonPositiveRows` and handled by `onNonPositiveNormalizer`, never turned into NaN.
 */
import { Matrix, NumericalError, type SeedKey, ShapeError, ValueError, getKernelBackend, wasmSimdAvailable } from "@randattn/core";
import {
  assertFinite,
  assertInteger,
  assertMatrix,
  assertNonEmpty,
  assertOneOf,
  assertShape,
  matmulInto,
  matmulTransAInto,
  matmulTransBInto,
  RESIDENT_BASE_BYTES,
  panelIndex,
  residentGemmPanels,
  residentGemmRows,
  residentKernels,
} from "@randattn/core/internal";
import type { Cost } from "../operators/index.js";
import {
  type ComplexGerfOptions,
  type ComplexGerfParameters,
  complexGerfParameters,
  evaluateComplexGerfFeatures,
} from "./complex-exponential.js";
import {
  EXPONENTIAL_FEATURE_KINDS,
  type ExponentialFeatureKind,
  type ExponentialFeatureParameters,
  evaluateExponentialFeatures,
  exponentialFeatureParameters,
  transformForFeatures,
} from "./exponential.js";
import {
  FEATURE_BLOCK_ROWS,
  type FeatureKernel,
  type FeatureKind,
  evaluateFeatures,
  featureNorm,
  type ResolvedKernel,
  resolveKernel,
  streamFeatures,
  streamFeaturesResident,
} from "./maps.js";
import { type ProjectionKind, drawProjection } from "./projection.js";

/** Masks the random-feature path supports without an N_Q × N_KV matrix (same shapes as core's `Mask`). */
export type RandomFeatureMask =
  /** Query i sees keys j ≤ offset + i; offset defaults to N_KV − N_Q (ERRATA). */
  | { kind: "causal"; offset?: number }
  /** Keys j < keyLength are real, the rest padding. */
  | { kind: "padding"; keyLength: number };

/** What to do with a row whose estimated normalizer Dᵢ is ≤ 0 (or that sees no key). */
export type NonPositiveNormalizerPolicy = "error" | "zero" | "keep";

export interface RandomFeatureAttentionOptions {
  /** m, the number of random frequencies ω (features: m for "positive", 2m for "trig"/"hyperbolic"). */
  numFrequencies: number;
  /**
   * Feature family: the classic maps, or the generalized exponential ones (softmax kernel only;
   * features/exponential.ts): "gerf" (A = `gerfA`), "oprf" (closed-form optimal A), "aderf" / "derf"
   * (asymmetric dense: closed-form Ψ and A), "saderf" (diagonal Ψ), "sderf" (symmetric dense, matrix
   * A) — F = m features each; or "complex-gerf" (features/complex-exponential.ts: complex A, s from
   * `complexGerf`), F = 2m real features (each complex feature is stored as two floats).
   * @default "positive"
   */
  features?: FeatureKind | ExponentialFeatureKind | "complex-gerf";
  /** A of the "gerf" family (A < ¼; A = 0 is FAVOR+). @default 0 */
  gerfA?: number;
  /** s and A of the "complex-gerf" family. @default {} (s and A optimized for the data) */
  complexGerf?: ComplexGerfOptions;
  /**
   * i.i.d. or orthogonal frequencies.
   * @default "orthogonal" (FAVOR+; same variance-reduction argument as Performer §2.4) — but `"iid"`
   * for the Laplacian kernel, whose Cauchy frequencies have no orthogonal form. `drawProjection`
   * defaults to `"iid"` (see its option for why).
   */
  projection?: ProjectionKind;
  /** Kernel approximated. @default { kind: "softmax", scale: 1/√d } */
  kernel?: FeatureKernel;
  /** Causal or padding mask. @default none (every query sees every key) */
  mask?: RandomFeatureMask;
  /** Query block size of the causal prefix-sum evaluation. @default 64 */
  blockSize?: number;
  /**
   * Rows with Dᵢ ≤ 0 (trig features) or Dᵢ = 0 (underflow, or no visible key):
   * `"error"` throws NumericalError; `"zero"` outputs a zero row; `"keep"` divides by a negative Dᵢ
   * as the raw ratio estimator does (a row with Dᵢ = 0 still becomes zeros). Every such row is listed
   * in `nonPositiveRows` whatever the policy.
   * @default "error"
   */
  onNonPositiveNormalizer?: NonPositiveNormalizerPolicy;
  /** Precomputed frequencies Ω (numFrequencies × d) instead of drawing them from the seed. @default drawn */
  omega?: Matrix;
}

export interface RandomFeatureAttentionResult {
  /** Ŷ (N_Q × d_V). */
  output: Matrix;
  /** Flops performed and floats held (Ω, φ(Q), φ(K), the m × d_V state and key sum, causal band). */
  cost: Cost;
  /** Dᵢ in shifted units; the true normalizer is normalizer[i]·exp(normalizerLogScale[i]). */
  normalizer: Float64Array;
  /** Log of the shift of row i (query shift + global key shift). */
  normalizerLogScale: Float64Array;
  /** Rows with Dᵢ ≤ 0, in increasing order. */
  nonPositiveRows: number[];
  /** The frequencies used (m × d). */
  omega: Matrix;
  /**
   * F, the number of features: m = `numFrequencies` for `"positive"` and the exponential families,
   * 2m for `"trig"` and `"hyperbolic"`. Compare methods at equal F (the cost is linear in F, not in m).
   */
  featureCount: number;
  /** The exponential family's parameters (A, Ψ), for the real exponential kinds. */
  featureParameters?: ExponentialFeatureParameters;
  /** s and A of "complex-gerf". */
  complexFeatureParameters?: ComplexGerfParameters;
}

/**
 * Random-feature attention Ŷ = D⁻¹ φ(Q)(φ(K)ᵀV) (see module doc), with the frequencies drawn from
 * `seed` (pass another seed to redraw them) unless `options.omega` is given.
 * @param queries N_Q × d.
 * @param keys N_KV × d.
 * @param values N_KV × d_V.
 * @throws ShapeError on mismatched shapes; ValueError on bad options (m ≤ 0, unknown kinds,
 *   unsupported mask); NonFiniteError for NaN/±Inf inputs; NumericalError for a row with Dᵢ ≤ 0
 *   under the default policy.
 * @example
 * ```ts
 * import { attention, randomMatrix } from "@randattn/core";
 * import { randomFeatureAttention } from "@randattn/sketch";
 *
 * const q = randomMatrix(128, 16, { scale: 0.5 }, [8, "q"]);
 * const k = randomMatrix(128, 16, { scale: 0.5 }, [8, "k"]);
 * const v = randomMatrix(128, 16, {}, [8, "v"]);
 * // FAVOR+ (positive features, orthogonal frequencies): linear in N.
 * const { output, cost } = randomFeatureAttention(q, k, v, { numFrequencies: 64 }, [8, "features"]);
 * const exact = attention(q, k, v);
 * const err = Math.hypot(...output.data.map((x, i) => x - exact.data[i])) / Math.hypot(...exact.data);
 * console.log(err < 1, cost.flops > 0); // true true
 * ```
 */
export function randomFeatureAttention(
  queries: Matrix,
  keys: Matrix,
  values: Matrix,
  options: RandomFeatureAttentionOptions,
  seed: SeedKey,
): RandomFeatureAttentionResult {
  assertMatrix(queries, "queries");
  assertNonEmpty(queries, "queries");
  assertMatrix(keys, "keys");
  assertMatrix(values, "values");
  const d = queries.cols;
  if (keys.cols !== d) throw new ShapeError("keys", `*×${d} (cols = queries.cols)`, keys.shape);
  if (keys.rows === 0) throw new ShapeError("keys", "at least 1 row", keys.shape);
  if (values.rows !== keys.rows) throw new ShapeError("values", `${keys.rows}×* (rows = keys.rows)`, values.shape);
  if (values.cols === 0) throw new ShapeError("values", "at least 1 column", values.shape);
  if (options === null || typeof options !== "object")
    throw new ValueError("options", "an options object with numFrequencies", String(options));
  assertInteger(options.numFrequencies, "options.numFrequencies", 1);
  const m = options.numFrequencies;
  const features = options.features ?? "positive";
  assertOneOf(features, "options.features", ["trig", "positive", "hyperbolic", ...EXPONENTIAL_FEATURE_KINDS, "complex-gerf"] as const);
  const complex = features === "complex-gerf";
  const exponential = complex || (EXPONENTIAL_FEATURE_KINDS as readonly string[]).includes(features);

  const policy = options.onNonPositiveNormalizer ?? "error";
  const blockSize = options.blockSize ?? 64;
  assertOneOf(policy, "options.onNonPositiveNormalizer", ["error", "zero", "keep"] as const);
  assertInteger(blockSize, "options.blockSize", 1);
  const resolved = resolveKernel(options.kernel, exponential ? "positive" : (features as FeatureKind), d);
  if (exponential && resolved.kernel.kind !== "softmax") {
    throw new ValueError("options.kernel", `the softmax kernel for features "${features}"`, `"${resolved.kernel.kind}"`);
  }
  // Orthogonal blocks need Gaussian rows; the Laplacian kernel's Cauchy frequencies default to i.i.d.
  const projection = options.projection ?? (resolved.distribution === "cauchy" ? "iid" : "orthogonal");
  assertOneOf(projection, "options.projection", ["iid", "orthogonal"] as const);
  if (projection === "orthogonal" && resolved.distribution === "cauchy") {
    throw new ValueError(
      "options.projection",
      '"iid" for the laplacian kernel (orthogonal blocks need Gaussian frequencies)',
      '"orthogonal"',
    );
  }
  const nQ = queries.rows;
  const nKV = keys.rows;
  const dV = values.cols;

  // Mask → visible key range. Causal: query i sees j ≤ offset + i; padding: j < keyLength.
  let causal = false;
  let offset = 0;
  let keyLength = nKV;
  if (options.mask !== undefined) {
    const mask = options.mask;
    if (mask === null || typeof mask !== "object") throw new ValueError("options.mask", "a mask object", String(mask));
    assertOneOf(mask.kind, "options.mask.kind", ["causal", "padding"] as const);
    if (mask.kind === "causal") {
      causal = true;
      offset = mask.offset ?? nKV - nQ;
      assertInteger(offset, "options.mask.offset", Number.MIN_SAFE_INTEGER);
    } else {
      assertInteger(mask.keyLength, "options.mask.keyLength", 0, nKV);
      keyLength = mask.keyLength;
    }
  }

  // The WebAssembly-resident path (below) checks the inputs' finiteness in passes it runs anyway.
  // Its keys' projection lives whole in kernel memory (the global shift): past RESIDENT_MAX_BYTES
  // (1 GiB of a 32-bit memory) the JS-array path runs instead.
  const resident =
    !exponential &&
    !causal &&
    (keyLength * (m + d + 2) + STREAM_ROWS * (4 * m + 3 * dV + 2 * d) + 2 * m * (2 * dV + 8) + 10 * m) * 8 <= RESIDENT_MAX_BYTES && // + 8m: the panels' scratch rows, + 2m: z; + 2 per key: its row statistics; 3·d_V per stream row: V's panels, its staged rows, [Y | D]
    wasmSimdAvailable() &&
    getKernelBackend() !== "scalar";
  const assertInputsFinite = () => {
    assertFinite(queries, "queries");
    assertFinite(keys, "keys");
    assertFinite(values, "values");
  };
  if (!resident) assertInputsFinite();

  let omega: Matrix;
  if (options.omega !== undefined) {
    assertShape(options.omega, "options.omega", m, d, "numFrequencies × queries.cols");
    assertFinite(options.omega, "options.omega");
    omega = options.omega;
  } else {
    omega = drawProjection(m, d, { projection, distribution: resolved.distribution }, seed);
  }

  const nK = keyLength;
  const keysUsed = nK === nKV ? keys : new Matrix(nK, d, keys.data.subarray(0, nK * d));
  let phiK: { features: Matrix; logScale: Float64Array };
  // φ on rows of `queryInput` with the per-row shift: every feature of a row depends on that row
  // alone, so evaluating the queries block by block gives the same bits as all at once.
  let queryFeatures: (rows: Matrix) => { features: Matrix; logScale: Float64Array };
  let queryInput: Matrix;
  let featureParameters: ExponentialFeatureParameters | undefined;
  let complexFeatureParameters: ComplexGerfParameters | undefined;
  let parameterFlops = 0;
  if (exponential) {
    // x = √scale·q, y = √scale·k (SM(x, y) = exp(scale⟨q, k⟩)); parameters from the data, then the map.
    const s = resolved.inputScale;
    const xs = new Matrix(nQ, d, scaled(queries.data, s));
    const ys = new Matrix(nK, d, scaled(keysUsed.data.subarray(0, nK * d), s));
    if (complex) {
      const params = complexGerfParameters(xs, nK > 0 ? ys : xs, options.complexGerf === undefined ? {} : options.complexGerf);
      complexFeatureParameters = params;
      queryInput = xs;
      queryFeatures = (rows) => evaluateComplexGerfFeatures(rows, omega, params, "query", "row");
      phiK =
        nK > 0
          ? evaluateComplexGerfFeatures(ys, omega, params, "key", "global")
          : { features: new Matrix(0, 2 * m), logScale: new Float64Array(0) };
      // ρ-like statistics O((N_Q+N_KV)d), ‖ω‖², the search (≈ 40 flops per objective evaluation),
      // and the cos/sin pair on top of the exp the driver counts per real column.
      parameterFlops = 3 * (nQ + nK) * d + 2 * m * d + 40 * params.evaluations + (nQ + nK) * m;
    } else {
      const params = exponentialFeatureParameters(features as ExponentialFeatureKind, xs, nK > 0 ? ys : xs, options.gerfA);
      featureParameters = params;
      const a = params.aDiagonal ?? params.a;
      queryInput = transformForFeatures(params, xs, "query");
      queryFeatures = (rows) => evaluateExponentialFeatures(rows, omega, a, "row");
      phiK =
        nK > 0
          ? evaluateExponentialFeatures(transformForFeatures(params, ys, "key"), omega, a, "global")
          : { features: new Matrix(0, m), logScale: new Float64Array(0) };
      parameterFlops = 3 * (nQ + nK) * d + 2 * m * d + extraParameterFlops(features as ExponentialFeatureKind, nQ + nK, d);
    }
  } else {
    queryInput = queries;
    queryFeatures = (rows) => evaluateFeatures(rows, omega, features as FeatureKind, resolved, "row");
    // The bidirectional path streams these maps' features block by block instead (below).
    phiK =
      nK > 0 && causal
        ? evaluateFeatures(keysUsed, omega, features as FeatureKind, resolved, "global")
        : { features: new Matrix(0, features === "positive" ? m : 2 * m), logScale: new Float64Array(0) };
  }
  const streamed = !exponential && !causal;
  const F = phiK.features.cols;
  let keyShift = nK > 0 && !streamed ? phiK.logScale[0] : 0;
  const fK = phiK.features.data;
  const V = values.data;
  // The numerator is formed in the output's storage and divided in place (one N_Q × d_V array less).
  const output = new Matrix(nQ, dV);
  const num = output.data;
  const den = new Float64Array(nQ);
  const normalizerLogScale = new Float64Array(nQ);
  let queryLogScale: Float64Array;
  const nonPositiveRows: number[] = [];
  let divided = false;
  let flops = 2 * (nQ + nK) * d * m + (nQ + nK) * F + parameterFlops;
  let floatsStored = m * d + (nQ + nK) * F + F * dV + F;

  if (!causal) {
    // Bidirectional: state = φ(K)ᵀV (F × d_V) and z = φ(K)ᵀ1, then one product per query row —
    // streamed in blocks of STREAM_ROWS rows (issue 14, measured at N = 16,384, F = 256):
    // - keys: each block of φ(K) is transposed into a small buffer (z summed in the same pass, key
    //   by key in order) and multiplied untransposed, state += φ(K)_blockᵀ V_block: the transposed-A
    //   product packs φ(K) with stride F, ≈ 2.5× the time of the untransposed one. Blocks are a
    //   multiple of the kernel's depth slice, so every state entry is the same sums in the same
    //   order as one product: the same bits.
    // - queries: φ(Q) of a block of rows, then its numerator rows and normalizers, so the N_Q × F
    //   features (32 MiB here) are never held at once: the first-touch page faults of fresh large
    //   arrays cost ≈ 1 ms per MiB on this machine, as much as the arithmetic on them.
    // The trig/positive/hyperbolic maps hand their blocks straight to these consumers
    // (streamFeatures: not even φ(K) is held whole); the exponential families are evaluated whole
    // for the keys (their global shift) and per block of rows for the queries.
    // The JavaScript paths' state, z and key block (the resident path keeps its own in kernel memory;
    // a fresh 512 KiB block it never reads would still cost its allocation).
    const state = new Float64Array(resident ? 0 : F * dV);
    const z = new Float64Array(resident ? 0 : F);
    const kt = new Float64Array(resident ? 0 : F * Math.min(nK, STREAM_ROWS));
    const addKeys = (block: Float64Array, j0: number, j1: number) => {
      transposeWithColumnSums(block, j1 - j0, F, kt, z);
      matmulInto(kt, V.subarray(j0 * dV, j1 * dV), state, F, j1 - j0, dV, j0 > 0);
    };
    const addQueries = (fQ: Float64Array, i0: number, i1: number) => {
      const b = i1 - i0;
      matmulInto(fQ, state, num.subarray(i0 * dV, i1 * dV), b, F, dV, false);
      for (let r = 0; r < b; r++) {
        let s = 0;
        const o = r * F;
        for (let l = 0; l < F; l++) s += fQ[o + l] * z[l];
        den[i0 + r] = s;
      }
    };
    if (resident) {
      const shifts = residentBidirectional(
        { queries, keys: keysUsed, keysAll: keys, values, omega, features: features as FeatureKind, resolved, policy },
        num,
        den,
        nonPositiveRows,
        assertInputsFinite,
        normalizerLogScale, // the queries' log-scales, written in place (no fresh N-array: its page faults)
      );
      keyShift = shifts.keyShift;
      queryLogScale = shifts.queryLogScale;
      divided = true;
    } else if (streamed) {
      // The constant factor c = featureNorm of every feature is folded into passes that run anyway:
      // the keys' transpose multiplies by it (the products the map would form, so the same bits),
      // and the queries' is folded into S = c·[state | z] (F × (d_V + 1)), one product giving the
      // numerator and, as its last column, the normalizer: no pass over φ(Q) for the scaling nor
      // for φ(Q)·z. (c·f)·s and f·(c·s) are the same bits when c is a power of 2 (m = 4ᵏ, positive or
      // trig features), else they may differ in the last bit.
      const c = featureNorm(features as FeatureKind, m);
      if (nK > 0) {
        const scaledKeys = (block: Float64Array, j0: number, j1: number) => {
          transposeWithColumnSums(block, j1 - j0, F, kt, z, c);
          matmulInto(kt, V.subarray(j0 * dV, j1 * dV), state, F, j1 - j0, dV, j0 > 0);
        };
        keyShift = streamFeatures(keysUsed, omega, features as FeatureKind, resolved, "global", scaledKeys, false)[0];
      }
      const w = dV + 1;
      const sz = new Float64Array(F * w);
      for (let l = 0; l < F; l++) {
        for (let j = 0; j < dV; j++) sz[l * w + j] = c * state[l * dV + j];
        sz[l * w + dV] = c * z[l];
      }
      const nb = new Float64Array(Math.min(nQ, STREAM_ROWS) * w);
      const scaledQueries = (fQ: Float64Array, i0: number, i1: number) => {
        const b = i1 - i0;
        matmulInto(fQ, sz, nb, b, F, w, false);
        splitNormalizerColumn(nb, b, dV, num, den, i0);
      };
      queryLogScale = streamFeatures(queries, omega, features as FeatureKind, resolved, "row", scaledQueries, false);
    } else {
      for (let j0 = 0; j0 < nK; j0 += STREAM_ROWS) {
        const j1 = Math.min(nK, j0 + STREAM_ROWS);
        addKeys(fK.subarray(j0 * F, j1 * F), j0, j1);
      }
      queryLogScale = new Float64Array(nQ);
      const dq = queryInput.cols;
      for (let i0 = 0; i0 < nQ; i0 += STREAM_ROWS) {
        const i1 = Math.min(nQ, i0 + STREAM_ROWS);
        const block = queryFeatures(new Matrix(i1 - i0, dq, queryInput.data.subarray(i0 * dq, i1 * dq)));
        queryLogScale.set(block.logScale, i0);
        addQueries(block.features.data, i0, i1);
      }
    }
    flops += 2 * nK * F * dV + nK * F + 2 * nQ * F * dV + 2 * nQ * F;
  } else {
    const phiQ = queryFeatures(queryInput);
    queryLogScale = phiQ.logScale;
    const fQ = phiQ.features.data;
    const state = new Float64Array(F * dV);
    const z = new Float64Array(F);
    const band = new Float64Array(blockSize * blockSize);
    const bandNum = new Float64Array(blockSize * dV);
    floatsStored += blockSize * blockSize;
    let stateEnd = 0; // keys [0, stateEnd) are summed into state and z
    const clamp = (v: number) => Math.max(0, Math.min(nK, v));
    for (let i0 = 0; i0 < nQ; i0 += blockSize) {
      const i1 = Math.min(nQ, i0 + blockSize);
      const b = i1 - i0;
      // Keys every query of the block sees: j < offset + i0 + 1.
      const prefixEnd = clamp(offset + i0 + 1);
      if (prefixEnd > stateEnd) {
        const t = prefixEnd - stateEnd;
        matmulTransAInto(fK.subarray(stateEnd * F, prefixEnd * F), V.subarray(stateEnd * dV, prefixEnd * dV), state, t, F, dV, true);
        for (let j = stateEnd; j < prefixEnd; j++) {
          const o = j * F;
          for (let l = 0; l < F; l++) z[l] += fK[o + l];
        }
        flops += 2 * t * F * dV + t * F;
        stateEnd = prefixEnd;
      }
      const qBlock = fQ.subarray(i0 * F, i1 * F);
      const numBlock = num.subarray(i0 * dV, i1 * dV);
      if (stateEnd > 0) {
        matmulInto(qBlock, state, numBlock, b, F, dV, false);
        for (let r = 0; r < b; r++) {
          let s = 0;
          const o = r * F;
          for (let l = 0; l < F; l++) s += qBlock[o + l] * z[l];
          den[i0 + r] = s;
        }
        flops += 2 * b * F * dV + 2 * b * F;
      }
      // Diagonal band: keys [prefixEnd, tailEnd) seen by only part of the block (j ≤ offset + i).
      const tailEnd = clamp(offset + i1);
      const t = tailEnd - prefixEnd;
      if (t > 0) {
        const w = band.subarray(0, b * t);
        matmulTransBInto(qBlock, fK.subarray(prefixEnd * F, tailEnd * F), w, b, F, t);
        for (let r = 0; r < b; r++) {
          const limit = offset + i0 + r; // last visible key of this query
          let s = 0;
          for (let c = 0; c < t; c++) {
            if (prefixEnd + c > limit) w[r * t + c] = 0;
            else s += w[r * t + c];
          }
          den[i0 + r] += s;
        }
        const bn = bandNum.subarray(0, b * dV);
        matmulInto(w, V.subarray(prefixEnd * dV, tailEnd * dV), bn, b, t, dV, false);
        for (let x = 0; x < b * dV; x++) numBlock[x] += bn[x];
        flops += 2 * b * t * F + 2 * b * t * dV + b * t;
      }
    }
  }

  // Division with the guard described in the module doc: no ε, explicit handling of Dᵢ ≤ 0.
  for (let i = 0; i < nQ && !divided; i++) {
    const di = den[i];
    if (!(di > 0)) {
      nonPositiveRows.push(i);
      if (policy === "error") {
        const why = di === 0 ? "0 (no visible key, or every feature product underflowed)" : `${di} (trig features can give Dᵢ ≤ 0)`;
        throw new NumericalError(
          "normalizer",
          `Dᵢ > 0 for every query row (set onNonPositiveNormalizer to "zero" or "keep" to accept)`,
          `D[${i}] = ${why}`,
        );
      }
      if (policy === "zero" || di === 0) {
        num.fill(0, i * dV, (i + 1) * dV);
        continue;
      }
    }
    scaleRow(num, i * dV, dV, 1 / di);
  }
  flops += nQ * dV;
  // (The resident path's queryLogScale is normalizerLogScale itself: the same sum, in place.)
  for (let i = 0; i < nQ; i++) normalizerLogScale[i] = queryLogScale[i] + keyShift;
  // Ψ and Ψ⁻ᵀ (ADERF, SADERF: stored dense); SDERF keeps one Q₃ᵀ and the d values a_l.
  if (featureParameters?.psi) floatsStored += featureParameters.aDiagonal ? d * d + d : 2 * d * d;
  return {
    output,
    cost: { flops, floatsStored },
    normalizer: den,
    normalizerLogScale,
    nonPositiveRows,
    omega,
    featureCount: F,
    ...(featureParameters ? { featureParameters } : {}),
    ...(complexFeatureParameters ? { complexFeatureParameters } : {}),
  };
}

/**
 * Flops of the closed-form parameters beyond ρ, for n = N_Q + N_KV rows: ADERF the two d × d second
 * moments, ≈ 5 eigendecompositions (≈ 10d³ each) and Ψx, Ψ⁻ᵀy; SADERF the per-coordinate squares and
 * the diagonal scaling; SDERF M₃ (2nd² for the products), one eigendecomposition and the rotation Q₃ᵀx.
 */
function extraParameterFlops(kind: ExponentialFeatureKind, n: number, d: number): number {
  if (kind === "derf" || kind === "aderf") return 4 * n * d * d + 50 * d ** 3;
  if (kind === "saderf") return 3 * n * d + 2 * n * d;
  if (kind === "sderf") return 4 * n * d * d + 10 * d ** 3 + 2 * n * d * d + n * d;
  return 0;
}

/** Largest kernel-memory footprint of the resident path (bytes; see `resident` in randomFeatureAttention). */
const RESIDENT_MAX_BYTES = 2 ** 30;

/** Rows per streamed block of the bidirectional path (the feature maps' block: a multiple of the GEMM's depth slice). */
const STREAM_ROWS = FEATURE_BLOCK_ROWS;

/** c·a, a new array (Float64Array.from with a callback took ≈ 20 % of an OPRF call: issue 14). */
function scaled(a: Float64Array, c: number): Float64Array {
  const out = new Float64Array(a.length);
  for (let i = 0; i < a.length; i++) out[i] = a[i] * c;
  return out;
}

/** a[o…o+n−1] *= c (the division by Dᵢ, as a multiplication by its inverse). */
function scaleRow(a: Float64Array, o: number, n: number, c: number): void {
  for (let j = 0; j < n; j++) a[o + j] *= c;
}

/** Rows of the b × (n + 1) product `nb` into `num` (b × n, from row i0) and their last column into `den`. */
function splitNormalizerColumn(nb: Float64Array, b: number, n: number, num: Float64Array, den: Float64Array, i0: number): void {
  const w = n + 1;
  for (let r = 0; r < b; r++) {
    const o = r * w;
    const t = (i0 + r) * n;
    for (let j = 0; j < n; j++) num[t + j] = nb[o + j];
    den[i0 + r] = nb[o + n];
  }
}

/**
 * The row-major rows × cols `a` transposed into `t` (cols × rows), adding every column's entries
 * into `sums` row by row in increasing order (the additions of a plain row loop over all keys, as
 * blocks come in key order), each entry first multiplied by `scale`. 32 × 32 tiles keep the strided
 * side in L1.
 */
function transposeWithColumnSums(a: Float64Array, rows: number, cols: number, t: Float64Array, sums: Float64Array, scale = 1): void {
  for (let r0 = 0; r0 < rows; r0 += 32) {
    const r1 = Math.min(rows, r0 + 32);
    for (let l0 = 0; l0 < cols; l0 += 32) {
      const l1 = Math.min(cols, l0 + 32);
      for (let l = l0; l < l1; l++) {
        let acc = sums[l];
        const o = l * rows;
        for (let r = r0; r < r1; r++) {
          const v = scale === 1 ? a[r * cols + l] : a[r * cols + l] * scale;
          t[o + r] = v;
          acc += v;
        }
        sums[l] = acc;
      }
    }
  }
}

/** Inputs of {@link residentBidirectional} (validated by the caller). */
interface ResidentInputs {
  queries: Matrix;
  /** The visible keys (rows < keyLength). */
  keys: Matrix;
  /** All keys, padding included (its rows past keyLength are only checked for finiteness). */
  keysAll: Matrix;
  values: Matrix;
  omega: Matrix;
  features: FeatureKind;
  resolved: ResolvedKernel;
  policy: NonPositiveNormalizerPolicy;
}

/**
 * The bidirectional streamed path inside core's WebAssembly-resident scratch (issue 14), for the
 * trig / positive / hyperbolic maps: the features are written by the map straight into the layout
 * the next product reads, exponentiated in place, and multiplied there — no copy in or out of the
 * kernel memory, no transpose, no packing pass over an N × F array:
 * - keys: each 256-row block of φ(K) is written in 4-column panels (the packed B operand), z summed
 *   from them key by key in order, V's block packed as the panels of Vᵀ, and stateᵀ += Vᵀ φ(K)_block
 *   (d_V × F, resident): per entry the products and sums of φ(K)ᵀV as `matmulInto` forms them (the
 *   kernel multiplies a·b, so the operand order does not change a bit);
 * - queries: each block of φ(Q) is written row-major and multiplied in place by the row-major-A
 *   kernel with the panels of S = c²·[state | z] (F × (d_V + 1): numerator and normalizer at once,
 *   c = featureNorm taken out of both maps), then divided row by row straight into the output.
 * Same bits as the JS-array streamed path when c is a power of 2 (m = 4ᵏ for positive/trig).
 * Finiteness of Q, K, V is checked in the passes that read them; on a failure `fail` (the three
 * assertFinite in order) throws the same NonFiniteError as checking them upfront.
 */
function residentBidirectional(
  inp: ResidentInputs,
  num: Float64Array,
  den: Float64Array,
  nonPositiveRows: number[],
  fail: () => void,
  logScaleInto: Float64Array,
): { keyShift: number; queryLogScale: Float64Array } {
  const { queries, keys, keysAll, values, omega, features, resolved, policy } = inp;
  const nQ = queries.rows;
  const nK = keys.rows;
  const d = queries.cols;
  const dV = values.cols;
  const V = values.data;
  // Padding rows are not read below: check them here (rarely more than a few).
  if (!allFinite(keysAll.data, nK * d, keysAll.data.length) || !allFinite(V, nK * dV, V.length)) fail();
  const m = omega.rows;
  const F = features === "positive" ? m : 2 * m;
  const c = featureNorm(features, m);
  const up4 = (x: number) => Math.ceil(x / 4) * 4;
  const even = (x: number) => x + (x & 1);
  const w = dV + 1;
  const kbK = Math.min(Math.max(nK, 1), STREAM_ROWS);
  const kbQ = Math.min(nQ, STREAM_ROWS);
  // Element offsets of the resident regions (16-byte aligned).
  const base = RESIDENT_BASE_BYTES / 8;
  const kp = base; // φ(K) block, F (padded to 4) × kbK in panels
  const vp = kp + even(up4(F) * kbK); // V block as panels of Vᵀ
  const st = vp + even(up4(dV) * kbK); // stateᵀ, d_V × F
  const sp = st + even(dV * F); // S = c²[state | z] in panels (F deep)
  const qf = sp + even(up4(w) * F); // φ(Q) block, kbQ × F row-major
  const nb = qf + even(kbQ * F); // [numerator | normalizer] of a query block, kbQ × (d_V + 1)
  const zp = nb + even(kbQ * w); // z = Σ_j φ(k_j), F
  const vs = zp + even(up4(F)); // a key block's rows of V staged for pack_value_panels; a query block's Y
  const end = vs + even(Math.max(kbK, kbQ) * dV);
  const K = residentKernels(end - base);
  K.f64.fill(0, st, st + dV * F);
  K.f64.fill(0, zp, zp + F);
  let keyShift = 0;
  if (nK > 0) {
    let vFinite = true;
    const r = streamFeaturesResident(keys, omega, features, resolved, "global", K, kp, "panels", end, (j0, j1) => {
      const kb = j1 - j0;
      // z += the block's feature sums, and V's rows into panels (with their max |v|: finite or not),
      // on the kernel module — the JavaScript loops' operations in their order (issue 14, stop 42).
      K.panel_column_sums_f64(kp * 8, kb, F, zp * 8);
      K.f64.set(V.subarray(j0 * dV, (j0 + kb) * dV), vs);
      if (!(K.pack_value_panels(vs * 8, dV, kb, dV, 0, vp * 8, 4, 0, 1) < Number.POSITIVE_INFINITY)) vFinite = false;
      residentGemmPanels(K, vp, kp, st, F, dV, F, kb);
    });
    if (!r.finite || !vFinite) fail();
    keyShift = r.logScale[0];
  }
  const f = K.f64;
  const z = f.subarray(zp, zp + F);
  const cc = (x: number) => c * (c * x);
  for (let l = 0; l < F; l++) {
    for (let j = 0; j < dV; j++) f[sp + panelIndex(l, j, F)] = cc(f[st + j * F + l]);
    f[sp + panelIndex(l, dV, F)] = cc(z[l]);
    for (let j = w; j < up4(w); j++) f[sp + panelIndex(l, j, F)] = 0;
  }
  const q = streamFeaturesResident(
    queries,
    omega,
    features,
    resolved,
    "row",
    K,
    qf,
    "rows",
    end,
    (i0, i1) => {
      const b = i1 - i0;
      residentGemmRows(K, qf, F, sp, F, nb, w, b, w, F);
      // Every D > 0 (the rule): the block's rows divided in WebAssembly (divide_rows_f64, the loop's
      // product by the same reciprocal) and copied out; else the loop, with its policies.
      if (K.divide_rows_f64(nb * 8, w, b, dV, vs * 8)) {
        const f = K.f64;
        num.set(f.subarray(vs, vs + b * dV), i0 * dV);
        for (let r = 0; r < b; r++) den[i0 + r] = f[nb + r * w + dV];
      } else divideRows(K.f64, nb, b, dV, num, den, i0, policy, nonPositiveRows);
    },
    logScaleInto,
  );
  if (!q.finite) fail();
  if (policy === "error" && nonPositiveRows.length > 0) {
    const i = nonPositiveRows[0];
    const di = den[i];
    const why = di === 0 ? "0 (no visible key, or every feature product underflowed)" : `${di} (trig features can give Dᵢ ≤ 0)`;
    throw new NumericalError(
      "normalizer",
      `Dᵢ > 0 for every query row (set onNonPositiveNormalizer to "zero" or "keep" to accept)`,
      `D[${i}] = ${why}`,
    );
  }
  return { keyShift, queryLogScale: q.logScale };
}

/** Whether a[from…to−1] are all finite (x − x is 0 exactly for finite x, NaN otherwise). */
function allFinite(a: Float64Array, from: number, to: number): boolean {
  let t = 0;
  for (let i = from; i < to; i++) t += a[i] - a[i];
  return t === 0;
}

/**
 * The b rows of [numerator | normalizer] at f[o…] (width dV + 1) divided into the output rows from
 * i0, with the guard of the module doc; rows with Dᵢ ≤ 0 are listed (and left zero unless "keep").
 */
function divideRows(
  f: Float64Array,
  o: number,
  b: number,
  dV: number,
  num: Float64Array,
  den: Float64Array,
  i0: number,
  policy: NonPositiveNormalizerPolicy,
  bad: number[],
): void {
  const w = dV + 1;
  for (let r = 0; r < b; r++) {
    const src = o + r * w;
    const di = f[src + dV];
    const i = i0 + r;
    den[i] = di;
    if (!(di > 0)) {
      bad.push(i);
      if (policy !== "keep" || di === 0) continue; // the fresh output row stays zero
    }
    const inv = 1 / di;
    const t = i * dV;
    for (let j = 0; j < dV; j++) num[t + j] = f[src + j] * inv;
  }
}
