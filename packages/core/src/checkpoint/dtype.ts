/**
 * Element types of safetensors files and their exact conversion to and from float64.
 * F16 and BF16 widen exactly (every half/bfloat value is a double); narrowing rounds to nearest,
 * ties to even, directly from the double (no double rounding through float32).
 */
import { FormatError } from "../errors.js";

/** The dtypes RandAttn reads from safetensors (float and integer kinds; F8 kinds are refused). */
export type SafetensorsDtype = "F64" | "F32" | "F16" | "BF16" | "I64" | "I32" | "I16" | "I8" | "U8" | "BOOL";
/** Every readable dtype. */
export const SAFETENSORS_DTYPES: readonly SafetensorsDtype[] = ["F64", "F32", "F16", "BF16", "I64", "I32", "I16", "I8", "U8", "BOOL"];
/** The float dtypes the writer produces. */
export type SafetensorsWriteDtype = "F64" | "F32" | "F16" | "BF16";

/** Bytes per element. */
export const DTYPE_SIZE: Readonly<Record<SafetensorsDtype, number>> = {
  F64: 8,
  F32: 4,
  F16: 2,
  BF16: 2,
  I64: 8,
  I32: 4,
  I16: 2,
  I8: 1,
  U8: 1,
  BOOL: 1,
};

/** Checks a header dtype string. @throws FormatError naming `argument` for an unknown or unsupported dtype. */
export function checkDtype(dtype: unknown, argument: string): SafetensorsDtype {
  if (typeof dtype === "string" && (SAFETENSORS_DTYPES as readonly string[]).includes(dtype)) return dtype as SafetensorsDtype;
  throw new FormatError(argument, `one of ${SAFETENSORS_DTYPES.join(", ")}`, JSON.stringify(dtype));
}

/** Value of an IEEE binary16 bit pattern. */
export function halfBitsToNumber(h: number): number {
  const s = h & 0x8000 ? -1 : 1;
  const e = (h >> 10) & 0x1f;
  const m = h & 0x3ff;
  if (e === 0) return s * m * 2 ** -24;
  if (e === 31) return m ? Number.NaN : s * Number.POSITIVE_INFINITY;
  return s * (1 + m / 1024) * 2 ** (e - 15);
}

/** Value of a bfloat16 bit pattern (the upper half of a float32). */
export function bfloat16BitsToNumber(b: number): number {
  F32_BITS[0] = b << 16;
  return F32_VIEW[0];
}
const F32_BUF = new ArrayBuffer(4);
const F32_BITS = new Uint32Array(F32_BUF);
const F32_VIEW = new Float32Array(F32_BUF);

/** Round half to even of a non-negative x. */
function roundEven(x: number): number {
  const f = Math.floor(x);
  const r = x - f;
  if (r > 0.5) return f + 1;
  if (r < 0.5) return f;
  return f % 2 === 0 ? f : f + 1;
}

/**
 * Bits of the nearest (ties to even) binary float with `expBits` exponent and `mantBits` mantissa
 * bits — binary16 (5, 10) or bfloat16 (8, 7) — computed from the double directly. Overflow gives ±∞.
 */
function toSmallFloatBits(x: number, expBits: number, mantBits: number): number {
  const expMax = (1 << expBits) - 1;
  const bias = expMax >> 1;
  const signBit = 1 << (expBits + mantBits);
  if (Number.isNaN(x)) return (expMax << mantBits) | (1 << (mantBits - 1));
  const sign = x < 0 || Object.is(x, -0) ? signBit : 0;
  const a = Math.abs(x);
  const minNormal = 2 ** (1 - bias);
  if (a < minNormal) {
    // Subnormal: a multiple of 2^(1 − bias − mantBits); rounding may carry into the smallest normal.
    return sign | roundEven(a / 2 ** (1 - bias - mantBits));
  }
  let e = Math.floor(Math.log2(a));
  if (2 ** e > a) e -= 1;
  else if (2 ** (e + 1) <= a) e += 1;
  let frac = roundEven((a / 2 ** e - 1) * 2 ** mantBits);
  if (frac === 2 ** mantBits) {
    frac = 0;
    e += 1;
  }
  if (e + bias >= expMax) return sign | (expMax << mantBits);
  return sign | ((e + bias) << mantBits) | frac;
}

/** IEEE binary16 bits of the nearest half to x (ties to even). */
export function numberToHalfBits(x: number): number {
  return toSmallFloatBits(x, 5, 10);
}

/** bfloat16 bits of the nearest bfloat16 to x (ties to even). */
export function numberToBfloat16Bits(x: number): number {
  return toSmallFloatBits(x, 8, 7);
}

/** Decodes `count` little-endian elements of `dtype` from `bytes` into float64 (exact for every float kind). */
export function decodeElements(bytes: Uint8Array, dtype: SafetensorsDtype, count: number): Float64Array {
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const out = new Float64Array(count);
  switch (dtype) {
    case "F64":
      for (let i = 0; i < count; i++) out[i] = view.getFloat64(8 * i, true);
      break;
    case "F32":
      for (let i = 0; i < count; i++) out[i] = view.getFloat32(4 * i, true);
      break;
    case "F16":
      for (let i = 0; i < count; i++) out[i] = halfBitsToNumber(view.getUint16(2 * i, true));
      break;
    case "BF16":
      for (let i = 0; i < count; i++) out[i] = bfloat16BitsToNumber(view.getUint16(2 * i, true));
      break;
    case "I64":
      for (let i = 0; i < count; i++) out[i] = Number(view.getBigInt64(8 * i, true));
      break;
    case "I32":
      for (let i = 0; i < count; i++) out[i] = view.getInt32(4 * i, true);
      break;
    case "I16":
      for (let i = 0; i < count; i++) out[i] = view.getInt16(2 * i, true);
      break;
    case "I8":
      for (let i = 0; i < count; i++) out[i] = view.getInt8(i);
      break;
    case "U8":
    case "BOOL":
      for (let i = 0; i < count; i++) out[i] = bytes[i];
      break;
  }
  return out;
}

/** Encodes float64 values as little-endian `dtype` elements (F32/F16/BF16 round to nearest, ties to even). */
export function encodeElements(data: ArrayLike<number>, dtype: SafetensorsWriteDtype): Uint8Array {
  const n = data.length;
  const bytes = new Uint8Array(n * DTYPE_SIZE[dtype]);
  const view = new DataView(bytes.buffer);
  for (let i = 0; i < n; i++) {
    const x = data[i];
    if (dtype === "F64") view.setFloat64(8 * i, x, true);
    else if (dtype === "F32") view.setFloat32(4 * i, x, true);
    else if (dtype === "F16") view.setUint16(2 * i, numberToHalfBits(x), true);
    else view.setUint16(2 * i, numberToBfloat16Bits(x), true);
  }
  return bytes;
}
