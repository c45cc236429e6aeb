/**
 * `.npy` read and write (NumPy format spec, numpy/lib/format.py, versions 1.0, 2.0 and 3.0),
 * so Q, K, V or weights dumped from PyTorch/NumPy can be brought in and results sent back.
 *
 * Layout: magic "\x93NUMPY", major and minor version bytes, header length (uint16 LE for 1.0,
 * uint32 LE for 2.0/3.0), a Python dict literal header (latin-1; UTF-8 for 3.0) padded with
 * spaces and "\n" so the data starts on a 64-byte boundary, then the raw data.
 *
 * Reading is strict (issue 6): every inconsistency is a `FormatError` — bad magic, unknown
 * version, truncated header or data, a header length that does not match the header, a shape
 * that does not match the data size (too few or too many bytes), unsupported or object dtypes,
 * a malformed header dict. Values are returned as float64 in C (row-major) order.
 */
import { FormatError, NonFiniteError, ShapeError, ValueError } from "../errors.js";
import { Matrix } from "../matrix.js";
import { assertOneOf, describe, assertOptions } from "../validate.js";
import { type PyValue, parsePythonLiteral } from "./pyliteral.js";

const MAGIC = [0x93, 0x4e, 0x55, 0x4d, 0x50, 0x59]; // \x93NUMPY

/** An n-dimensional array read from a `.npy` file, converted to float64 in C order. */
export interface NpyArray {
  /** The dtype descriptor as written in the file, e.g. `"<f4"`, `">f8"`, `"<i8"`. */
  readonly dtype: string;
  /** Dimensions (`[]` for a 0-d scalar). */
  readonly shape: readonly number[];
  /** Values in C (row-major) order, converted to float64. */
  readonly data: Float64Array;
}

/** What to do with a Fortran-ordered (column-major) array. */
export type FortranOrderHandling = "transpose" | "reject";

export interface NpyReadOptions {
  /** "transpose": reorder Fortran (column-major) data to C order; "reject": FormatError. @default "transpose" */
  fortranOrder?: FortranOrderHandling;
  /** Accept NaN/±Inf values (else NonFiniteError naming the first). @default false */
  allowNonFinite?: boolean;
}

/** dtypes `writeNpy` can produce. */
export type NpyWriteDtype = "<f4" | "<f8";

/** `.npy` format versions. 3.0 only differs from 2.0 by a UTF-8 header. */
export type NpyVersion = "1.0" | "2.0" | "3.0";

export interface NpyWriteOptions {
  /** Element type on disk (float32 rounds each value to nearest). @default "<f8" */
  dtype?: NpyWriteDtype;
  /** Format version. @default "1.0", or "2.0" when the header exceeds 65,535 bytes */
  version?: NpyVersion;
  /** Accept NaN/±Inf values (else NonFiniteError naming the first). @default false */
  allowNonFinite?: boolean;
}

/**
 * What `encodeNpy` writes: a Matrix (2-D), an array of equally shaped matrices (3-D stack, e.g.
 * heads × N × d), a vector (1-D), or an explicit `{ shape, data }` in C order.
 */
export type NpyInput =
  | Matrix
  | readonly Matrix[]
  | Float64Array
  | Float32Array
  | readonly number[]
  | { readonly shape: readonly number[]; readonly data: ArrayLike<number> };

interface Dtype {
  readonly kind: "f" | "i" | "u" | "b";
  readonly size: number;
  readonly little: boolean;
}

const SUPPORTED = "<f2, <f4, <f8, <i1…<i8, <u1…<u8, |b1 (or big-endian >)";

function parseDtype(descr: string, argument: string): Dtype {
  const m = /^([<>|=])([a-zA-Z])(\d+)$/.exec(descr);
  const named = (why: string): never => {
    throw new FormatError(argument, `a numeric dtype (${SUPPORTED})`, `${JSON.stringify(descr)} (${why})`);
  };
  if (!m) {
    if (/^[<>|=]?O/.test(descr)) named("an object array of pickled Python objects, which is never loaded");
    return named("not a simple dtype");
  }
  const [, order, kind, sizeText] = m;
  const size = Number(sizeText);
  if (kind === "O") named("an object array of pickled Python objects, which is never loaded");
  if (kind === "c") named("complex values");
  if (kind === "U" || kind === "S" || kind === "a") named("strings");
  if (kind === "V") named("raw or structured bytes");
  if (kind === "M" || kind === "m") named("dates / time deltas");
  if (order === "=") named("native byte order '=' is ambiguous in a file");
  const ok =
    (kind === "f" && (size === 2 || size === 4 || size === 8)) ||
    ((kind === "i" || kind === "u") && (size === 1 || size === 2 || size === 4 || size === 8)) ||
    (kind === "b" && size === 1);
  if (!ok) named(`unsupported kind ${kind} of ${size} bytes`);
  if (order === "|" && size !== 1) named("'|' (no byte order) on a multi-byte type");
  return { kind: kind as Dtype["kind"], size, little: order !== ">" };
}

/** IEEE 754 half → double. */
function halfToFloat(h: number): number {
  const sign = h & 0x8000 ? -1 : 1;
  const exp = (h >> 10) & 0x1f;
  const frac = h & 0x3ff;
  if (exp === 0) return sign * 2 ** -14 * (frac / 1024);
  if (exp === 31) return frac ? Number.NaN : sign * Number.POSITIVE_INFINITY;
  return sign * 2 ** (exp - 15) * (1 + frac / 1024);
}

function formatShape(shape: readonly number[]): string {
  return `(${shape.join(", ")}${shape.length === 1 ? "," : ""})`;
}

/** Reorders column-major data of `shape` to row-major. */
function fortranToC(src: Float64Array, shape: readonly number[]): Float64Array {
  const nd = shape.length;
  if (nd < 2) return src;
  const out = new Float64Array(src.length);
  if (src.length === 0) return out;
  const fStride = new Array<number>(nd);
  fStride[0] = 1;
  for (let k = 1; k < nd; k++) fStride[k] = fStride[k - 1] * shape[k - 1];
  const idx = new Array<number>(nd).fill(0);
  let f = 0;
  for (let c = 0; c < out.length; c++) {
    out[c] = src[f];
    // Odometer over the C-order multi-index, last axis fastest, keeping the Fortran offset in step.
    for (let k = nd - 1; k >= 0; k--) {
      idx[k]++;
      f += fStride[k];
      if (idx[k] < shape[k]) break;
      f -= fStride[k] * shape[k];
      idx[k] = 0;
    }
  }
  return out;
}

/**
 * Parses a `.npy` file held in memory. `label` names the source in error messages.
 * @throws FormatError for any malformed or unsupported content (see the module comment);
 *   NonFiniteError for NaN/±Inf values unless `allowNonFinite`.
 * @example
 * ```ts
 * import { encodeNpy, npyToMatrix, parseNpy, randomMatrix } from "@randattn/core";
 *
 * const m = randomMatrix(3, 4, {}, [5]);
 * const bytes = encodeNpy(m, { dtype: "<f8" }); // what numpy.save writes
 * const back = npyToMatrix(parseNpy(bytes));
 * console.log(back.shape, back.data[0] === m.data[0]); // "3×4" true
 * ```
 */
export function parseNpy(bytes: Uint8Array, options: NpyReadOptions = {}, label = "bytes"): NpyArray {
  assertOptions(options, "options");
  if (!(bytes instanceof Uint8Array)) throw new ValueError(label, "a Uint8Array (or Buffer) of .npy bytes", describe(bytes));
  const fortranOrder = options.fortranOrder ?? "transpose";
  assertOneOf(fortranOrder, "options.fortranOrder", ["transpose", "reject"] as const);
  const n = bytes.length;
  if (n < 8) throw new FormatError(label, "a .npy file (at least 10 bytes: magic, version, header length)", `${n} bytes (truncated)`);
  for (let i = 0; i < MAGIC.length; i++) {
    if (bytes[i] !== MAGIC[i]) {
      const hex = Array.from(bytes.subarray(0, 6), (b) => b.toString(16).padStart(2, "0")).join(" ");
      throw new FormatError(`${label} magic`, '"\\x93NUMPY" (93 4e 55 4d 50 59)', `${hex} (not a .npy file)`);
    }
  }
  const major = bytes[6];
  const minor = bytes[7];
  if (!((major === 1 || major === 2 || major === 3) && minor === 0))
    throw new FormatError(`${label} version`, "1.0, 2.0 or 3.0", `${major}.${minor}`);
  const lenBytes = major === 1 ? 2 : 4;
  const headerStart = 8 + lenBytes;
  if (n < headerStart)
    throw new FormatError(label, `at least ${headerStart} bytes (version ${major}.0 preamble)`, `${n} bytes (truncated)`);
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const headerLen = major === 1 ? view.getUint16(8, true) : view.getUint32(8, true);
  if (headerStart + headerLen > n) {
    throw new FormatError(
      `${label} header length`,
      `at most ${n - headerStart} (the bytes left after the preamble)`,
      `${headerLen} (truncated file, or a header length that lies)`,
    );
  }
  const headerBytes = bytes.subarray(headerStart, headerStart + headerLen);
  let header: string;
  if (major === 3) {
    try {
      header = new TextDecoder("utf-8", { fatal: true }).decode(headerBytes);
    } catch {
      throw new FormatError(`${label} header`, "UTF-8 text (version 3.0)", "invalid UTF-8");
    }
  } else {
    header = "";
    for (const b of headerBytes) header += String.fromCharCode(b); // latin-1
  }
  let dict: PyValue;
  try {
    dict = parsePythonLiteral(header, `${label} header`);
  } catch (err) {
    // A header length that lies cuts the dict short or runs into the data: say so.
    if (err instanceof FormatError)
      throw new FormatError(err.argument, err.expected, `${err.actual}; header length field = ${headerLen} bytes`);
    throw err;
  }
  if (dict === null || typeof dict !== "object" || dict.kind !== "dict") {
    throw new FormatError(`${label} header`, "a dict {'descr', 'fortran_order', 'shape'}", describe(dict));
  }
  const keys = [...dict.entries.keys()].sort();
  if (keys.join(",") !== "descr,fortran_order,shape") {
    throw new FormatError(
      `${label} header`,
      "exactly the keys 'descr', 'fortran_order', 'shape'",
      keys.map((k) => `'${k}'`).join(", ") || "no keys",
    );
  }
  const descr = dict.entries.get("descr") as PyValue;
  if (typeof descr !== "string") {
    const what =
      descr !== null && typeof descr === "object" && descr.kind === "list" ? "a structured dtype (list of fields)" : describe(descr);
    throw new FormatError(`${label} descr`, `a numeric dtype string (${SUPPORTED})`, what);
  }
  const dtype = parseDtype(descr, `${label} descr`);
  const fortran = dict.entries.get("fortran_order");
  if (typeof fortran !== "boolean") throw new FormatError(`${label} fortran_order`, "True or False", describe(fortran));
  if (fortran && fortranOrder === "reject")
    throw new FormatError(`${label} fortran_order`, 'False (C order), or option fortranOrder: "transpose"', "True");
  const shapeValue = dict.entries.get("shape") as PyValue;
  if (shapeValue === null || typeof shapeValue !== "object" || shapeValue.kind !== "tuple") {
    throw new FormatError(`${label} shape`, "a tuple of non-negative integers", describe(shapeValue));
  }
  const shape = shapeValue.items.map((d, i) => {
    if (typeof d !== "number" || !Number.isInteger(d) || d < 0)
      throw new FormatError(`${label} shape[${i}]`, "a non-negative integer", describe(d));
    return d;
  });
  let count = 1;
  for (const d of shape) count *= d;
  if (!Number.isSafeInteger(count * dtype.size))
    throw new FormatError(`${label} shape`, "a total size below 2^53 bytes", formatShape(shape));
  const dataStart = headerStart + headerLen;
  const expectedBytes = count * dtype.size;
  const available = n - dataStart;
  if (available !== expectedBytes) {
    const why = available < expectedBytes ? "truncated data" : "trailing bytes: the header's shape or length does not match the data";
    throw new FormatError(
      `${label} data`,
      `${expectedBytes} bytes (shape ${formatShape(shape)} of ${descr})`,
      `${available} bytes (${why})`,
    );
  }
  const data = new Float64Array(count);
  const little = dtype.little;
  const s = dtype.size;
  for (let i = 0, at = dataStart; i < count; i++, at += s) {
    switch (dtype.kind) {
      case "f":
        data[i] = s === 8 ? view.getFloat64(at, little) : s === 4 ? view.getFloat32(at, little) : halfToFloat(view.getUint16(at, little));
        break;
      case "i":
        data[i] =
          s === 1
            ? view.getInt8(at)
            : s === 2
              ? view.getInt16(at, little)
              : s === 4
                ? view.getInt32(at, little)
                : Number(view.getBigInt64(at, little));
        break;
      case "u":
        data[i] =
          s === 1
            ? view.getUint8(at)
            : s === 2
              ? view.getUint16(at, little)
              : s === 4
                ? view.getUint32(at, little)
                : Number(view.getBigUint64(at, little));
        break;
      case "b":
        data[i] = view.getUint8(at) ? 1 : 0;
        break;
    }
  }
  if (!options.allowNonFinite) {
    for (let i = 0; i < count; i++) {
      if (!Number.isFinite(data[i]))
        throw new NonFiniteError(`${label} data`, "finite values (or option allowNonFinite)", `${data[i]} at flat index ${i}`);
    }
  }
  return { dtype: descr, shape, data: fortran ? fortranToC(data, shape) : data };
}

function normalizeInput(value: NpyInput, argument: string): { shape: number[]; data: ArrayLike<number> } {
  if (value instanceof Matrix) return { shape: [value.rows, value.cols], data: value.data };
  if (value instanceof Float64Array || value instanceof Float32Array) return { shape: [value.length], data: value };
  if (Array.isArray(value)) {
    if (value.length > 0 && value[0] instanceof Matrix) {
      const first = value[0] as Matrix;
      const data = new Float64Array(value.length * first.rows * first.cols);
      value.forEach((m, i) => {
        if (!(m instanceof Matrix)) throw new ShapeError(`${argument}[${i}]`, "a Matrix (like the other stack entries)", describe(m));
        if (m.rows !== first.rows || m.cols !== first.cols)
          throw new ShapeError(`${argument}[${i}]`, `${first.shape} (as ${argument}[0])`, m.shape);
        data.set(m.data, i * m.data.length);
      });
      return { shape: [value.length, first.rows, first.cols], data };
    }
    value.forEach((v, i) => {
      if (typeof v !== "number") throw new ValueError(`${argument}[${i}]`, "a number (or a Matrix for a stack)", describe(v));
    });
    return { shape: [value.length], data: value as readonly number[] };
  }
  if (value !== null && typeof value === "object" && "shape" in value && "data" in value) {
    const { shape, data } = value as { shape: unknown; data: ArrayLike<number> };
    if (!Array.isArray(shape)) throw new ValueError(`${argument}.shape`, "an array of non-negative integers", describe(shape));
    let count = 1;
    shape.forEach((d, i) => {
      if (typeof d !== "number" || !Number.isInteger(d) || d < 0)
        throw new ValueError(`${argument}.shape[${i}]`, "a non-negative integer", describe(d));
      count *= d;
    });
    if (data === null || typeof data !== "object" || typeof data.length !== "number")
      throw new ValueError(`${argument}.data`, "an array of numbers", describe(data));
    if (data.length !== count)
      throw new ShapeError(`${argument}.data`, `length ${count} (shape ${formatShape(shape)})`, `length ${data.length}`);
    return { shape: shape as number[], data };
  }
  throw new ValueError(argument, "a Matrix, an array of matrices, a vector or { shape, data }", describe(value));
}

const FLOAT32_MAX = 3.4028234663852886e38;

/**
 * Serializes `value` as `.npy` bytes (C order, little-endian float32 or float64).
 * @throws NonFiniteError for NaN/±Inf (unless `allowNonFinite`); ValueError for values beyond the
 *   float32 range with dtype "<f4", a bad option, or a header too long for the requested version.
 */
export function encodeNpy(value: NpyInput, options: NpyWriteOptions = {}, argument = "value"): Uint8Array {
  assertOptions(options, "options");
  const dtype = options.dtype ?? "<f8";
  assertOneOf(dtype, "options.dtype", ["<f4", "<f8"] as const);
  if (options.version !== undefined) assertOneOf(options.version, "options.version", ["1.0", "2.0", "3.0"] as const);
  const { shape, data } = normalizeInput(value, argument);
  const count = data.length;
  for (let i = 0; i < count; i++) {
    const v = data[i];
    if (typeof v !== "number") throw new ValueError(`${argument}[${i}]`, "a number", describe(v));
    if (!Number.isFinite(v)) {
      if (!options.allowNonFinite)
        throw new NonFiniteError(argument, "finite values (or option allowNonFinite)", `${v} at flat index ${i}`);
    } else if (dtype === "<f4" && Math.abs(Math.fround(v)) > FLOAT32_MAX) {
      throw new ValueError(argument, `values within the float32 range (|x| ≤ ${FLOAT32_MAX}) for dtype "<f4"`, `${v} at flat index ${i}`);
    }
  }
  const dict = `{'descr': '${dtype}', 'fortran_order': False, 'shape': ${formatShape(shape)}, }`;
  // Pad with spaces so that preamble + header (ending in "\n") is a multiple of 64 bytes (numpy ≥ 1.9).
  const pad = (preamble: number) => {
    const total = preamble + dict.length + 1;
    return dict + " ".repeat((64 - (total % 64)) % 64) + "\n";
  };
  let version = options.version;
  if (version === undefined) version = pad(10).length <= 0xffff ? "1.0" : "2.0";
  const preamble = version === "1.0" ? 10 : 12;
  const header = pad(preamble);
  if (version === "1.0" && header.length > 0xffff)
    throw new ValueError("options.version", '"2.0" (the header exceeds 65,535 bytes)', '"1.0"');
  const size = dtype === "<f4" ? 4 : 8;
  const out = new Uint8Array(preamble + header.length + count * size);
  out.set(MAGIC, 0);
  out[6] = Number(version[0]);
  out[7] = 0;
  const view = new DataView(out.buffer);
  if (version === "1.0") view.setUint16(8, header.length, true);
  else view.setUint32(8, header.length, true);
  for (let i = 0; i < header.length; i++) out[preamble + i] = header.charCodeAt(i); // ASCII only
  const start = preamble + header.length;
  if (size === 8) for (let i = 0; i < count; i++) view.setFloat64(start + 8 * i, data[i], true);
  else for (let i = 0; i < count; i++) view.setFloat32(start + 4 * i, data[i], true);
  return out;
}

function assertNpyArray(array: NpyArray, argument: string): void {
  if (array === null || typeof array !== "object" || !Array.isArray(array.shape) || !(array.data instanceof Float64Array)) {
    throw new ValueError(argument, "an NpyArray { dtype, shape, data } (from parseNpy / readNpyFile)", describe(array));
  }
}

/**
 * The 2-D array as a Matrix (wraps the data, no copy).
 * @throws ShapeError unless the array is 2-D.
 */
export function npyToMatrix(array: NpyArray, argument = "array"): Matrix {
  assertNpyArray(array, argument);
  if (array.shape.length !== 2) throw new ShapeError(argument, "a 2-D array (rows, cols)", `shape ${formatShape(array.shape)}`);
  return new Matrix(array.shape[0], array.shape[1], array.data);
}

/**
 * A 3-D array (k, rows, cols) — e.g. heads × N × d — as k matrices (views on the data, no copy).
 * @throws ShapeError unless the array is 3-D.
 */
export function npyToStack(array: NpyArray, argument = "array"): Matrix[] {
  assertNpyArray(array, argument);
  if (array.shape.length !== 3) throw new ShapeError(argument, "a 3-D array (stack, rows, cols)", `shape ${formatShape(array.shape)}`);
  const [k, r, c] = array.shape;
  const out: Matrix[] = [];
  for (let i = 0; i < k; i++) out.push(new Matrix(r, c, array.data.subarray(i * r * c, (i + 1) * r * c)));
  return out;
}

/**
 * A 1-D array as a vector (the data itself, no copy).
 * @throws ShapeError unless the array is 1-D.
 */
export function npyToVector(array: NpyArray, argument = "array"): Float64Array {
  assertNpyArray(array, argument);
  if (array.shape.length !== 1) throw new ShapeError(argument, "a 1-D array (n,)", `shape ${formatShape(array.shape)}`);
  return array.data;
}
