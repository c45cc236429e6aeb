/**
 * The decode-cache contract (§4; issue 12): what a decoder needs from a cache, so that the exact
 * caches of this folder and the compressed ones of `@randattn/sketch` (kvcache/) are
 * interchangeable in `multiHeadDecode`, `mlaDecode`, the decoder stacks and greedy generation.
 *
 * - {@link DecodeCache} (MHA / GQA / MQA): one `step` appends the t new tokens' keys and values of
 *   the G KV heads and attends the H new queries (query head h reads KV head ⌊h/(H/G)⌋), causally:
 *   query i of the step sees the stored tokens and the new tokens 0 … i. A compressed cache may
 *   approximate that attention; the exact `KVCache` computes it.
 * - {@link LatentDecodeCache} (MLA): `append` the latent rows (and rotated shared rotary keys);
 *   `latent()` / `rotaryKeys()` are the rows the merged attention reads — exact for `LatentCache`,
 *   a reconstruction for an online-compressed latent.
 *
 * Both report memory in floats AND bits (a quantized cache stores fewer than 64 bits per number;
 * every buffer a cache holds counts, its own random matrices included), and a step reports its
 * flops. Both remember the positional rotation and the positions they were filled with and refuse
 * a step with another rotation or non-increasing positions (issue 9: a decode step that passes no
 * rotation after a RoPE prefill silently mixed rotated and unrotated keys).
 */
import type { Cost } from "../accounting/cost.js";
import type { ProjectedAttentionOptions } from "../attention/index.js";
import { ShapeError, ValueError } from "../errors.js";
import type { Matrix } from "../matrix.js";
import { Rope } from "../position/index.js";
import { assertFinite, assertNonEmpty, assertShape, describe } from "../validate.js";

/** How the keys of a step were positioned: the rotation's signature and the tokens' absolute positions. */
export interface PositionalFill {
  /** `"none"` without a rotation, else {@link rotationSignature} of the rotation applied. */
  readonly rotation: string;
  /** Absolute positions of the t new tokens (strictly increasing, after the cache's last). */
  readonly positions: ArrayLike<number>;
}

/** What a cache remembers of its filling: the rotation and the last position stored. */
export interface FillRecord {
  readonly rotation: string;
  readonly lastPosition: number;
}

/** Attention options a cache honours (the causal mask is the cache's own). */
export type DecodeAttentionOptions = Omit<ProjectedAttentionOptions, "mask">;

/** One decoding step's inputs: the new tokens' projected (and rotated) queries, keys and values. */
export interface DecodeStepInput {
  /** H query heads, each t×d_QK (rotated at the new positions when RoPE is on). */
  readonly queries: readonly Matrix[];
  /** G KV heads, each t×d_QK (rotated likewise). */
  readonly keys: readonly Matrix[];
  /** G KV heads, each t×d_V. */
  readonly values: readonly Matrix[];
  /** The rotation and positions of the new tokens. @default { rotation: "none", positions: length … length + t − 1 } */
  readonly fill?: PositionalFill;
  /** Kernel, maskForm, onEmptyRow, algorithm, blockSize (exact caches; compressed caches document what they accept). @default {} */
  readonly attention?: DecodeAttentionOptions;
}

/** One step's outputs. */
export interface DecodeStepResult {
  /** H heads, each t×d_V: head h's attention output for the t new queries. */
  readonly outputs: Matrix[];
  /** Flops of the step (appending, compressing and attending; multiply-add = 2, exp = 1). */
  readonly flops: number;
  /** The step's cost (issue 9 shape): its flops, and the floats and bits the cache holds after it. */
  readonly cost: Cost;
}

/** The decode contract of MHA / GQA / MQA caches (see the module doc). */
export interface DecodeCache {
  /** A short name of the cache kind ("exact", "sliding-window", "kivi", …). */
  readonly kind: string;
  /** G, the KV heads stored. */
  readonly numKvHeads: number;
  /** d_QK of the keys appended. */
  readonly keyDim: number;
  /** d_V of the values appended. */
  readonly valueDim: number;
  /** Tokens appended so far (not the tokens kept: a compressing cache keeps fewer). */
  readonly length: number;
  /** The rotation and last position the cache was filled with; undefined while empty. */
  readonly fill: FillRecord | undefined;
  /**
   * Appends the t new tokens and attends their queries (see {@link DecodeStepInput}). Every
   * argument is checked before anything is written: a rejected step leaves the cache unchanged.
   */
  step(input: DecodeStepInput): DecodeStepResult;
  /** Floats held (64-bit numbers; packed codes are not floats). */
  floatsStored(): number;
  /** Bits held in every stored buffer (floats at 64, packed codes at their width, the cache's own random matrices included). */
  bitsStored(): number;
}

/** The decode contract of MLA latent caches (see the module doc). */
export interface LatentDecodeCache {
  readonly kind: string;
  /** d_L */
  readonly latentDim: number;
  /** d_R (0 without a decoupled rotary part). */
  readonly ropeDim: number;
  /** Tokens appended so far. */
  readonly length: number;
  /** The rotation and last position the cache was filled with; undefined while empty. */
  readonly fill: FillRecord | undefined;
  /** Appends t latent rows (and rotated rotary keys when ropeDim > 0); checked before anything is written. */
  append(latent: Matrix, rotaryKeys?: Matrix, fill?: PositionalFill): void;
  /** The latent rows attention reads (length×d_L): exact, or a reconstruction of a compressed latent. */
  latent(): Matrix;
  /** The rotary keys attention reads (length×d_R), or undefined without a rotary part. */
  rotaryKeys(): Matrix | undefined;
  floatsStored(): number;
  bitsStored(): number;
}

/** What a per-layer factory is told about the cache to build. */
export interface LayerCacheSpec {
  /** 0-based layer index (derive a per-layer seed from it). */
  readonly layer: number;
  readonly numKvHeads: number;
  readonly keyDim: number;
  readonly valueDim: number;
}

/** Builds one layer's {@link DecodeCache}; the decoder stacks call it once per layer. */
export type DecodeCacheFactory = (spec: LayerCacheSpec) => DecodeCache;

/** What a per-layer latent factory is told. */
export interface LatentCacheSpec {
  readonly layer: number;
  readonly latentDim: number;
  readonly ropeDim: number;
}

/** Builds one layer's {@link LatentDecodeCache}. */
export type LatentCacheFactory = (spec: LatentCacheSpec) => LatentDecodeCache;

const anonymousRotations = new WeakMap<object, number>();
let anonymousCount = 0;

/**
 * A string naming a positional rotation: `"none"` for undefined, `rope(d, base, pairing)` for a
 * core `Rope` (two equal Ropes are the same rotation), else an identity tag of the object (the
 * same object is the same rotation; nothing else is known to be).
 */
export function rotationSignature(rope: unknown): string {
  if (rope === undefined || rope === null) return "none";
  if (rope instanceof Rope) return `rope(d=${rope.dim}, base=${rope.base}, pairing=${rope.pairing})`;
  if (typeof rope !== "object") return `rotation ${describe(rope)}`;
  let id = anonymousRotations.get(rope);
  if (id === undefined) {
    anonymousCount += 1;
    id = anonymousCount;
    anonymousRotations.set(rope, id);
  }
  return `custom rotation #${id}`;
}

/** The default fill of a step without rotation: positions length … length + t − 1. */
export function defaultFill(length: number, t: number): PositionalFill {
  return { rotation: "none", positions: Float64Array.from({ length: t }, (_, i) => length + i) };
}

/**
 * Checks a step's fill against what the cache remembers and returns the record after the step.
 * @throws ValueError naming `options.rope` when the rotation differs from the one the cache was
 *   filled with, `options.queryPositions` when the positions are not t finite, strictly increasing
 *   numbers after the last position stored.
 */
export function checkFill(record: FillRecord | undefined, fill: PositionalFill, t: number): FillRecord {
  if (fill === null || typeof fill !== "object" || typeof fill.rotation !== "string")
    throw new ValueError("fill", "a PositionalFill { rotation, positions }", describe(fill));
  const p = fill.positions;
  if (p === null || typeof p !== "object" || p.length !== t)
    throw new ShapeError("options.queryPositions", `${t} positions (one per new token)`, describe(p));
  assertFinite(p, "options.queryPositions");
  if (record !== undefined && record.rotation !== fill.rotation) {
    throw new ValueError(
      "options.rope",
      `the rotation the cache was filled with (${record.rotation}); a cache never mixes rotations`,
      fill.rotation,
    );
  }
  let last = record === undefined ? Number.NEGATIVE_INFINITY : record.lastPosition;
  for (let i = 0; i < t; i++) {
    if (!(p[i] > last)) {
      throw new ValueError(
        "options.queryPositions",
        record === undefined && i === 0 ? "strictly increasing positions" : `positions strictly increasing after ${last}`,
        `${p[i]} at [${i}]`,
      );
    }
    last = p[i];
  }
  return { rotation: fill.rotation, lastPosition: last };
}

/**
 * The one check of appended keys and values shared by every cache: `keys` and `values` are arrays
 * of G matrices, keys[g] t×keyDim and values[g] t×valueDim with the same t ≥ 1, all finite.
 * Returns t.
 * @throws ShapeError on a wrong head count, shape or row count; NonFiniteError on NaN/±Inf.
 */
export function checkAppendedKeysValues(
  keys: readonly Matrix[],
  values: readonly Matrix[],
  numKvHeads: number,
  keyDim: number,
  valueDim: number,
): number {
  for (const [list, name] of [
    [keys, "keys"],
    [values, "values"],
  ] as const) {
    if (!Array.isArray(list)) throw new ShapeError(name, `an array of ${numKvHeads} matrices (one per KV head)`, describe(list));
    if (list.length !== numKvHeads) throw new ShapeError(name, `${numKvHeads} matrices (one per KV head)`, `${list.length}`);
  }
  assertShape(keys[0], "keys[0]", undefined, keyDim, "cols = keyDim");
  assertNonEmpty(keys[0], "keys[0]");
  const t = keys[0].rows;
  for (let g = 0; g < numKvHeads; g++) {
    assertShape(keys[g], `keys[${g}]`, t, keyDim, "t×keyDim, t = keys[0].rows");
    assertShape(values[g], `values[${g}]`, t, valueDim, "t×valueDim, t = keys[0].rows");
    assertFinite(keys[g], `keys[${g}]`);
    assertFinite(values[g], `values[${g}]`);
  }
  return t;
}

/**
 * Checks the step's queries: an array of H matrices, H a multiple of G, each t×keyDim and finite.
 * Returns H.
 */
export function checkStepQueries(queries: readonly Matrix[], numKvHeads: number, keyDim: number, t: number): number {
  if (!Array.isArray(queries) || queries.length === 0)
    throw new ShapeError("queries", "a non-empty array of query-head matrices", describe(queries));
  if (queries.length % numKvHeads !== 0) {
    throw new ValueError("queries", `a multiple of numKvHeads = ${numKvHeads} query heads`, `${queries.length}`);
  }
  queries.forEach((q, h) => {
    assertShape(q, `queries[${h}]`, t, keyDim, "t×keyDim, t = keys[0].rows");
    assertFinite(q, `queries[${h}]`);
  });
  return queries.length;
}

/** Flops of exact attention of t queries over n keys (QKᵀ, exp, AV, normalization). */
export function exactAttentionFlops(t: number, n: number, keyDim: number, valueDim: number): number {
  return t * n * (2 * keyDim + 1 + 2 * valueDim) + t * valueDim;
}
