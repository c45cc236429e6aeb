/**
 * BalanceKV (Han, Kapralov, Kochetkova, Sheth & Zandieh 2025, arXiv 2502.07861): streaming
 * ε-approximate attention by discrepancy-based halving.
 *
 * SoftmaxBalance (their Alg. 1) splits a batch of tokens with signs ε_j ∈ {±1} chosen by the
 * self-balancing walk of Alweiss, Liu & Sawhney (2021) on the vectors u_j = φ(k_j) ⊗ [v_j; 1],
 * where φ is the feature map of the exponential kernel, ⟨φ(k_i), φ(k_j)⟩ = exp(s⟨k_i, k_j⟩). The
 * walk only needs inner products, so it runs on the Gram matrix
 *   G_ij = exp(s⟨k_i, k_j⟩)(⟨v_i, v_j⟩ + 1),
 * normalized so that max_j G_jj = 1 (its ‖u_j‖ ≤ 1 assumption): token i takes ε_i = +1 with
 * probability ½ − ⟨w, u_i⟩/(2c) (clamped to [0, 1]), w = Σ_{j<i} ε_j u_j, c the threshold. Keeping
 * the tokens with ε = +1 at twice their weight leaves, for EVERY query q and every value coordinate
 * (and the normalizer), the error ⟨w, φ(q) ⊗ e⟩ — so by Cauchy–Schwarz
 *   |estimate − exact| ≤ ‖w‖ · e^{s‖q‖²/2}   (‖w‖² = εᵀGε unnormalized),
 * a deterministic certificate; the walk keeps ‖w‖ small (ALS: O(√(log(n/δ))) in every fixed
 * direction w.p. 1 − δ for c = 30 log(n/δ)). The theory's c acts like nearly uniform signs at the
 * batch sizes here (n ≤ a few hundred), so the default c = 0.1 makes the walk almost greedy, which
 * balances much better at these sizes (measured in the tests against random signs).
 *
 * Streaming (their MergeAndReduce, §3): level ℓ holds tokens of weight 2^ℓ; new tokens enter level
 * 0; a level that reaches 2·blockSize tokens is halved by SoftmaxBalance and its survivors move up.
 * Memory is ≈ 2·blockSize·log₂(n/blockSize) tokens per head; the certificate adds 2^ℓ‖w‖ per halving
 * (`errorCertificate`).
 */
import { type Matrix, RandomStream, type SeedKey, derive } from "@randattn/core";
import { assertNumber } from "@randattn/core/internal";
import {
  type AttentionPart,
  CompressedKvCache,
  type KvCacheShape,
  TokenStore,
  checkBudget,
  checkShape,
  logitsOf,
  mergeParts,
  partFromLogits,
  rowOf,
} from "./base.js";

/** Options of {@link softmaxBalance}. */
export interface SoftmaxBalanceOptions {
  /** Softmax scale s of the kernel exp(s⟨q, k⟩). */
  scale: number;
  /** c, the walk's threshold (module doc). @default 0.1 */
  threshold?: number;
}

/** Result of {@link softmaxBalance}. */
export interface SoftmaxBalanceResult {
  /** Indices with ε = +1, increasing: the half kept at double weight. */
  keep: number[];
  /** ε_j. */
  signs: Int8Array;
  /** ‖w‖ = √(εᵀGε), unnormalized: the certificate's factor (module doc). */
  discrepancy: number;
  flops: number;
}

/**
 * SoftmaxBalance: the self-balancing walk on u_j = φ(k_j) ⊗ [v_j; 1] (module doc).
 * @param keys n key rows (d each); values n value rows.
 * @param seed the walk's random stream.
 */
export function softmaxBalance(
  keys: readonly Float64Array[],
  values: readonly Float64Array[],
  options: SoftmaxBalanceOptions,
  seed: SeedKey,
): SoftmaxBalanceResult {
  const n = keys.length;
  const s = options.scale;
  const c = options.threshold ?? 0.1;
  assertNumber(s, "options.scale", { positive: true });
  assertNumber(c, "options.threshold", { positive: true });
  const logK = new Float64Array(n * n);
  const vv = new Float64Array(n * n);
  let maxLogDiag = Number.NEGATIVE_INFINITY;
  for (let i = 0; i < n; i++) {
    for (let j = 0; j <= i; j++) {
      let kk = 0;
      for (let a = 0; a < keys[i].length; a++) kk += keys[i][a] * keys[j][a];
      let v = 1;
      for (let a = 0; a < values[i].length; a++) v += values[i][a] * values[j][a];
      logK[i * n + j] = logK[j * n + i] = s * kk;
      vv[i * n + j] = vv[j * n + i] = v;
    }
    const ld = logK[i * n + i] + Math.log(vv[i * n + i]);
    if (ld > maxLogDiag) maxLogDiag = ld;
  }
  // Normalized Gram: G̃ = G / max_j G_jj, so ‖u_j‖ ≤ 1.
  const gram = new Float64Array(n * n);
  for (let i = 0; i < n * n; i++) gram[i] = Math.exp(logK[i] - maxLogDiag) * vv[i];
  const stream = new RandomStream(seed);
  const signs = new Int8Array(n);
  const walk = new Float64Array(n); // ⟨w, u_i⟩ for every i, updated as signs are fixed
  for (let i = 0; i < n; i++) {
    const p = Math.min(1, Math.max(0, 0.5 - walk[i] / (2 * c)));
    const e = stream.uniform() < p ? 1 : -1;
    signs[i] = e;
    for (let j = 0; j < n; j++) walk[j] += e * gram[i * n + j];
  }
  let q = 0;
  for (let i = 0; i < n; i++) q += signs[i] * walk[i];
  const keep: number[] = [];
  for (let i = 0; i < n; i++) if (signs[i] > 0) keep.push(i);
  const d = keys[0]?.length ?? 0;
  const dV = values[0]?.length ?? 0;
  return { keep, signs, discrepancy: Math.sqrt(Math.max(0, q)) * Math.exp(maxLogDiag / 2), flops: n * n * (d + dV + 4) };
}

/** Options of the `balance-kv` cache. */
export interface BalanceKvOptions extends KvCacheShape {
  /** b: a level is halved when it holds 2b tokens. @default 16 */
  blockSize?: number;
  /** The walk's threshold c (see {@link softmaxBalance}). @default 0.1 */
  threshold?: number;
}

export class BalanceKvCache extends CompressedKvCache {
  readonly kind = "balance-kv";
  readonly blockSize: number;
  readonly threshold: number;
  private readonly seed: SeedKey;
  private readonly levels: TokenStore[][];
  private readonly halvings: number[];
  /** Per head Σ 2^ℓ‖w‖ over its halvings (stored, counted). */
  private readonly certificate: Float64Array;

  constructor(options: BalanceKvOptions, seed: SeedKey) {
    const shape = checkShape(options, "balance-kv");
    super(shape);
    this.blockSize = checkBudget(options.blockSize ?? 16, "options.blockSize", shape.maxLength);
    this.threshold = options.threshold ?? 0.1;
    assertNumber(this.threshold, "options.threshold", { positive: true });
    this.seed = seed;
    this.levels = Array.from({ length: shape.numKvHeads }, () => []);
    this.halvings = new Array(shape.numKvHeads).fill(0);
    this.certificate = new Float64Array(shape.numKvHeads);
  }

  /**
   * C_g = Σ 2^ℓ‖w‖ over head g's halvings: for any query q, the stored sums differ from the exact
   * sums over every token appended by at most C_g·e^{s‖q‖²/2} in the normalizer and in each value
   * coordinate (module doc).
   */
  errorCertificate(g: number): number {
    return this.certificate[g];
  }

  protected storedPart(g: number, queries: Matrix, scale: number): AttentionPart {
    let part: AttentionPart | undefined;
    this.levels[g].forEach((store, level) => {
      if (store.size === 0) return;
      const logits = logitsOf(queries, store.keys, scale);
      const p = partFromLogits(
        logits,
        queries.rows,
        store.size,
        store.values,
        this.valueDim,
        new Float64Array(store.size).fill(level * Math.LN2),
      );
      p.flops += 2 * queries.rows * store.size * this.keyDim;
      part = part === undefined ? p : mergeParts(part, p, this.valueDim);
    });
    return part ?? partFromLogits(new Float64Array(0), queries.rows, 0, [], this.valueDim);
  }

  protected fold(g: number, keys: Matrix, values: Matrix, context: { scale: number }): number {
    const levels = this.levels[g];
    if (levels.length === 0) levels.push(new TokenStore());
    let flops = 0;
    for (let i = 0; i < keys.rows; i++) {
      levels[0].push(rowOf(keys, i), rowOf(values, i));
      for (let level = 0; level < levels.length && levels[level].size >= 2 * this.blockSize; level++) {
        const store = levels[level];
        const r = softmaxBalance(
          store.keys,
          store.values,
          { scale: context.scale, threshold: this.threshold },
          derive(this.seed, "balance", g, this.halvings[g]),
        );
        this.halvings[g] += 1;
        this.certificate[g] += 2 ** level * r.discrepancy;
        flops += r.flops;
        if (level + 1 === levels.length) levels.push(new TokenStore());
        for (const j of r.keep) levels[level + 1].push(store.keys[j], store.values[j]);
        store.keep([]);
      }
    }
    return flops;
  }

  buffers(): ArrayBufferView[] {
    return [this.certificate, ...this.levels.flatMap((ls) => ls.flatMap((s) => s.buffers(false)))];
  }
}
