/**
 * SubGen (Zandieh, Han, Mirrokni & Karbasi 2024, arXiv 2402.06082): sublinear memory from two
 * streaming estimators.
 *
 * - Normalizer: online clustering of the keys (their Alg. 1). A key within distance δ of a center
 *   joins the nearest cluster (else it opens a new one while fewer than `clusters` exist, else
 *   joins the nearest anyway — outside the (m, δ)-clusterable assumption). Each cluster keeps its
 *   count n_c and a uniform reservoir of `samplesPerCluster` keys, and
 *     Ẑ = Σ_c n_c · mean_{k ∈ reservoir_c} exp(s⟨q, k⟩).
 *   Every key of a cluster is within δ of its center, so each term is within e^{±sδ‖q‖} of the
 *   center's and Ẑ/Z ∈ [e^{−2sδ‖q‖}, e^{2sδ‖q‖}] deterministically (the bound the tests check).
 * - Numerator: ℓ2 sampling of the values (their Alg. 2): `valueSamples` independent weighted
 *   reservoirs each hold one token j with probability ‖v_j‖²/W (W = Σ‖v_j‖²), and
 *     num̂ = (1/s) Σ_r exp(s⟨q, k_r⟩) v_r W/‖v_r‖²,
 *   unbiased with E‖num̂ − num‖² = (W Σ_j a_j² − ‖num‖²)/s, a_j = exp(s⟨q, k_j⟩) — hence their
 *   bound ‖z − Attn‖ ≤ ε‖softmax(Kq)‖₂‖V‖_op-type guarantee for s = O(d/ε²).
 * δ = `radius` × the mean key norm of the first step's keys of the head (a pure function of the
 * tokens). Random draws: one stream per (head, token index).
 */
import { type Matrix, RandomStream, type SeedKey, derive } from "@randattn/core";
import { assertInteger, assertNumber } from "@randattn/core/internal";
import { type AttentionPart, CompressedKvCache, type KvCacheShape, checkShape, emptyPart, logitsOf, rowOf } from "./base.js";

/** Options of the `subgen` cache. */
export interface SubGenOptions extends KvCacheShape {
  /** The most clusters kept per head (m). @default 16 */
  clusters?: number;
  /** Keys sampled per cluster (t). @default 4 */
  samplesPerCluster?: number;
  /** ℓ2 samples of the values (s). @default 16 */
  valueSamples?: number;
  /** δ relative to the mean norm of the head's first keys. @default 0.5 */
  radius?: number;
}

interface Cluster {
  center: Float64Array;
  /** n_c and nothing else (one float). */
  count: Float64Array;
  samples: Float64Array[];
}

interface ValueSlot {
  key: Float64Array;
  value: Float64Array;
  /** ‖v‖² */
  weight: Float64Array;
}

export class SubGenCache extends CompressedKvCache {
  readonly kind = "subgen";
  readonly clusters: number;
  readonly samplesPerCluster: number;
  readonly valueSamples: number;
  readonly radius: number;
  private readonly seed: SeedKey;
  private readonly clusterSets: Cluster[][];
  private readonly slots: (ValueSlot | undefined)[][];
  /** Per head: W = Σ‖v‖², δ (absolute). */
  private readonly totals: Float64Array[];
  private readonly appendedPerHead: number[];

  constructor(options: SubGenOptions, seed: SeedKey) {
    const shape = checkShape(options, "subgen");
    super(shape);
    this.clusters = options.clusters ?? 16;
    assertInteger(this.clusters, "options.clusters");
    this.samplesPerCluster = options.samplesPerCluster ?? 4;
    assertInteger(this.samplesPerCluster, "options.samplesPerCluster");
    this.valueSamples = options.valueSamples ?? 16;
    assertInteger(this.valueSamples, "options.valueSamples");
    this.radius = options.radius ?? 0.5;
    assertNumber(this.radius, "options.radius", { positive: true });
    this.seed = seed;
    this.clusterSets = Array.from({ length: shape.numKvHeads }, () => []);
    this.slots = Array.from({ length: shape.numKvHeads }, () => new Array(this.valueSamples).fill(undefined));
    this.totals = Array.from({ length: shape.numKvHeads }, () => new Float64Array(2));
    this.appendedPerHead = new Array(shape.numKvHeads).fill(0);
  }

  /** δ of head g (absolute), 0 before the first step. */
  clusterRadius(g: number): number {
    return this.totals[g][1];
  }

  /** The clusters of head g: centers and counts (for tests and diagnostics). */
  clusterCounts(g: number): number[] {
    return this.clusterSets[g].map((c) => c.count[0]);
  }

  protected storedPart(g: number, queries: Matrix, scale: number): AttentionPart {
    const t = queries.rows;
    const dV = this.valueDim;
    const part = emptyPart(t, dV);
    const clusters = this.clusterSets[g];
    const sampleKeys: Float64Array[] = [];
    const sampleLogW: number[] = [];
    for (const c of clusters) {
      for (const k of c.samples) {
        sampleKeys.push(k);
        sampleLogW.push(Math.log(c.count[0] / c.samples.length));
      }
    }
    const slots = this.slots[g].filter((s): s is ValueSlot => s !== undefined);
    if (sampleKeys.length === 0) return part;
    const W = this.totals[g][0];
    const lz = logitsOf(queries, sampleKeys, scale);
    const ln = logitsOf(
      queries,
      slots.map((s) => s.key),
      scale,
    );
    const n1 = sampleKeys.length;
    const n2 = slots.length;
    for (let i = 0; i < t; i++) {
      let m = Number.NEGATIVE_INFINITY;
      for (let j = 0; j < n1; j++) m = Math.max(m, lz[i * n1 + j] + sampleLogW[j]);
      part.shift[i] = m;
      let den = 0;
      for (let j = 0; j < n1; j++) den += Math.exp(lz[i * n1 + j] + sampleLogW[j] - m);
      part.den[i] = den;
      for (let r = 0; r < n2; r++) {
        const a = Math.exp(ln[i * n2 + r] - m) * (W / (this.valueSamples * slots[r].weight[0]));
        for (let c = 0; c < dV; c++) part.num[i * dV + c] += a * slots[r].value[c];
      }
    }
    part.flops = t * (n1 + n2) * (2 * this.keyDim + 3) + t * n2 * 2 * dV;
    return part;
  }

  protected fold(g: number, keys: Matrix, values: Matrix): number {
    const d = this.keyDim;
    const totals = this.totals[g];
    if (totals[1] === 0) {
      let mean = 0;
      for (let i = 0; i < keys.rows; i++) {
        let s = 0;
        for (let c = 0; c < d; c++) s += keys.data[i * d + c] ** 2;
        mean += Math.sqrt(s) / keys.rows;
      }
      totals[1] = this.radius * (mean > 0 ? mean : 1);
    }
    const delta = totals[1];
    const clusters = this.clusterSets[g];
    for (let i = 0; i < keys.rows; i++) {
      const k = rowOf(keys, i);
      const v = rowOf(values, i);
      const stream = new RandomStream(derive(this.seed, "subgen", g, this.appendedPerHead[g]));
      this.appendedPerHead[g] += 1;
      let best = -1;
      let bestDist = Number.POSITIVE_INFINITY;
      clusters.forEach((c, idx) => {
        let s = 0;
        for (let a = 0; a < d; a++) s += (c.center[a] - k[a]) ** 2;
        if (s < bestDist) {
          bestDist = s;
          best = idx;
        }
      });
      if (best < 0 || (Math.sqrt(bestDist) > delta && clusters.length < this.clusters)) {
        clusters.push({ center: k, count: Float64Array.of(1), samples: [k] });
      } else {
        const c = clusters[best];
        c.count[0] += 1;
        if (c.samples.length < this.samplesPerCluster) c.samples.push(k);
        else {
          // Reservoir sampling: the new key replaces a uniform slot with probability t/n_c.
          const u = stream.uniform();
          if (u < this.samplesPerCluster / c.count[0]) c.samples[Math.floor((u * c.count[0]) / 1)] = k;
        }
      }
      let w = 0;
      for (const x of v) w += x * x;
      totals[0] += w;
      const slots = this.slots[g];
      for (let r = 0; r < this.valueSamples; r++) {
        const u = stream.uniform();
        if (w > 0 && u < w / totals[0]) slots[r] = { key: k, value: v, weight: Float64Array.of(w) };
      }
    }
    return keys.rows * (this.clusters * 3 * d + this.valueSamples + 2 * this.valueDim);
  }

  buffers(): ArrayBufferView[] {
    const out: ArrayBufferView[] = [...this.totals];
    for (let g = 0; g < this.numKvHeads; g++) {
      for (const c of this.clusterSets[g]) {
        out.push(c.count);
        // The center is the cluster's first key; it is stored once even while it is also a sample.
        const samples = c.samples.filter((s) => s !== c.center);
        out.push(c.center, ...samples);
      }
      // A token held by several slots is stored once.
      const seen = new Set<Float64Array>();
      for (const s of this.slots[g]) {
        if (s === undefined || seen.has(s.key)) continue;
        seen.add(s.key);
        out.push(s.key, s.value, s.weight);
      }
    }
    return out;
  }
}
