/**
 * The KV cache of multi-head / grouped-query attention (§4, §4.1): the keys and values of every
 * token seen so far, one K and one V block per KV head, so each new token costs one new query
 * row against the cached rows instead of recomputing all K/V (O(N²d) overall instead of O(N³d)).
 * With G < H KV heads (GQA) only G blocks are stored — the memory the sharing saves.
 */
import { attentionCachedKeys } from "../attention/attend.js";
import { runAttention } from "../attention/index.js";
import { ValueError } from "../errors.js";
import type { Matrix } from "../matrix.js";
import { assertInteger, describe } from "../validate.js";
import { RowBuffer } from "./buffer.js";
import {
  type DecodeCache,
  type DecodeStepInput,
  type DecodeStepResult,
  type FillRecord,
  type PositionalFill,
  checkAppendedKeysValues,
  checkFill,
  checkStepQueries,
  exactAttentionFlops,
} from "./contract.js";

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
export class KVCache implements DecodeCache {
  /** The exact cache. */
  readonly kind = "exact";
  /** G, the number of KV heads stored. */
  readonly numKvHeads: number;
  /** d_QK of each key row. */
  readonly keyDim: number;
  /** d_V of each value row. */
  readonly valueDim: number;
  private readonly keyBlocks: RowBuffer[];
  private readonly valueBlocks: RowBuffer[];
  private record: FillRecord | undefined = undefined;

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

  /** The rotation and last position the cache was filled with; undefined while empty. */
  get fill(): FillRecord | undefined {
    return this.record;
  }

  /**
   * Appends t new tokens: `keys[g]` (t×keyDim) and `values[g]` (t×valueDim) for every KV head g.
   * All arguments are checked before anything is written, so a rejected append leaves the cache unchanged.
   * @param fill the rotation and positions of the new keys. @default the rotation remembered (or "none"), positions after the last
   * @throws ShapeError on a wrong head count, shape or row count; NonFiniteError on NaN/±Inf;
   *   ValueError when `fill` mixes rotations or repeats positions.
   */
  append(keys: readonly Matrix[], values: readonly Matrix[], fill?: PositionalFill): void {
    const t = checkAppendedKeysValues(keys, values, this.numKvHeads, this.keyDim, this.valueDim);
    const record = checkFill(this.record, fill ?? this.continuation(t), t);
    for (let g = 0; g < this.numKvHeads; g++) {
      this.keyBlocks[g].append(keys[g]);
      this.valueBlocks[g].append(values[g]);
    }
    this.record = record;
  }

  /**
   * `append` for keys and values their producer has checked finite and shaped t×keyDim / t×valueDim
   * (the pretrained models' resident prefill: one WebAssembly pass over the joined Q/K/V block), so
   * only the fill is checked here. Internal to core's decoders.
   */
  appendFinite(keys: readonly Matrix[], values: readonly Matrix[]): void {
    const t = keys[0].rows;
    const record = checkFill(this.record, this.continuation(t), t);
    for (let g = 0; g < this.numKvHeads; g++) {
      this.keyBlocks[g].append(keys[g]);
      this.valueBlocks[g].append(values[g]);
    }
    this.record = record;
  }

  private rollback(length: number, record: FillRecord | undefined): void {
    for (let g = 0; g < this.numKvHeads; g++) {
      this.keyBlocks[g].truncate(length);
      this.valueBlocks[g].truncate(length);
    }
    this.record = record;
  }

  private continuation(t: number): PositionalFill {
    const start = this.record === undefined ? this.length : Math.max(this.length, Math.floor(this.record.lastPosition) + 1);
    // A plain loop: Float64Array.from with a map callback cost ≈ 1 % of a model prefill.
    const positions = new Float64Array(t);
    for (let i = 0; i < t; i++) positions[i] = start + i;
    return { rotation: this.record?.rotation ?? "none", positions };
  }

  /**
   * Appends the step's keys and values, then attends each query head h to K_{g(h)}, V_{g(h)} under
   * the causal mask with offset = previous length (exact: the last t rows of full causal attention).
   * Checked before anything is written.
   */
  step(input: DecodeStepInput): DecodeStepResult {
    if (input === null || typeof input !== "object") throw new ValueError("input", "a DecodeStepInput", describe(input));
    const t = checkAppendedKeysValues(input.keys, input.values, this.numKvHeads, this.keyDim, this.valueDim);
    const numHeads = checkStepQueries(input.queries, this.numKvHeads, this.keyDim, t);
    const attention = input.attention ?? {};
    if (attention === null || typeof attention !== "object") throw new ValueError("options", "an options object", describe(attention));
    const prev = this.length;
    const before = this.record;
    this.append(input.keys, input.values, input.fill ?? this.continuation(t));
    const groupSize = numHeads / this.numKvHeads;
    const options = { ...attention, mask: { kind: "causal" as const, offset: prev } };
    // Materialized attention on the cached rows without rescanning them: every row of K_g and V_g
    // was checked finite by its append and the queries by checkStepQueries, so `attention`'s own
    // scans of K and V — N_KV·(d_QK + d_V) per head and step, O(N²) over a decode — found nothing new
    // (issue 14, stop 38: 0.22 s of the kv-compression sweep's 6.6 s). The same computation bit for
    // bit; streaming (and a bad `algorithm`, which raises) goes through runAttention as before.
    const cached = options.algorithm === undefined || options.algorithm === "materialized";
    const known = cached && attention.precision === "float32";
    const outputs: Matrix[] = [];
    try {
      for (let h = 0; h < numHeads; h++) {
        const g = Math.floor(h / groupSize); // kvHeadFor(h, H, G), §4.1
        outputs.push(
          cached
            ? attentionCachedKeys(input.queries[h], this.keys(g), this.values(g), options, known ? this.maxAbs(g) : undefined)
            : runAttention(input.queries[h], this.keys(g), this.values(g), options),
        );
      }
    } catch (error) {
      // A bad attention option (kernel, algorithm, …) is found only here: undo the append.
      this.rollback(prev, before);
      throw error;
    }
    const flops = numHeads * exactAttentionFlops(t, prev + t, this.keyDim, this.valueDim);
    return { outputs, flops, cost: { flops, floatsStored: this.floatsStored(), bitsStored: this.bitsStored() } };
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

  /**
   * max |K_g| and max |V_g| over the cached rows (`maxAbsOf` of `keys(g)` / `values(g)`), kept up to
   * date by every append instead of rescanned: float32 attention's range decision on a decoding
   * step (pretrained/model.ts). Internal to core's decoders.
   */
  maxAbs(g: number): { keys: number; values: number } {
    assertInteger(g, "g", 0, this.numKvHeads - 1);
    return { keys: this.keyBlocks[g].maxAbs(), values: this.valueBlocks[g].maxAbs() };
  }

  /** Floats held for the stored tokens: length·G·(d_QK + d_V) (Table 1's cache term, G heads). */
  floatsStored(): number {
    return this.length * this.floatsPerToken;
  }

  /** Bits held: 64 per stored float. */
  bitsStored(): number {
    return 64 * this.floatsStored();
  }
}
