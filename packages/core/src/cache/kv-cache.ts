/**
 * The KV cache of multi-head / grouped-query attention (§4, §4.1): the keys and values of every
 * token seen so far, one K and one V block per KV head, so each new token costs one new query
 * row against the cached rows instead of recomputing all K/V (O(N²d) overall instead of O(N³d)).
 * With G < H KV heads (GQA) only G blocks are stored — the memory the sharing saves.
 */
import { ShapeError, ValueError } from "../errors.js";
import type { Matrix } from "../matrix.js";
import { assertFinite, assertInteger, assertNonEmpty, assertShape, describe } from "../validate.js";
import { RowBuffer } from "./buffer.js";

/** Options of {@link KVCache}. */
export interface KVCacheOptions {
  /** Number G of KV heads stored (H for MHA, 1 for MQA). */
  numKvHeads: number;
  /** d_QK, the width of each cached key row. */
  keyDim: number;
  /** d_V, the width of each cached value row. */
  valueDim: number;
  /** Rows allocated up front per head; capacity doubles when exceeded. @default 16 */
  initialCapacity?: number;
}

/**
 * Append-only KV cache: per KV head g, K_g (length×keyDim) and V_g (length×valueDim).
 * Keys are stored as the attention uses them (already rotated when RoPE is on), so cached rows are
 * never touched again.
 */
export class KVCache {
  /** G, the number of KV heads stored. */
  readonly numKvHeads: number;
  /** d_QK of each key row. */
  readonly keyDim: number;
  /** d_V of each value row. */
  readonly valueDim: number;
  private readonly keyBlocks: RowBuffer[];
  private readonly valueBlocks: RowBuffer[];

  /**
   * @throws ValueError when a size is not a positive integer.
   */
  constructor(opts: KVCacheOptions) {
    if (opts === null || typeof opts !== "object") throw new ValueError("opts", "a KVCacheOptions object", describe(opts));
    assertInteger(opts.numKvHeads, "opts.numKvHeads");
    assertInteger(opts.keyDim, "opts.keyDim");
    assertInteger(opts.valueDim, "opts.valueDim");
    const capacity = opts.initialCapacity ?? 16;
    assertInteger(capacity, "opts.initialCapacity");
    this.numKvHeads = opts.numKvHeads;
    this.keyDim = opts.keyDim;
    this.valueDim = opts.valueDim;
    this.keyBlocks = Array.from({ length: opts.numKvHeads }, () => new RowBuffer(opts.keyDim, capacity));
    this.valueBlocks = Array.from({ length: opts.numKvHeads }, () => new RowBuffer(opts.valueDim, capacity));
  }

  /** Number of tokens stored. */
  get length(): number {
    return this.keyBlocks[0].length;
  }

  /** Tokens the current allocation holds before the next doubling. */
  get capacity(): number {
    return this.keyBlocks[0].capacity;
  }

  /** Floats stored per token: 2·G·d_head when d_QK = d_V = d_head (Table 1 with G for GQA). */
  get floatsPerToken(): number {
    return this.numKvHeads * (this.keyDim + this.valueDim);
  }

  /**
   * Appends t new tokens: `keys[g]` (t×keyDim) and `values[g]` (t×valueDim) for every KV head g.
   * All arguments are checked before anything is written, so a rejected append leaves the cache unchanged.
   * @throws ShapeError on a wrong head count, shape or row count; NonFiniteError on NaN/±Inf.
   */
  append(keys: readonly Matrix[], values: readonly Matrix[]): void {
    const g = this.numKvHeads;
    for (const [list, name] of [
      [keys, "keys"],
      [values, "values"],
    ] as const) {
      if (!Array.isArray(list)) throw new ShapeError(name, `an array of ${g} matrices (one per KV head)`, describe(list));
      if (list.length !== g) throw new ShapeError(name, `${g} matrices (one per KV head)`, `${list.length}`);
    }
    assertShape(keys[0], "keys[0]", undefined, this.keyDim, "cols = keyDim");
    assertNonEmpty(keys[0], "keys[0]");
    const t = keys[0].rows;
    for (let h = 0; h < g; h++) {
      assertShape(keys[h], `keys[${h}]`, t, this.keyDim, "t×keyDim, t = keys[0].rows");
      assertShape(values[h], `values[${h}]`, t, this.valueDim, "t×valueDim, t = keys[0].rows");
      assertFinite(keys[h], `keys[${h}]`);
      assertFinite(values[h], `values[${h}]`);
    }
    for (let h = 0; h < g; h++) {
      this.keyBlocks[h].append(keys[h]);
      this.valueBlocks[h].append(values[h]);
    }
  }

  /** K_g, the cached keys of KV head g (length×keyDim): a view, valid until the next append. */
  keys(g: number): Matrix {
    assertInteger(g, "g", 0, this.numKvHeads - 1);
    return this.keyBlocks[g].view();
  }

  /** V_g, the cached values of KV head g (length×valueDim): a view, valid until the next append. */
  values(g: number): Matrix {
    assertInteger(g, "g", 0, this.numKvHeads - 1);
    return this.valueBlocks[g].view();
  }

  /** Floats held for the stored tokens: length·G·(d_QK + d_V) (Table 1's cache term, G heads). */
  floatsStored(): number {
    return this.length * this.floatsPerToken;
  }
}
