/**
 * The machinery every compressed cache shares (issue 12): the `DecodeCache` step of core's
 * contract (cache/contract.ts) for softmax attention, with the compressed part of the cache behind
 * two hooks.
 *
 * A step (t new tokens, H query heads over G KV heads) is, per KV head g:
 *  1. `storedPart(g, q)`: the cache's estimate of the unnormalized sums over the tokens it holds,
 *     num_i = Σ_j w_j exp(s⟨q_i, k_j⟩ − m_i) v_j and den_i = Σ_j w_j exp(s⟨q_i, k_j⟩ − m_i)
 *     (m_i a row shift, returned) — exact for eviction caches, estimated for sampled / quantized ones;
 *  2. the t new tokens added exactly and causally (query i sees new tokens 0 … i): a cache never
 *     approximates the tokens it has not folded in yet, the convention of KIVI's full-precision
 *     residual and StreamingLLM's recent window;
 *  3. `fold(g, keys, values, context)`: the new tokens enter the compressed state (evicting,
 *     merging, sampling, quantizing), with the step's attention available (H2O needs it).
 * Every check happens before step 3, so a rejected step leaves the cache as it was.
 *
 * Memory: each cache lists its stored buffers (`buffers()`), and floats / bits are counted from
 * them — Float64Array entries are floats at 64 bits, packed codes (Uint8Array) count their bytes —
 * so the accounting cannot drift from what is held. Random matrices a cache keeps (a JL projection,
 * a rotation, random frequencies) are buffers too.
 */
import {
  type DecodeCache,
  type DecodeStepInput,
  type DecodeStepResult,
  type FillRecord,
  Matrix,
  ShapeError,
  ValueError,
  checkAppendedKeysValues,
  checkFill,
  checkStepQueries,
} from "@randattn/core";
import { assertInteger, assertNumber, describe } from "@randattn/core/internal";

/** Options every cache takes: its shape and an optional length cap. */
export interface KvCacheShape {
  /** G, the number of KV heads. */
  numKvHeads: number;
  /** d_QK of each key. */
  keyDim: number;
  /** d_V of each value. */
  valueDim: number;
  /**
   * The longest sequence the cache accepts (prompt + generated tokens): a step beyond it is refused
   * with a ShapeError, and a budget above it with a ValueError. Without it a budget larger than the
   * sequence simply means nothing is evicted (the cache is exact).
   * @default unbounded
   */
  maxLength?: number;
}

/** Unnormalized attention sums of t queries over a set of tokens, shifted by a per-row m_i. */
export interface AttentionPart {
  /** t×d_V, Σ_j w_j e^{ℓ_ij − m_i} v_j. */
  num: Float64Array;
  /** t, Σ_j w_j e^{ℓ_ij − m_i}. */
  den: Float64Array;
  /** t, m_i (−∞ for an empty part). */
  shift: Float64Array;
  /** Flops spent. */
  flops: number;
}

/** What `fold` learns about the step: the group's queries and their final normalizers. */
export interface FoldContext {
  /** The query heads reading this KV head (each t×d_QK). */
  queries: readonly Matrix[];
  /** Softmax scale s. */
  scale: number;
  /** Per query head: m_i, the row shift of the final sums. */
  shifts: readonly Float64Array[];
  /** Per query head: the final denominator Σ (in units of e^{m_i}), stored + new tokens. */
  dens: readonly Float64Array[];
}

/** Floats held in `buffers` (the Float64Arrays' lengths). */
function storedFloats(buffers: readonly ArrayBufferView[]): number {
  let n = 0;
  for (const b of buffers) if (b instanceof Float64Array) n += b.length;
  return n;
}

/** Bits held in `buffers`. */
function storedBits(buffers: readonly ArrayBufferView[]): number {
  let n = 0;
  for (const b of buffers) n += bufferBits(b);
  return n;
}

/** Bits of a stored buffer (its byte length × 8) and its floats (Float64Array entries). */
export function bufferBits(b: ArrayBufferView): number {
  return b.byteLength * 8;
}

/** An empty part for t rows. */
export function emptyPart(t: number, valueDim: number): AttentionPart {
  return {
    num: new Float64Array(t * valueDim),
    den: new Float64Array(t),
    shift: new Float64Array(t).fill(Number.NEGATIVE_INFINITY),
    flops: 0,
  };
}

/**
 * The part of weighted tokens whose logits are given: logits ℓ (t×n row-major), values (n rows of
 * d_V), optional log-weights (n). The shift is the row max of ℓ + log w.
 */
export function partFromLogits(
  logits: Float64Array,
  t: number,
  n: number,
  values: readonly Float64Array[] | Float64Array,
  valueDim: number,
  logWeights?: ArrayLike<number>,
): AttentionPart {
  const part = emptyPart(t, valueDim);
  if (n === 0) return part;
  const flat = values instanceof Float64Array;
  for (let i = 0; i < t; i++) {
    let m = Number.NEGATIVE_INFINITY;
    for (let j = 0; j < n; j++) {
      const l = logits[i * n + j] + (logWeights ? logWeights[j] : 0);
      if (l > m) m = l;
    }
    part.shift[i] = m;
    let den = 0;
    const o = i * valueDim;
    for (let j = 0; j < n; j++) {
      const a = Math.exp(logits[i * n + j] + (logWeights ? logWeights[j] : 0) - m);
      den += a;
      if (flat) {
        const vo = j * valueDim;
        for (let c = 0; c < valueDim; c++) part.num[o + c] += a * (values as Float64Array)[vo + c];
      } else {
        const v = (values as readonly Float64Array[])[j];
        for (let c = 0; c < valueDim; c++) part.num[o + c] += a * v[c];
      }
    }
    part.den[i] = den;
  }
  part.flops = t * n * (2 + 2 * valueDim);
  return part;
}

/** Logits s⟨q_i, k_j⟩ of t queries (t×d) against n key rows. */
export function logitsOf(queries: Matrix, keys: readonly Float64Array[], scale: number): Float64Array {
  const t = queries.rows;
  const d = queries.cols;
  const n = keys.length;
  const out = new Float64Array(t * n);
  for (let i = 0; i < t; i++) {
    const o = i * d;
    for (let j = 0; j < n; j++) {
      const k = keys[j];
      let s = 0;
      for (let c = 0; c < d; c++) s += queries.data[o + c] * k[c];
      out[i * n + j] = scale * s;
    }
  }
  return out;
}

/** Adds part b into part a (both t rows), rescaling to the larger shift per row. */
export function mergeParts(a: AttentionPart, b: AttentionPart, valueDim: number): AttentionPart {
  const t = a.den.length;
  for (let i = 0; i < t; i++) {
    const m = Math.max(a.shift[i], b.shift[i]);
    if (m === Number.NEGATIVE_INFINITY) continue;
    const fa = a.shift[i] === Number.NEGATIVE_INFINITY ? 0 : Math.exp(a.shift[i] - m);
    const fb = b.shift[i] === Number.NEGATIVE_INFINITY ? 0 : Math.exp(b.shift[i] - m);
    a.den[i] = a.den[i] * fa + b.den[i] * fb;
    const o = i * valueDim;
    for (let c = 0; c < valueDim; c++) a.num[o + c] = a.num[o + c] * fa + b.num[o + c] * fb;
    a.shift[i] = m;
  }
  a.flops += b.flops + t * (3 + 2 * valueDim);
  return a;
}

/** Copies row i of m. */
export function rowOf(m: Matrix, i: number): Float64Array {
  return m.data.slice(i * m.cols, (i + 1) * m.cols);
}

/** Validates the shape options shared by every cache. */
export function checkShape(options: unknown, name: string): Required<Omit<KvCacheShape, "maxLength">> & { maxLength: number } {
  if (options === null || typeof options !== "object")
    throw new ValueError("options", `the options of the "${name}" cache ({ numKvHeads, keyDim, valueDim, … })`, describe(options));
  const o = options as KvCacheShape;
  assertInteger(o.numKvHeads, "options.numKvHeads");
  assertInteger(o.keyDim, "options.keyDim");
  assertInteger(o.valueDim, "options.valueDim");
  const maxLength = o.maxLength ?? Number.MAX_SAFE_INTEGER;
  assertInteger(maxLength, "options.maxLength");
  return { numKvHeads: o.numKvHeads, keyDim: o.keyDim, valueDim: o.valueDim, maxLength };
}

/** Checks a token budget: an integer ≥ 1 and ≤ maxLength. */
export function checkBudget(value: unknown, argument: string, maxLength: number, min = 1): number {
  assertInteger(value, argument, min);
  if (value > maxLength) {
    throw new ValueError(argument, `at most options.maxLength = ${maxLength} (a budget cannot exceed the sequence)`, `${value}`);
  }
  return value;
}

/**
 * The base of every compressed cache: the contract's `step` for softmax attention (module doc).
 * Subclasses implement `storedPart`, `fold` and `buffers`; caches that treat new tokens otherwise
 * (the random-feature state) override `attendGroup`.
 */
export abstract class CompressedKvCache implements DecodeCache {
  abstract readonly kind: string;
  readonly numKvHeads: number;
  readonly keyDim: number;
  readonly valueDim: number;
  /** The longest sequence accepted. */
  readonly maxLength: number;
  private appended = 0;
  private record: FillRecord | undefined = undefined;
  private softmaxScale: number | undefined = undefined;

  constructor(shape: { numKvHeads: number; keyDim: number; valueDim: number; maxLength: number }) {
    this.numKvHeads = shape.numKvHeads;
    this.keyDim = shape.keyDim;
    this.valueDim = shape.valueDim;
    this.maxLength = shape.maxLength;
  }

  get length(): number {
    return this.appended;
  }

  get fill(): FillRecord | undefined {
    return this.record;
  }

  /** The estimated sums over the tokens held for KV head g (module doc, step 1). */
  protected abstract storedPart(g: number, queries: Matrix, scale: number): AttentionPart;
  /** Folds the step's t tokens of KV head g into the state (module doc, step 3); returns its flops. */
  protected abstract fold(g: number, keys: Matrix, values: Matrix, context: FoldContext): number;
  /** Every buffer the cache holds (Float64Array = floats; Uint8Array = packed codes). */
  abstract buffers(): ArrayBufferView[];

  floatsStored(): number {
    return storedFloats(this.buffers());
  }

  bitsStored(): number {
    return storedBits(this.buffers());
  }

  /**
   * The cache's current estimate of the sums over the tokens it holds for KV head g (the `storedPart`
   * of the module doc) — for tests and diagnostics: true sums = num·e^{shift}, den·e^{shift}.
   */
  storedSums(g: number, queries: Matrix, scale: number): AttentionPart {
    return this.storedPart(g, queries, scale);
  }

  /** Resolves the softmax scale of a step (the cache refuses other kernels and a changed scale). */
  private resolveScale(input: DecodeStepInput): number {
    const attention = input.attention ?? {};
    if (attention === null || typeof attention !== "object") throw new ValueError("options", "an options object", describe(attention));
    const kernel = attention.kernel;
    if (kernel !== undefined && (kernel === null || typeof kernel !== "object" || kernel.kind !== "softmax")) {
      throw new ValueError(
        "options.kernel",
        `the softmax kernel (the "${this.kind}" cache approximates softmax attention)`,
        describe((kernel as { kind?: unknown } | null)?.kind ?? kernel),
      );
    }
    const scale = kernel?.scale ?? 1 / Math.sqrt(this.keyDim);
    assertNumber(scale, "options.kernel.scale", { positive: true });
    if (this.softmaxScale !== undefined && this.softmaxScale !== scale) {
      throw new ValueError("options.kernel.scale", `${this.softmaxScale} (the scale the cache was filled with)`, `${scale}`);
    }
    return scale;
  }

  /** Exact causal part of the t new tokens for t queries (query i sees new tokens 0 … i). */
  protected newTokensPart(queries: Matrix, keys: Matrix, values: Matrix, scale: number): AttentionPart {
    const t = queries.rows;
    const d = this.keyDim;
    const dV = this.valueDim;
    const part = emptyPart(t, dV);
    for (let i = 0; i < t; i++) {
      const logits = new Float64Array(i + 1);
      const m = causalLogits(queries.data, keys.data, logits, i, d, scale);
      part.shift[i] = m;
      foldCausalRow(logits, m, values.data, part.num, part.den, i, dV);
    }
    part.flops = ((t * (t + 1)) / 2) * (2 * d + 2 + 2 * dV);
    return part;
  }

  /** Attends the group's query heads and folds the new tokens of KV head g (overridable). */
  protected attendGroup(
    g: number,
    queries: readonly Matrix[],
    keys: Matrix,
    values: Matrix,
    scale: number,
  ): { outputs: Matrix[]; flops: number } {
    const dV = this.valueDim;
    const outputs: Matrix[] = [];
    const shifts: Float64Array[] = [];
    const dens: Float64Array[] = [];
    let flops = 0;
    for (const q of queries) {
      const part = mergeParts(this.storedPart(g, q, scale), this.newTokensPart(q, keys, values, scale), dV);
      flops += part.flops;
      const out = new Matrix(q.rows, dV);
      for (let i = 0; i < q.rows; i++) {
        const den = part.den[i];
        for (let c = 0; c < dV; c++) out.data[i * dV + c] = den > 0 ? part.num[i * dV + c] / den : 0;
      }
      flops += q.rows * dV;
      outputs.push(out);
      shifts.push(part.shift);
      dens.push(part.den);
    }
    flops += this.fold(g, keys, values, { queries, scale, shifts, dens });
    return { outputs, flops };
  }

  step(input: DecodeStepInput): DecodeStepResult {
    if (input === null || typeof input !== "object") throw new ValueError("input", "a DecodeStepInput", describe(input));
    const t = checkAppendedKeysValues(input.keys, input.values, this.numKvHeads, this.keyDim, this.valueDim);
    const numHeads = checkStepQueries(input.queries, this.numKvHeads, this.keyDim, t);
    if (this.appended + t > this.maxLength) {
      throw new ShapeError("keys", `at most ${this.maxLength - this.appended} new tokens (options.maxLength = ${this.maxLength})`, `${t}`);
    }
    const fill = input.fill ?? {
      rotation: this.record?.rotation ?? "none",
      positions: Float64Array.from({ length: t }, (_, i) => (this.record ? Math.floor(this.record.lastPosition) + 1 : this.appended) + i),
    };
    const record = checkFill(this.record, fill, t);
    const scale = this.resolveScale(input);
    this.prepare(input.keys, input.values);
    // Everything is checked: from here on the cache changes.
    const groupSize = numHeads / this.numKvHeads;
    const outputs: Matrix[] = new Array(numHeads);
    let flops = 0;
    for (let g = 0; g < this.numKvHeads; g++) {
      const group = input.queries.slice(g * groupSize, (g + 1) * groupSize);
      const r = this.attendGroup(g, group, input.keys[g], input.values[g], scale);
      r.outputs.forEach((o, i) => {
        outputs[g * groupSize + i] = o;
      });
      flops += r.flops;
    }
    this.appended += t;
    this.record = record;
    this.softmaxScale = scale;
    // floatsStored() and bitsStored() from one listing of the buffers (a cache lists one per stored token).
    const buffers = this.buffers();
    return { outputs, flops, cost: { flops, floatsStored: storedFloats(buffers), bitsStored: storedBits(buffers) } };
  }

  /** Hook run after every check and before any change (e.g. a lazily drawn random matrix, a radius from the first keys). */
  protected prepare(_keys: readonly Matrix[], _values: readonly Matrix[]): void {}
}

/**
 * Per-head store of weighted tokens: key rows, value rows and per-token log-weights (log of how
 * many tokens each kept one stands for; 0 for an eviction cache).
 */
export class TokenStore {
  keys: Float64Array[] = [];
  values: Float64Array[] = [];
  logWeights: number[] = [];

  get size(): number {
    return this.keys.length;
  }

  push(key: Float64Array, value: Float64Array, logWeight = 0): void {
    this.keys.push(key);
    this.values.push(value);
    this.logWeights.push(logWeight);
  }

  /** Keeps the tokens at `indices` (increasing). */
  keep(indices: readonly number[]): void {
    this.keys = indices.map((i) => this.keys[i]);
    this.values = indices.map((i) => this.values[i]);
    this.logWeights = indices.map((i) => this.logWeights[i]);
  }

  part(queries: Matrix, scale: number, valueDim: number, weighted: boolean): AttentionPart {
    const logits = logitsOf(queries, this.keys, scale);
    const part = partFromLogits(logits, queries.rows, this.size, this.values, valueDim, weighted ? this.logWeights : undefined);
    part.flops += 2 * queries.rows * this.size * queries.cols;
    return part;
  }

  buffers(weighted: boolean): ArrayBufferView[] {
    const out: ArrayBufferView[] = [...this.keys, ...this.values];
    if (weighted && this.size > 0) out.push(Float64Array.from(this.logWeights));
    return out;
  }
}

/*
 * The two passes of newTokensPart's row i, each a function of its own: with both loops in one
 * method, V8 compiled it while the second pass had never run and re-entered that code — bailing
 * out in the second pass — on every later call (664 bailouts in one kv-compression sweep, issue 14,
 * `--trace-deopt`). The operations and their order are those of the single loop.
 */

/** logits[j] = scale·⟨q_i, k_j⟩ for keys 0 … i; returns their maximum. */
function causalLogits(q: Float64Array, k: Float64Array, logits: Float64Array, i: number, d: number, scale: number): number {
  let m = Number.NEGATIVE_INFINITY;
  for (let j = 0; j <= i; j++) {
    let s = 0;
    for (let c = 0; c < d; c++) s += q[i * d + c] * k[j * d + c];
    logits[j] = scale * s;
    if (logits[j] > m) m = logits[j];
  }
  return m;
}

/** num[i] += Σ_j e^{logits[j] − m}·v_j and den[i] += Σ_j e^{logits[j] − m}, j = 0 … i in order. */
function foldCausalRow(
  logits: Float64Array,
  m: number,
  v: Float64Array,
  num: Float64Array,
  den: Float64Array,
  i: number,
  dV: number,
): void {
  for (let j = 0; j <= i; j++) {
    const a = Math.exp(logits[j] - m);
    den[i] += a;
    for (let c = 0; c < dV; c++) num[i * dV + c] += a * v[j * dV + c];
  }
}
