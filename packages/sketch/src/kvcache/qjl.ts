/**
 * QJL (Zandieh, Daliri & Han 2024, arXiv 2406.03482): a Johnson–Lindenstrauss projection of each
 * key followed by its sign — m bits per key plus its norm — and the ASYMMETRIC estimator that
 * projects the query without quantizing it (Lemma 3.2):
 *
 *   ⟨q, k⟩ ≈ √(π/2)/m · ‖k‖ · ⟨S q, sign(S k)⟩,   S ∈ R^{m×d} with i.i.d. N(0, 1) entries.
 *
 * Each term X_l = √(π/2)‖k‖ (s_lᵀq) sign(s_lᵀk) has E[X_l] = ⟨q, k⟩ (for Gaussian (s_lᵀq, s_lᵀk),
 * E[(sᵀq) sign(sᵀk)] = √(2/π)⟨q, k⟩/‖k‖) and E[X_l²] = (π/2)‖q‖²‖k‖², so the estimator is unbiased
 * with variance [(π/2)‖q‖²‖k‖² − ⟨q, k⟩²]/m (`qjlVariance`). Values are kept in full precision or
 * quantized per token at `valueBits` (min–max, as KIVI's values). S is drawn once from the seed and
 * is stored (m·d floats, counted).
 */
import { Matrix, RandomStream, type SeedKey, derive } from "@randattn/core";
import { type AttentionPart, CompressedKvCache, type KvCacheShape, checkShape, partFromLogits, rowOf } from "./base.js";
import { PackedCodes, checkBits, minMaxQuantize } from "./quantize.js";
import { assertInteger } from "@randattn/core/internal";

/** Options of the `qjl` cache. */
export interface QjlOptions extends KvCacheShape {
  /** m, the JL projection's rows (sign bits per key). @default 2·keyDim */
  projectionDim?: number;
  /** Bits per value entry (per-token min–max), or undefined to keep values in full precision. @default undefined */
  valueBits?: number;
}

/** A matrix with i.i.d. N(0, 1) entries from the stream of `seed`. */
export function gaussianMatrix(rows: number, cols: number, seed: SeedKey): Matrix {
  const m = new Matrix(rows, cols);
  new RandomStream(seed).fillGaussian(m.data);
  return m;
}

/** S x for a row vector x (S is rows×cols, x has cols entries). */
export function projectVector(s: Matrix, x: ArrayLike<number>): Float64Array {
  const out = new Float64Array(s.rows);
  for (let i = 0; i < s.rows; i++) {
    let acc = 0;
    const o = i * s.cols;
    for (let j = 0; j < s.cols; j++) acc += s.data[o + j] * x[j];
    out[i] = acc;
  }
  return out;
}

/** Packs sign(x) (x ≥ 0 → bit 1) into m bits. */
export function packSigns(x: Float64Array): PackedCodes {
  const p = new PackedCodes(x.length, 1);
  for (let i = 0; i < x.length; i++) if (x[i] >= 0) p.set(i, 1);
  return p;
}

/** ⟨y, sign⟩ with sign ∈ {±1} from the packed bits. */
export function signedDot(y: Float64Array, signs: PackedCodes): number {
  let acc = 0;
  for (let i = 0; i < y.length; i++) acc += signs.bytes[i >> 3] & (1 << (i & 7)) ? y[i] : -y[i];
  return acc;
}

/** QJL's estimate of ⟨q, k⟩ from S q, the signs of S k and ‖k‖ (module doc). */
export function qjlEstimate(projectedQuery: Float64Array, signs: PackedCodes, keyNorm: number): number {
  return (Math.sqrt(Math.PI / 2) / projectedQuery.length) * keyNorm * signedDot(projectedQuery, signs);
}

/** The estimator's variance [(π/2)‖q‖²‖k‖² − ⟨q, k⟩²]/m (module doc). */
export function qjlVariance(queryNorm: number, keyNorm: number, innerProduct: number, m: number): number {
  return ((Math.PI / 2) * queryNorm ** 2 * keyNorm ** 2 - innerProduct ** 2) / m;
}

/** Per-token values, full precision or min–max quantized. */
export class ValueStore {
  private readonly full: Float64Array[] = [];
  private readonly codes: PackedCodes[] = [];
  private readonly scales: Float64Array[] = [];
  constructor(
    readonly valueDim: number,
    readonly bits: number | undefined,
  ) {}
  push(v: Float64Array): void {
    if (this.bits === undefined) {
      this.full.push(v);
      return;
    }
    const q = minMaxQuantize(v, this.bits);
    this.codes.push(q.codes);
    this.scales.push(Float64Array.of(q.lo, q.step));
  }
  /** All values, token-major (dequantized when quantized). */
  flat(): Float64Array {
    const dV = this.valueDim;
    if (this.bits === undefined) {
      const out = new Float64Array(this.full.length * dV);
      for (let j = 0; j < this.full.length; j++) out.set(this.full[j], j * dV);
      return out;
    }
    const out = new Float64Array(this.codes.length * dV);
    this.codes.forEach((c, j) => {
      const [lo, step] = this.scales[j];
      for (let i = 0; i < dV; i++) out[j * dV + i] = lo + c.get(i) * step;
    });
    return out;
  }
  buffers(): ArrayBufferView[] {
    return this.bits === undefined ? [...this.full] : [...this.codes.map((c) => c.bytes), ...this.scales];
  }
}

export class QjlCache extends CompressedKvCache {
  readonly kind = "qjl";
  readonly projectionDim: number;
  readonly valueBits: number | undefined;
  /** S (m×d), shared by the KV heads. */
  readonly projection: Matrix;
  private readonly signs: PackedCodes[][];
  private readonly norms: number[][];
  private readonly valueStores: ValueStore[];

  constructor(options: QjlOptions, seed: SeedKey) {
    const shape = checkShape(options, "qjl");
    super(shape);
    const m = options.projectionDim ?? 2 * shape.keyDim;
    assertInteger(m, "options.projectionDim");
    this.projectionDim = m;
    this.valueBits = options.valueBits === undefined ? undefined : checkBits(options.valueBits, "options.valueBits");
    this.projection = gaussianMatrix(m, shape.keyDim, derive(seed, "qjl", "projection"));
    this.signs = Array.from({ length: shape.numKvHeads }, () => []);
    this.norms = Array.from({ length: shape.numKvHeads }, () => []);
    this.valueStores = Array.from({ length: shape.numKvHeads }, () => new ValueStore(shape.valueDim, this.valueBits));
  }

  /** QJL's estimates of ⟨q, k_j⟩ for every key j stored for head g. */
  keyInnerProducts(g: number, query: ArrayLike<number>): Float64Array {
    const sq = projectVector(this.projection, query);
    return Float64Array.from(this.signs[g], (s, j) => qjlEstimate(sq, s, this.norms[g][j]));
  }

  protected storedPart(g: number, queries: Matrix, scale: number): AttentionPart {
    const n = this.signs[g].length;
    const t = queries.rows;
    const logits = new Float64Array(t * n);
    for (let i = 0; i < t; i++) {
      const sq = projectVector(this.projection, rowOf(queries, i));
      for (let j = 0; j < n; j++) logits[i * n + j] = scale * qjlEstimate(sq, this.signs[g][j], this.norms[g][j]);
    }
    const part = partFromLogits(logits, t, n, this.valueStores[g].flat(), this.valueDim);
    part.flops += t * (2 * this.projectionDim * this.keyDim + n * 2 * this.projectionDim);
    return part;
  }

  protected fold(g: number, keys: Matrix, values: Matrix): number {
    for (let i = 0; i < keys.rows; i++) {
      const k = rowOf(keys, i);
      this.signs[g].push(packSigns(projectVector(this.projection, k)));
      let s = 0;
      for (const x of k) s += x * x;
      this.norms[g].push(Math.sqrt(s));
      this.valueStores[g].push(rowOf(values, i));
    }
    return keys.rows * (2 * this.projectionDim * this.keyDim + 2 * this.keyDim);
  }

  buffers(): ArrayBufferView[] {
    const out: ArrayBufferView[] = [this.projection.data];
    for (let g = 0; g < this.numKvHeads; g++) {
      out.push(...this.signs[g].map((s) => s.bytes));
      if (this.norms[g].length > 0) out.push(Float64Array.from(this.norms[g]));
      out.push(...this.valueStores[g].buffers());
    }
    return out;
  }
}
