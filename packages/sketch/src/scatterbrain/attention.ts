/**
 * Scatterbrain (Chen, Dao, Winsor, Song, Rudra & Ré, NeurIPS 2021): sparse + low-rank attention.
 *
 * The unnormalized attention matrix A is estimated by
 *   Â = φ(Q)φ(K)ᵀ + S,   S_ij = (A_ij − φ(q_i)ᵀφ(k_j)) on the LSH support 𝒮, 0 elsewhere,
 * with φ the positive (FAVOR+) random features (features/). On 𝒮 the estimate is the exact A_ij,
 * off 𝒮 it is the Performer estimate, so nothing is counted twice and E[Â] = A entrywise (the
 * paper's unbiasedness: the sparse part removes the low-rank estimate where it is replaced, Eq. (2)).
 * Ŷ = diag(Â1)⁻¹ Â V is computed as φ(Q)(φ(K)ᵀV) + S V in O(N(m d + |𝒮|/N · (d + d_V))) — never
 * forming Â. 𝒮 = {(i, j): h(q_i) = h(k_j)} with h a SimHash of `numBits` bits (lsh/simhash.ts;
 * the paper uses an LSH such as Reformer's; numBits = 0 puts every pair in one bucket, the exact
 * limit).
 *
 * `normalizer: "exact"` divides by the exact Z instead of Â1, making Ŷ unbiased for Y.
 * Masks: the causal and padding masks of the random-feature path apply to both parts (the low-rank
 * part by prefix sums; 𝒮 restricted to visible pairs) — our extension; the paper treats the
 * bidirectional case.
 *
 * Numerics: the low-rank part comes in the random-feature driver's per-row log scale L_i; each row
 * is rescaled to r_i = max(L_i, largest exact logit on 𝒮) before exact entries are added.
 */
import { Matrix, NumericalError, type SeedKey, ValueError, derive } from "@randattn/core";
import { assertInteger, assertOneOf } from "@randattn/core/internal";
import { randomFeatureAttention, type RandomFeatureMask } from "../features/attention.js";
import { randomFeatures } from "../features/maps.js";
import type { ProjectionKind } from "../features/projection.js";
import { logit } from "../hyper/parts.js";
import { type SoftmaxKernel, checkAttentionInputs, drawHyperplanes, simHash, softmaxScaleOf } from "../lsh/index.js";
import type { Cost } from "../operators/types.js";

/** Options of {@link scatterbrainAttention}. */
export interface ScatterbrainOptions {
  /** m, random frequencies of the low-rank part. */
  numFrequencies: number;
  /** SimHash bits of the sparse support (2^numBits buckets). @default 4 */
  numBits?: number;
  /** Frequencies i.i.d. or in orthogonal blocks. @default "orthogonal" */
  projection?: ProjectionKind;
  /** `"estimated"` (Â1) or `"exact"` Z. @default "estimated" */
  normalizer?: "estimated" | "exact";
  /** Kernel: softmax only. @default { kind: "softmax", scale: 1/√d } */
  kernel?: SoftmaxKernel;
  /** Causal or padding mask (module comment). @default none */
  mask?: RandomFeatureMask;
  /** Precomputed frequencies (m × d). @default drawn */
  omega?: Matrix;
  /** Precomputed hyperplanes (numBits × d). @default drawn */
  planes?: Matrix;
}

/** Result of {@link scatterbrainAttention}. */
export interface ScatterbrainResult {
  output: Matrix;
  cost: Cost & { kernelEvaluations: number; randomBits: number; hashes: number };
  /** |𝒮|, visible pairs evaluated exactly. */
  supportSize: number;
}

/**
 * Scatterbrain attention (module comment), seed last.
 * @throws ShapeError / NonFiniteError on inputs; ValueError on options; NumericalError when a row's
 *   normalizer is 0 (no visible key, or every feature underflowed).
 */
export function scatterbrainAttention(
  queries: Matrix,
  keys: Matrix,
  values: Matrix,
  options: ScatterbrainOptions,
  seed: SeedKey,
): ScatterbrainResult {
  checkAttentionInputs(queries, keys, values);
  if (options === null || typeof options !== "object")
    throw new ValueError("options", "an options object with numFrequencies", String(options));
  assertInteger(options.numFrequencies, "options.numFrequencies", 1);
  const numBits = options.numBits ?? options.planes?.rows ?? 4;
  assertInteger(numBits, "options.numBits", 0, 24);
  const normalizer = options.normalizer ?? "estimated";
  assertOneOf(normalizer, "options.normalizer", ["estimated", "exact"] as const);
  const d = queries.cols;
  const scale = softmaxScaleOf(options.kernel, d);
  const nQ = queries.rows;
  const nK = keys.rows;
  const dV = values.cols;
  const kernel = { kind: "softmax" as const, scale };
  const rf = randomFeatureAttention(
    queries,
    keys,
    values,
    {
      numFrequencies: options.numFrequencies,
      features: "positive",
      projection: options.projection ?? "orthogonal",
      kernel,
      mask: options.mask,
      onNonPositiveNormalizer: "keep",
      omega: options.omega,
    },
    derive(seed, "features"),
  );
  const m = options.numFrequencies;
  // 64 bits per Gaussian: m·d entries, plus (orthogonal) m·d more for the χ_d row lengths.
  let randomBits = options.omega === undefined ? 64 * m * d * ((options.projection ?? "orthogonal") === "orthogonal" ? 2 : 1) : 0;
  // The same feature values the driver used (deterministic in Ω): needed entrywise on 𝒮.
  const fQ = randomFeatures(queries, rf.omega, { features: "positive", kernel, shift: "row" }).features.data;
  // The driver featurizes only the real keys under a padding mask (their global shift).
  const keyLength = options.mask?.kind === "padding" ? options.mask.keyLength : nK;
  const keysUsed = keyLength === nK ? keys : new Matrix(keyLength, d, keys.data.subarray(0, keyLength * d));
  const fK =
    keyLength > 0
      ? randomFeatures(keysUsed, rf.omega, { features: "positive", kernel, shift: "global" }).features.data
      : new Float64Array(0);
  const F = rf.featureCount;
  let planes = options.planes;
  if (planes === undefined) {
    planes = drawHyperplanes(numBits, d, derive(seed, "lsh"));
    randomBits += 64 * numBits * d;
  } else if (planes.rows !== numBits || planes.cols !== d) {
    throw new ValueError("options.planes", `${numBits}×${d} (numBits × d)`, planes.shape);
  }
  const qCode = simHash(queries, planes);
  const kCode = simHash(keys, planes);
  // Keys grouped by bucket.
  const byCode = new Map<number, number[]>();
  for (let j = 0; j < nK; j++) {
    const list = byCode.get(kCode[j]);
    if (list) list.push(j);
    else byCode.set(kCode[j], [j]);
  }
  let causal = false;
  let offset = 0;
  if (options.mask?.kind === "causal") {
    causal = true;
    offset = options.mask.offset ?? nK - nQ;
  }
  const visibleEnd = (i: number) => (causal ? Math.min(nK, offset + i + 1) : keyLength);

  const Q = queries.data;
  const K = keys.data;
  const V = values.data;
  const output = new Matrix(nQ, dV);
  const Y = output.data;
  const rfY = rf.output.data;
  let support = 0;
  let exactPairs = 0;
  const ls: number[] = [];
  for (let i = 0; i < nQ; i++) {
    const end = visibleEnd(i);
    const bucket = (byCode.get(qCode[i]) ?? []).filter((j) => j < end);
    support += bucket.length;
    ls.length = 0;
    const L = rf.normalizerLogScale[i];
    let r = rf.normalizer[i] > 0 ? L : Number.NEGATIVE_INFINITY;
    for (const j of bucket) {
      const l = logit(Q, i, K, j, d, scale);
      ls.push(l);
      if (l > r) r = l;
    }
    if (r === Number.NEGATIVE_INFINITY) throw new NumericalError("keys", `a visible key with κ > 0 for query ${i}`, "normalizer 0");
    const fr = Math.exp(L - r);
    // Low-rank part: numerator = Ŷ_rf·D_rf (both in units e^{L}), rescaled to e^{r}.
    let den = rf.normalizer[i] * fr;
    const row = Y.subarray(i * dV, (i + 1) * dV);
    for (let c = 0; c < dV; c++) row[c] = rfY[i * dV + c] * rf.normalizer[i] * fr;
    for (let u = 0; u < bucket.length; u++) {
      const j = bucket[u];
      let dot = 0;
      for (let l = 0; l < F; l++) dot += fQ[i * F + l] * fK[j * F + l];
      const corr = Math.exp(ls[u] - r) - dot * fr;
      den += corr;
      for (let c = 0; c < dV; c++) row[c] += corr * V[j * dV + c];
    }
    if (normalizer === "exact") {
      let mx = Number.NEGATIVE_INFINITY;
      const all: number[] = [];
      for (let j = 0; j < end; j++) {
        const l = logit(Q, i, K, j, d, scale);
        all.push(l);
        if (l > mx) mx = l;
      }
      if (mx === Number.NEGATIVE_INFINITY) throw new NumericalError("keys", `a visible key for query ${i}`, "none");
      let z = 0;
      for (const l of all) z += Math.exp(l - mx);
      den = z * Math.exp(mx - r);
      exactPairs += end;
    }
    if (!(den > 0)) throw new NumericalError("normalizer", `a positive estimated normalizer for query ${i}`, String(den));
    for (let c = 0; c < dV; c++) row[c] /= den;
  }
  const featureFlops = 2 * (nQ + nK) * d * m + (nQ + nK) * F;
  const flops =
    rf.cost.flops +
    featureFlops +
    2 * (nQ + nK) * d * numBits +
    support * (2 * d + 2 * F + 4 + 2 * dV) +
    exactPairs * (2 * d + 2) +
    nQ * dV * 2;
  return {
    output,
    cost: {
      flops,
      floatsStored: rf.cost.floatsStored + numBits * d + 2 * (nQ + nK) + nQ * dV,
      kernelEvaluations: support + exactPairs,
      randomBits,
      hashes: numBits > 0 ? nQ + nK : 0,
    },
    supportSize: support,
  };
}
