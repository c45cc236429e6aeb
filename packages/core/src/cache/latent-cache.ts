/**
 * The MLA cache (§4.2): only the latent rows L = X W_L (d_L floats per token) — shared by every
 * head, since K_h = L W_LK^h and V_h = L W_LV^h are folded into the merged weights — plus, with
 * decoupled RoPE, the one rotary key row k_R R_m per token shared by all heads (DeepSeek-V2), so
 * d_L + d_R floats per token (512 + 64 = 576 for DeepSeek V2, ERRATA).
 */
import { ShapeError, ValueError } from "../errors.js";
import type { Matrix } from "../matrix.js";
import { assertFinite, assertInteger, assertNonEmpty, assertShape, describe } from "../validate.js";
import { RowBuffer } from "./buffer.js";
import { type FillRecord, type LatentDecodeCache, type PositionalFill, checkFill } from "./contract.js";

/** Options of {@link LatentCache}. */
export interface LatentCacheOptions {
  /** d_L, the width of each latent row. */
  latentDim: number;
  /** d_R, the width of the shared rotary key row; 0 without decoupled RoPE. @default 0 */
  ropeDim?: number;
  /** Rows allocated up front; capacity doubles when exceeded. @default 16 */
  initialCapacity?: number;
}

/** Append-only cache of latent rows (and rotated shared rotary keys when `ropeDim > 0`). */
export class LatentCache implements LatentDecodeCache {
  /** The exact latent cache. */
  readonly kind = "exact-latent";
  /** d_L */
  readonly latentDim: number;
  /** d_R (0 without a rotary part). */
  readonly ropeDim: number;
  private readonly latentRows: RowBuffer;
  private readonly rotaryRows: RowBuffer | undefined;
  private record: FillRecord | undefined = undefined;

  /** @throws ValueError when a size is not a (non-negative for ropeDim) integer. */
  constructor(opts: LatentCacheOptions) {
    if (opts === null || typeof opts !== "object") throw new ValueError("opts", "a LatentCacheOptions object", describe(opts));
    assertInteger(opts.latentDim, "opts.latentDim");
    const ropeDim = opts.ropeDim ?? 0;
    assertInteger(ropeDim, "opts.ropeDim", 0);
    const capacity = opts.initialCapacity ?? 16;
    assertInteger(capacity, "opts.initialCapacity");
    this.latentDim = opts.latentDim;
    this.ropeDim = ropeDim;
    this.latentRows = new RowBuffer(opts.latentDim, capacity);
    this.rotaryRows = ropeDim > 0 ? new RowBuffer(ropeDim, capacity) : undefined;
  }

  /** Number of tokens stored. */
  get length(): number {
    return this.latentRows.length;
  }

  /** Tokens the current allocation holds before the next doubling. */
  get capacity(): number {
    return this.latentRows.capacity;
  }

  /** Floats stored per token: d_L + d_R. */
  get floatsPerToken(): number {
    return this.latentDim + this.ropeDim;
  }

  /**
   * Appends t tokens: `latent` (t×d_L) and, when `ropeDim > 0`, `rotaryKeys` (t×d_R, already rotated).
   * Checked before anything is written.
   * @param fill the rotation and positions of the rotary keys. @default the rotation remembered (or "none"), positions after the last
   * @throws ShapeError on a wrong shape, a missing or unexpected rotary block; NonFiniteError on NaN/±Inf;
   *   ValueError when `fill` mixes rotations or repeats positions.
   */
  append(latent: Matrix, rotaryKeys?: Matrix, fill?: PositionalFill): void {
    assertShape(latent, "latent", undefined, this.latentDim, "cols = latentDim");
    assertNonEmpty(latent, "latent");
    assertFinite(latent, "latent");
    if (this.rotaryRows) {
      if (rotaryKeys === undefined)
        throw new ShapeError("rotaryKeys", `${latent.rows}×${this.ropeDim} (cache has ropeDim ${this.ropeDim})`, "undefined");
      assertShape(rotaryKeys, "rotaryKeys", latent.rows, this.ropeDim, "rows = latent.rows, cols = ropeDim");
      assertFinite(rotaryKeys, "rotaryKeys");
    } else if (rotaryKeys !== undefined) {
      throw new ShapeError("rotaryKeys", "undefined (cache has ropeDim 0)", describe(rotaryKeys));
    }
    this.write(latent, rotaryKeys, fill);
  }

  /**
   * `append` of t rows the caller has shaped and checked finite (pretrained/residentMla.ts: one
   * WebAssembly finiteness pass over each block; a block that fails it takes `append` for its
   * error) at the positions after the last, with the rotation remembered (or "none"): the same
   * rows and fill record as `append(latent, rotaryKeys)`, without its per-element checks.
   * @internal
   */
  appendFinite(latent: Matrix, rotaryKeys: Matrix | undefined): void {
    this.write(latent, rotaryKeys, undefined);
  }

  /** The shared tail of `append` / `appendFinite`: the fill checked, then the rows written. */
  private write(latent: Matrix, rotaryKeys: Matrix | undefined, fill: PositionalFill | undefined): void {
    const t = latent.rows;
    let positionalFill = fill;
    if (positionalFill === undefined) {
      const start = this.record === undefined ? this.length : Math.max(this.length, Math.floor(this.record.lastPosition) + 1);
      // A plain loop (Float64Array.from with a map callback costs ≈ 1 % of a model prefill; kv-cache.ts).
      const positions = new Float64Array(t);
      for (let i = 0; i < t; i++) positions[i] = start + i;
      positionalFill = { rotation: this.record?.rotation ?? "none", positions };
    }
    const record = checkFill(this.record, positionalFill, t);
    this.latentRows.append(latent);
    if (this.rotaryRows && rotaryKeys) this.rotaryRows.append(rotaryKeys);
    this.record = record;
  }

  /** The rotation and last position the cache was filled with; undefined while empty. */
  get fill(): FillRecord | undefined {
    return this.record;
  }

  /** L, the cached latent rows (length×d_L): a view, valid until the next append. */
  latent(): Matrix {
    return this.latentRows.view();
  }

  /** k_R R, the cached rotated shared rotary keys (length×d_R), or undefined without a rotary part. */
  rotaryKeys(): Matrix | undefined {
    return this.rotaryRows?.view();
  }

  /** Floats held for the stored tokens: length·(d_L + d_R). */
  floatsStored(): number {
    return this.length * this.floatsPerToken;
  }

  /** Bits held: 64 per stored float. */
  bitsStored(): number {
    return 64 * this.floatsStored();
  }
}
