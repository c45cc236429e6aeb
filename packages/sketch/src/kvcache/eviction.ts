/**
 * Deterministic eviction caches — the exact references of issue 12:
 * - `full`: keeps every token (equals core decoding);
 * - `sliding-window`: the last `window` tokens;
 * - `sink-window`: the first `sinks` tokens (attention sinks) plus the last `window` (StreamingLLM,
 *   Xiao et al. 2023, arXiv 2309.17453 §3.2: the first tokens collect attention mass whatever their
 *   content, so evicting them breaks the softmax normalization);
 * - `h2o`: the `recent` newest tokens plus the `heavy` older tokens with the largest accumulated
 *   attention Σ_steps Σ_queries p_ij (Zhang et al. 2023, arXiv 2306.14048, the greedy
 *   heavy-hitter oracle, Alg. 1: after each step the token with the smallest accumulated score
 *   outside the recent window is evicted).
 * Tokens are attended with their stored keys and values exactly; only which tokens remain differs.
 * A budget larger than the sequence evicts nothing, so the cache equals `full`.
 */
import type { Matrix } from "@randattn/core";
import {
  type AttentionPart,
  CompressedKvCache,
  type FoldContext,
  type KvCacheShape,
  TokenStore,
  checkBudget,
  checkShape,
  logitsOf,
  rowOf,
} from "./base.js";

/** Options of the `full` cache. */
export type FullCacheOptions = KvCacheShape;

/** Options of the `sliding-window` cache. */
export interface SlidingWindowOptions extends KvCacheShape {
  /** Tokens kept: the newest `window` (≥ 1). */
  window: number;
}

/** Options of the `sink-window` cache (StreamingLLM). */
export interface SinkWindowOptions extends KvCacheShape {
  /** The first tokens kept forever (attention sinks). @default 4 */
  sinks?: number;
  /** The newest tokens kept (≥ 1). */
  window: number;
}

/** Options of the `h2o` cache. */
export interface H2oOptions extends KvCacheShape {
  /** Heavy hitters kept among the older tokens (≥ 0). */
  heavy: number;
  /** Newest tokens always kept (≥ 1). */
  recent: number;
}

/** Keeps tokens in arrival order, evicting by a rule applied after each fold. */
abstract class EvictionCache extends CompressedKvCache {
  protected readonly stores: TokenStore[];

  constructor(shape: ReturnType<typeof checkShape>) {
    super(shape);
    this.stores = Array.from({ length: shape.numKvHeads }, () => new TokenStore());
  }

  protected storedPart(g: number, queries: Matrix, scale: number): AttentionPart {
    return this.stores[g].part(queries, scale, this.valueDim, false);
  }

  /** Indices (into the store) to keep after the fold; all by default. */
  protected abstract keepAfterFold(g: number): number[] | undefined;

  protected fold(g: number, keys: Matrix, values: Matrix, context: FoldContext): number {
    const flops = this.observe(g, keys, context);
    for (let i = 0; i < keys.rows; i++) {
      this.stores[g].push(rowOf(keys, i), rowOf(values, i));
    }
    const keep = this.keepAfterFold(g);
    if (keep !== undefined) {
      this.stores[g].keep(keep);
      this.afterKeep(g, keep);
    }
    return flops;
  }

  /** Records what the step's attention says about the stored and new tokens (H2O); returns flops. */
  protected observe(_g: number, _keys: Matrix, _context: FoldContext): number {
    return 0;
  }

  protected afterKeep(_g: number, _keep: number[]): void {}

  buffers(): ArrayBufferView[] {
    return this.stores.flatMap((s) => s.buffers(false));
  }
}

/** Every token kept: the exact cache in this package's machinery. */
export class FullCache extends EvictionCache {
  readonly kind = "full";
  constructor(options: FullCacheOptions) {
    super(checkShape(options, "full"));
  }
  protected keepAfterFold(): undefined {
    return undefined;
  }
}

/** The newest `window` tokens. */
export class SlidingWindowCache extends EvictionCache {
  readonly kind = "sliding-window";
  readonly window: number;
  constructor(options: SlidingWindowOptions) {
    const shape = checkShape(options, "sliding-window");
    super(shape);
    this.window = checkBudget(options.window, "options.window", shape.maxLength);
  }
  protected keepAfterFold(g: number): number[] | undefined {
    const n = this.stores[g].size;
    if (n <= this.window) return undefined;
    return Array.from({ length: this.window }, (_, i) => n - this.window + i);
  }
}

/** The first `sinks` tokens and the newest `window`. */
export class SinkWindowCache extends EvictionCache {
  readonly kind = "sink-window";
  readonly sinks: number;
  readonly window: number;
  constructor(options: SinkWindowOptions) {
    const shape = checkShape(options, "sink-window");
    super(shape);
    this.sinks = checkBudget(options.sinks ?? 4, "options.sinks", shape.maxLength, 0);
    this.window = checkBudget(options.window, "options.window", shape.maxLength);
    checkBudget(this.sinks + this.window, "options.sinks + options.window", shape.maxLength);
  }
  protected keepAfterFold(g: number): number[] | undefined {
    const n = this.stores[g].size;
    if (n <= this.sinks + this.window) return undefined;
    const keep = Array.from({ length: this.sinks }, (_, i) => i);
    for (let i = n - this.window; i < n; i++) keep.push(i);
    return keep;
  }
}

/** Heavy hitters by accumulated attention plus the newest `recent` tokens (H2O). */
export class H2oCache extends EvictionCache {
  readonly kind = "h2o";
  readonly heavy: number;
  readonly recent: number;
  /** Per head, the accumulated attention score of each stored token (a stored buffer). */
  private scores: number[][];

  constructor(options: H2oOptions) {
    const shape = checkShape(options, "h2o");
    super(shape);
    this.heavy = checkBudget(options.heavy, "options.heavy", shape.maxLength, 0);
    this.recent = checkBudget(options.recent, "options.recent", shape.maxLength);
    checkBudget(this.heavy + this.recent, "options.heavy + options.recent", shape.maxLength);
    this.scores = Array.from({ length: shape.numKvHeads }, () => []);
  }

  protected override observe(g: number, keys: Matrix, context: FoldContext): number {
    // p_ij = e^{ℓ_ij − m_i}/den_i for the stored tokens and the new ones (causal), summed over
    // the group's query heads and the step's queries (H2O's accumulated attention).
    const store = this.stores[g];
    const n = store.size;
    const t = keys.rows;
    const acc = new Float64Array(n + t);
    let flops = 0;
    context.queries.forEach((q, h) => {
      const shift = context.shifts[h];
      const den = context.dens[h];
      const stored = logitsOf(q, store.keys, context.scale);
      const fresh = logitsOf(
        q,
        Array.from({ length: t }, (_, j) => rowOf(keys, j)),
        context.scale,
      );
      for (let i = 0; i < t; i++) {
        for (let j = 0; j < n; j++) acc[j] += Math.exp(stored[i * n + j] - shift[i]) / den[i];
        for (let j = 0; j <= i; j++) acc[n + j] += Math.exp(fresh[i * t + j] - shift[i]) / den[i];
      }
      flops += t * (n + t) * (2 * this.keyDim + 3);
    });
    const scores = this.scores[g];
    for (let j = 0; j < n; j++) scores[j] += acc[j];
    for (let j = 0; j < t; j++) scores.push(acc[n + j]);
    return flops;
  }

  protected keepAfterFold(g: number): number[] | undefined {
    const n = this.stores[g].size;
    if (n <= this.heavy + this.recent) return undefined;
    const older = n - this.recent;
    const scores = this.scores[g];
    // The `heavy` largest scores among the older tokens (ties: the earlier token), in position order.
    const order = Array.from({ length: older }, (_, i) => i).sort((a, b) => scores[b] - scores[a] || a - b);
    const keep = order.slice(0, this.heavy).sort((a, b) => a - b);
    for (let i = older; i < n; i++) keep.push(i);
    return keep;
  }

  protected override afterKeep(g: number, keep: number[]): void {
    this.scores[g] = keep.map((i) => this.scores[g][i]);
  }

  override buffers(): ArrayBufferView[] {
    const out = super.buffers();
    for (const s of this.scores) if (s.length > 0) out.push(Float64Array.from(s));
    return out;
  }
}
