/**
 * The random-feature state (Performer as an RNN; Choromanski et al. 2021 §2.6, Katharopoulos et
 * al. 2020): per KV head the running sums S = Σ_j φ(k_j) v_jᵀ (F×d_V) and z = Σ_j φ(k_j) (F),
 * O(F·d_V) memory independent of the length. Query i of a step reads the state after folding the
 * keys up to and including its own token, so decoding equals the causal random-feature attention
 * of features/attention.ts (its prefix-sum form) — the tests check 1e-12.
 *
 * Stabilization as there: φ(q) with its row shift (cancels in num/den); the key features with one
 * running global shift G (the largest exponent so far): a key with a larger exponent rescales S and
 * z by e^{G_old − G_new} before it is added, so nothing overflows and nothing is added to D.
 * The frequencies Ω (m×d, orthogonal blocks by default) are drawn per head from the seed and stored.
 */
import { Matrix, type SeedKey, derive } from "@randattn/core";
import { assertInteger, assertOneOf } from "@randattn/core/internal";
import { type FeatureKind, evaluateFeatures, featureDimension, resolveKernel } from "../features/maps.js";
import { type ProjectionKind, drawProjection } from "../features/projection.js";
import { type AttentionPart, CompressedKvCache, type KvCacheShape, checkShape } from "./base.js";

/** Options of the `random-features` cache. */
export interface RandomFeatureStateOptions extends KvCacheShape {
  /** m, random frequencies per head. @default 4·keyDim */
  numFrequencies?: number;
  /** Feature family (features/maps.ts). @default "positive" */
  features?: FeatureKind;
  /** i.i.d. or orthogonal frequencies. @default "orthogonal" */
  projection?: ProjectionKind;
}

export class RandomFeatureStateCache extends CompressedKvCache {
  readonly kind = "random-features";
  readonly numFrequencies: number;
  readonly features: FeatureKind;
  readonly projection: ProjectionKind;
  private readonly omegas: Matrix[];
  private readonly states: Float64Array[];
  private readonly sums: Float64Array[];
  /** Per head the running key shift G (one float each). */
  private readonly shifts: Float64Array;
  private readonly featureDim: number;

  constructor(options: RandomFeatureStateOptions, seed: SeedKey) {
    const shape = checkShape(options, "random-features");
    super(shape);
    this.numFrequencies = options.numFrequencies ?? 4 * shape.keyDim;
    assertInteger(this.numFrequencies, "options.numFrequencies");
    this.features = options.features ?? "positive";
    assertOneOf(this.features, "options.features", ["trig", "positive", "hyperbolic"] as const);
    this.projection = options.projection ?? "orthogonal";
    assertOneOf(this.projection, "options.projection", ["iid", "orthogonal"] as const);
    this.featureDim = featureDimension(this.features, this.numFrequencies);
    this.omegas = Array.from({ length: shape.numKvHeads }, (_, g) =>
      drawProjection(this.numFrequencies, shape.keyDim, { projection: this.projection }, derive(seed, "random-features", g)),
    );
    this.states = Array.from({ length: shape.numKvHeads }, () => new Float64Array(this.featureDim * shape.valueDim));
    this.sums = Array.from({ length: shape.numKvHeads }, () => new Float64Array(this.featureDim));
    this.shifts = new Float64Array(shape.numKvHeads).fill(Number.NEGATIVE_INFINITY);
  }

  /** Ω of head g (m×d). */
  frequencies(g: number): Matrix {
    return this.omegas[g];
  }

  protected storedPart(): AttentionPart {
    throw new Error("unreachable: the random-feature state overrides attendGroup");
  }

  protected fold(): number {
    return 0;
  }

  protected override attendGroup(
    g: number,
    queries: readonly Matrix[],
    keys: Matrix,
    values: Matrix,
    scale: number,
  ): { outputs: Matrix[]; flops: number } {
    const d = this.keyDim;
    const dV = this.valueDim;
    const F = this.featureDim;
    const resolved = resolveKernel({ kind: "softmax", scale }, this.features, d);
    const omega = this.omegas[g];
    const S = this.states[g];
    const z = this.sums[g];
    const t = keys.rows;
    const phiK = evaluateFeatures(keys, omega, this.features, resolved, "row");
    const phiQ = queries.map((q) => evaluateFeatures(q, omega, this.features, resolved, "row"));
    const outputs = queries.map(() => new Matrix(t, dV));
    for (let i = 0; i < t; i++) {
      const ls = phiK.logScale[i];
      if (ls > this.shifts[g]) {
        const f = this.shifts[g] === Number.NEGATIVE_INFINITY ? 0 : Math.exp(this.shifts[g] - ls);
        for (let a = 0; a < S.length; a++) S[a] *= f;
        for (let a = 0; a < F; a++) z[a] *= f;
        this.shifts[g] = ls;
      }
      const w = Math.exp(ls - this.shifts[g]);
      const fk = phiK.features.data;
      for (let a = 0; a < F; a++) {
        const x = fk[i * F + a] * w;
        z[a] += x;
        for (let c = 0; c < dV; c++) S[a * dV + c] += x * values.data[i * dV + c];
      }
      phiQ.forEach((pq, h) => {
        const fq = pq.features.data;
        let den = 0;
        const out = outputs[h].data;
        for (let a = 0; a < F; a++) {
          const x = fq[i * F + a];
          den += x * z[a];
          for (let c = 0; c < dV; c++) out[i * dV + c] += x * S[a * dV + c];
        }
        for (let c = 0; c < dV; c++) out[i * dV + c] = den > 0 ? out[i * dV + c] / den : 0;
      });
    }
    const m = this.numFrequencies;
    const flops = (t + queries.length * t) * (2 * d * m + F) + t * F * (2 * dV + 1) + queries.length * t * F * (2 * dV + 2);
    return { outputs, flops };
  }

  buffers(): ArrayBufferView[] {
    return [...this.omegas.map((o) => o.data), ...this.states, ...this.sums, this.shifts];
  }
}
