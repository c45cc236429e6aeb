/**
 * KIVI (Liu et al. 2024, arXiv 2402.02750): tuning-free asymmetric b-bit quantization — keys per
 * CHANNEL (their outliers sit in fixed channels, §3.2), values per TOKEN (their errors mix across
 * channels through the attention weights, §3.3). Keys are quantized in groups of `groupSize`
 * tokens: each full group stores, per channel, (lo, step) and b-bit codes; the newest tokens of an
 * unfilled group stay in full precision (KIVI's residual, §3.4), with their values. When a group
 * fills, its keys and values are quantized and the full-precision copies dropped.
 * Memory per quantized token: d·b (keys) + d_V·b (values) bits + 2·64 for its value (lo, step),
 * plus 2·d·64 bits per key group. Deterministic: the seed is unused.
 */
import type { Matrix } from "@randattn/core";
import {
  type AttentionPart,
  CompressedKvCache,
  type KvCacheShape,
  TokenStore,
  checkBudget,
  checkShape,
  mergeParts,
  partFromLogits,
  rowOf,
} from "./base.js";
import { PackedCodes, checkBits, minMaxQuantize } from "./quantize.js";

/** Options of the `kivi` cache. */
export interface KiviOptions extends KvCacheShape {
  /** b, bits per quantized key and value entry (1–8). @default 2 */
  bits?: number;
  /** Tokens per key-quantization group, and the longest full-precision residual. @default 16 */
  groupSize?: number;
}

interface QuantGroup {
  /** Per channel (lo, step) of the group's keys: 2·d floats. */
  keyScales: Float64Array;
  /** groupSize·d key codes (token-major). */
  keyCodes: PackedCodes;
  /** Per token (lo, step) of its value: 2·groupSize floats. */
  valueScales: Float64Array;
  /** groupSize·d_V value codes. */
  valueCodes: PackedCodes;
}

export class KiviCache extends CompressedKvCache {
  readonly kind = "kivi";
  readonly bits: number;
  readonly groupSize: number;
  private readonly groups: QuantGroup[][];
  private readonly residual: TokenStore[];

  constructor(options: KiviOptions) {
    const shape = checkShape(options, "kivi");
    super(shape);
    this.bits = checkBits(options.bits ?? 2, "options.bits");
    this.groupSize = checkBudget(options.groupSize ?? 16, "options.groupSize", shape.maxLength);
    this.groups = Array.from({ length: shape.numKvHeads }, () => []);
    this.residual = Array.from({ length: shape.numKvHeads }, () => new TokenStore());
  }

  /** The dequantized keys and values of one group (token-major). */
  private dequantize(q: QuantGroup): { keys: Float64Array; values: Float64Array } {
    const d = this.keyDim;
    const dV = this.valueDim;
    const n = this.groupSize;
    const keys = new Float64Array(n * d);
    const values = new Float64Array(n * dV);
    for (let j = 0; j < n; j++) {
      for (let c = 0; c < d; c++) keys[j * d + c] = q.keyScales[2 * c] + q.keyCodes.get(j * d + c) * q.keyScales[2 * c + 1];
      for (let c = 0; c < dV; c++) values[j * dV + c] = q.valueScales[2 * j] + q.valueCodes.get(j * dV + c) * q.valueScales[2 * j + 1];
    }
    return { keys, values };
  }

  protected storedPart(g: number, queries: Matrix, scale: number): AttentionPart {
    const d = this.keyDim;
    const t = queries.rows;
    let part = this.residual[g].part(queries, scale, this.valueDim, false);
    for (const q of this.groups[g]) {
      const { keys, values } = this.dequantize(q);
      const n = this.groupSize;
      const logits = new Float64Array(t * n);
      for (let i = 0; i < t; i++)
        for (let j = 0; j < n; j++) {
          let s = 0;
          for (let c = 0; c < d; c++) s += queries.data[i * d + c] * keys[j * d + c];
          logits[i * n + j] = scale * s;
        }
      const p = partFromLogits(logits, t, n, values, this.valueDim);
      p.flops += 2 * t * n * d + n * (d + this.valueDim) * 2;
      part = mergeParts(part, p, this.valueDim);
    }
    return part;
  }

  protected fold(g: number, keys: Matrix, values: Matrix): number {
    const store = this.residual[g];
    const d = this.keyDim;
    const dV = this.valueDim;
    let flops = 0;
    for (let i = 0; i < keys.rows; i++) {
      store.push(rowOf(keys, i), rowOf(values, i));
      if (store.size < this.groupSize) continue;
      const n = this.groupSize;
      const keyScales = new Float64Array(2 * d);
      const keyCodes = new PackedCodes(n * d, this.bits);
      for (let c = 0; c < d; c++) {
        const q = minMaxQuantize(
          store.keys.map((k) => k[c]),
          this.bits,
        );
        keyScales[2 * c] = q.lo;
        keyScales[2 * c + 1] = q.step;
        for (let j = 0; j < n; j++) keyCodes.set(j * d + c, q.codes.get(j));
      }
      const valueScales = new Float64Array(2 * n);
      const valueCodes = new PackedCodes(n * dV, this.bits);
      for (let j = 0; j < n; j++) {
        const q = minMaxQuantize(store.values[j], this.bits);
        valueScales[2 * j] = q.lo;
        valueScales[2 * j + 1] = q.step;
        for (let c = 0; c < dV; c++) valueCodes.set(j * dV + c, q.codes.get(c));
      }
      this.groups[g].push({ keyScales, keyCodes, valueScales, valueCodes });
      store.keep([]);
      flops += 4 * n * (d + dV);
    }
    return flops;
  }

  buffers(): ArrayBufferView[] {
    const out: ArrayBufferView[] = [];
    for (let g = 0; g < this.numKvHeads; g++) {
      for (const q of this.groups[g]) out.push(q.keyScales, q.keyCodes.bytes, q.valueScales, q.valueCodes.bytes);
      out.push(...this.residual[g].buffers(false));
    }
    return out;
  }
}
