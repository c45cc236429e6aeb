/**
 * Scalar quantizers and bit-packed code storage for the quantized caches (KIVI, QJL values,
 * TurboQuant-style).
 *
 * - Min–max (asymmetric) uniform quantizer at b bits (KIVI, Liu et al. 2024, arXiv 2402.02750 §3):
 *   levels lo + cΔ, c = 0 … 2^b − 1, Δ = (hi − lo)/(2^b − 1), code = round((x − lo)/Δ). For x
 *   spread smoothly over [lo, hi] the error is ≈ uniform on [−Δ/2, Δ/2]: MSE ≈ Δ²/12, bias ≈ 0.
 * - Gaussian-optimal symmetric uniform quantizer at b bits (TurboQuant, Zandieh et al. 2025, arXiv
 *   2504.19874 §3.1: after a random rotation each coordinate of a unit vector is ≈ N(0, 1/d), so one
 *   fixed scalar codebook serves every coordinate). Levels (c − (2^b − 1)/2)·Δ_b/√d with Δ_b the
 *   step minimizing E[(X − Q(X))²] for X ~ N(0, 1) (Max 1960's uniform case, computed here by
 *   numerical integration rather than tabulated; TurboQuant itself uses the Lloyd–Max codebook —
 *   the uniform one keeps Δ²/12 as the reference for the interior cells).
 * - `PackedCodes`: n codes of b bits in ⌈n·b/8⌉ bytes, so the stored buffer is what the bits say.
 */
import { ValueError } from "@randattn/core";
import { assertInteger } from "@randattn/core/internal";

/** Bit widths the quantizers support. */
export const SUPPORTED_BITS = [1, 2, 3, 4, 5, 6, 7, 8] as const;

/** Checks a bit width: an integer in [min, 8]. */
export function checkBits(value: unknown, argument: string, min = 1): number {
  if (typeof value !== "number" || !Number.isInteger(value) || value < min || value > 8) {
    throw new ValueError(argument, `an integer bit width in [${min}, 8]`, `${String(value)}`);
  }
  return value;
}

/** n codes of b bits each, packed little-endian into bytes. */
export class PackedCodes {
  readonly bits: number;
  readonly count: number;
  readonly bytes: Uint8Array;

  constructor(count: number, bits: number) {
    assertInteger(count, "count", 0);
    this.bits = bits;
    this.count = count;
    this.bytes = new Uint8Array(Math.ceil((count * bits) / 8));
  }

  set(i: number, code: number): void {
    let bit = i * this.bits;
    for (let k = 0; k < this.bits; k++, bit++) {
      const byte = bit >> 3;
      const mask = 1 << (bit & 7);
      if ((code >> k) & 1) this.bytes[byte] |= mask;
      else this.bytes[byte] &= ~mask;
    }
  }

  get(i: number): number {
    let bit = i * this.bits;
    let code = 0;
    for (let k = 0; k < this.bits; k++, bit++) if (this.bytes[bit >> 3] & (1 << (bit & 7))) code |= 1 << k;
    return code;
  }

  /**
   * Every code, in order, into `out` (`count` entries; a new Int32Array when omitted): what `get(i)`
   * returns for each i, read a little-endian 32-bit window at a time (codes of ≤ 24 bits span at most
   * four bytes) instead of bit by bit — a cache decoding its stored tokens at every step does this
   * for all of them (issue 14: the TurboQuant cache's decode was 6 % of the kv-compression sweep).
   */
  unpack(out: Int32Array = new Int32Array(this.count)): Int32Array {
    const b = this.bits;
    const by = this.bytes;
    if (b > 24) {
      for (let i = 0; i < this.count; i++) out[i] = this.get(i);
      return out;
    }
    const mask = (1 << b) - 1;
    const last = by.length - 4; // windows starting at or before this byte are whole
    for (let i = 0, bit = 0; i < this.count; i++, bit += b) {
      const o = bit >> 3;
      let w: number;
      if (o <= last) w = by[o] | (by[o + 1] << 8) | (by[o + 2] << 16) | (by[o + 3] << 24);
      else {
        w = 0;
        for (let t = 0; o + t < by.length; t++) w |= by[o + t] << (8 * t);
      }
      out[i] = (w >>> (bit & 7)) & mask;
    }
    return out;
  }
}

/** Min–max quantization of `x` (n values) at b bits: codes and (lo, step). */
export function minMaxQuantize(x: ArrayLike<number>, bits: number): { codes: PackedCodes; lo: number; step: number } {
  let lo = Number.POSITIVE_INFINITY;
  let hi = Number.NEGATIVE_INFINITY;
  for (let i = 0; i < x.length; i++) {
    if (x[i] < lo) lo = x[i];
    if (x[i] > hi) hi = x[i];
  }
  const levels = 2 ** bits - 1;
  const step = hi > lo ? (hi - lo) / levels : 0;
  const codes = new PackedCodes(x.length, bits);
  for (let i = 0; i < x.length; i++) codes.set(i, step > 0 ? Math.min(levels, Math.max(0, Math.round((x[i] - lo) / step))) : 0);
  return { codes, lo, step };
}

/** Dequantized value of a min–max code. */
export function minMaxValue(code: number, lo: number, step: number): number {
  return lo + code * step;
}

const gaussianSteps = new Map<number, number>();

/** E[(X − Q(X))²] for X ~ N(0, 1) and the symmetric uniform quantizer of 2^b levels and step Δ (Simpson on [−12, 12]). */
export function gaussianUniformMse(step: number, bits: number): number {
  const n = 24000;
  const a = -12;
  const h = 24 / n;
  let sum = 0;
  for (let i = 0; i <= n; i++) {
    const x = a + i * h;
    const e = x - symmetricLevel(symmetricCode(x, step, bits), step, bits);
    const f = e * e * Math.exp(-0.5 * x * x);
    sum += (i === 0 || i === n ? 1 : i % 2 === 1 ? 4 : 2) * f;
  }
  return (sum * h) / 3 / Math.sqrt(2 * Math.PI);
}

/** Δ_b: the step of the MSE-optimal symmetric uniform b-bit quantizer of N(0, 1) (golden-section search, cached). */
export function gaussianOptimalStep(bits: number): number {
  const cached = gaussianSteps.get(bits);
  if (cached !== undefined) return cached;
  let lo = 1e-3;
  let hi = 4;
  const phi = (Math.sqrt(5) - 1) / 2;
  let x1 = hi - phi * (hi - lo);
  let x2 = lo + phi * (hi - lo);
  let f1 = gaussianUniformMse(x1, bits);
  let f2 = gaussianUniformMse(x2, bits);
  for (let it = 0; it < 40; it++) {
    if (f1 < f2) {
      hi = x2;
      x2 = x1;
      f2 = f1;
      x1 = hi - phi * (hi - lo);
      f1 = gaussianUniformMse(x1, bits);
    } else {
      lo = x1;
      x1 = x2;
      f1 = f2;
      x2 = lo + phi * (hi - lo);
      f2 = gaussianUniformMse(x2, bits);
    }
  }
  const step = (lo + hi) / 2;
  gaussianSteps.set(bits, step);
  return step;
}

/** Code of x under the symmetric uniform quantizer (levels (c − (L − 1)/2)·Δ, L = 2^b). */
export function symmetricCode(x: number, step: number, bits: number): number {
  const levels = 2 ** bits;
  const c = Math.floor(x / step + levels / 2);
  return Math.min(levels - 1, Math.max(0, c));
}

/** Level of a symmetric code. */
export function symmetricLevel(code: number, step: number, bits: number): number {
  return (code - (2 ** bits - 1) / 2) * step;
}

/**
 * {@link symmetricLevel} of every code of `codes`, in order (a new Float64Array): the same expression
 * per code, with (2^b − 1)/2 taken once and the codes read by `unpack` (a cache decoding its stored
 * tokens at every step does this for all of them).
 */
export function symmetricLevels(codes: PackedCodes, step: number): Float64Array {
  const half = (2 ** codes.bits - 1) / 2;
  const c = codes.unpack();
  const out = new Float64Array(c.length);
  for (let i = 0; i < c.length; i++) out[i] = (c[i] - half) * step;
  return out;
}
