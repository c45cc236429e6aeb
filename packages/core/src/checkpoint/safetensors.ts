/**
 * The safetensors format (huggingface/safetensors): an 8-byte little-endian header length N, N
 * bytes of JSON `{ name: { dtype, shape, data_offsets: [begin, end] }, "__metadata__"?: {…} }`,
 * then the byte buffer; offsets are relative to the buffer. The header is validated as the
 * reference Rust reader does — every tensor inside the file, sizes = dtype size × Π shape, tensors
 * contiguous without overlap or holes and covering the whole buffer — so a lying header is a
 * FormatError naming the file, tensor and field, never a silently wrong weight.
 * These functions work on bytes; reading a file tensor by tensor lives in `@randattn/core/node`.
 */
import { FormatError, ValueError } from "../errors.js";
import { describe } from "../validate.js";
import { DTYPE_SIZE, type SafetensorsDtype, type SafetensorsWriteDtype, checkDtype, decodeElements, encodeElements } from "./dtype.js";

/** Where one tensor lies in its file. */
export interface TensorEntry {
  readonly name: string;
  readonly dtype: SafetensorsDtype;
  readonly shape: readonly number[];
  /** Absolute byte offsets in the file: [begin, end). */
  readonly begin: number;
  readonly end: number;
}

/** A validated safetensors header. */
export interface SafetensorsHeader {
  /** Tensors by name, in file order. */
  readonly tensors: ReadonlyMap<string, TensorEntry>;
  /** The `__metadata__` string map (empty when absent). */
  readonly metadata: Readonly<Record<string, string>>;
  /** First byte of the data buffer (8 + header length). */
  readonly dataStart: number;
}

/** A tensor converted to float64, C order. */
export interface Tensor {
  readonly dtype: SafetensorsDtype;
  readonly shape: readonly number[];
  readonly data: Float64Array;
}

/** Largest header accepted (the Rust reader's limit), so a lying length cannot allocate gigabytes. */
export const MAX_HEADER_BYTES = 100_000_000;

/**
 * Reads the header length from the first 8 bytes.
 * @param first the file's first bytes (at least 8). @param fileSize the whole file's size in bytes.
 * @throws FormatError when the file is shorter than 8 bytes or the length runs past the file.
 */
export function safetensorsHeaderLength(first: Uint8Array, fileSize: number, label: string): number {
  if (first.length < 8 || fileSize < 8) {
    throw new FormatError(`${label}: header length`, "8 bytes (little-endian u64)", `a ${fileSize}-byte file (truncated)`);
  }
  const n = new DataView(first.buffer, first.byteOffset, 8).getBigUint64(0, true);
  if (n > BigInt(Math.min(MAX_HEADER_BYTES, fileSize - 8))) {
    throw new FormatError(
      `${label}: header length`,
      `at most ${Math.min(MAX_HEADER_BYTES, fileSize - 8)} bytes (the file holds ${fileSize})`,
      `${n} (truncated file, or a length that lies)`,
    );
  }
  return Number(n);
}

function isShape(v: unknown): v is number[] {
  return Array.isArray(v) && v.every((d) => Number.isSafeInteger(d) && d >= 0);
}

/**
 * Parses and validates the JSON header.
 * @param headerBytes the N header bytes (after the 8-byte length). @param fileSize whole file size.
 * @param label the file name used in errors.
 * @throws FormatError for invalid UTF-8/JSON, a bad entry (dtype, shape, offsets), a size that is
 *   not dtype × shape, an offset outside the file, overlapping tensors, holes or trailing bytes.
 */
export function parseSafetensorsHeader(headerBytes: Uint8Array, fileSize: number, label: string): SafetensorsHeader {
  let text: string;
  try {
    text = new TextDecoder("utf-8", { fatal: true }).decode(headerBytes);
  } catch {
    throw new FormatError(`${label}: header`, "UTF-8 JSON", "invalid UTF-8");
  }
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch (e) {
    throw new FormatError(`${label}: header`, "a JSON object", `invalid JSON (${(e as Error).message})`);
  }
  if (json === null || typeof json !== "object" || Array.isArray(json)) {
    throw new FormatError(`${label}: header`, "a JSON object of tensors", describe(json));
  }
  const dataStart = 8 + headerBytes.length;
  const bufferSize = fileSize - dataStart;
  const metadata: Record<string, string> = {};
  const entries: TensorEntry[] = [];
  for (const [name, raw] of Object.entries(json as Record<string, unknown>)) {
    if (name === "__metadata__") {
      if (raw === null || typeof raw !== "object" || Array.isArray(raw))
        throw new FormatError(`${label}: __metadata__`, "an object of strings", describe(raw));
      for (const [k, v] of Object.entries(raw as Record<string, unknown>)) {
        if (typeof v !== "string") throw new FormatError(`${label}: __metadata__.${k}`, "a string", describe(v));
        metadata[k] = v;
      }
      continue;
    }
    const where = `${label}: tensor "${name}"`;
    if (raw === null || typeof raw !== "object" || Array.isArray(raw))
      throw new FormatError(where, "{ dtype, shape, data_offsets }", describe(raw));
    const e = raw as Record<string, unknown>;
    const dtype = checkDtype(e.dtype, `${where} dtype`);
    if (!isShape(e.shape)) throw new FormatError(`${where} shape`, "an array of non-negative integers", JSON.stringify(e.shape));
    const offs = e.data_offsets;
    if (!Array.isArray(offs) || offs.length !== 2 || !offs.every((o) => Number.isSafeInteger(o) && o >= 0) || offs[0] > offs[1]) {
      throw new FormatError(`${where} data_offsets`, "[begin, end] with 0 ≤ begin ≤ end", JSON.stringify(offs));
    }
    const count = e.shape.reduce((a, b) => a * b, 1);
    const bytes = count * DTYPE_SIZE[dtype];
    if (!Number.isSafeInteger(bytes) || offs[1] - offs[0] !== bytes) {
      throw new FormatError(
        `${where} data_offsets`,
        `end − begin = ${bytes} bytes (${dtype} × shape [${e.shape.join(", ")}])`,
        `${offs[1] - offs[0]} bytes ([${offs.join(", ")}])`,
      );
    }
    if (offs[1] > bufferSize) {
      throw new FormatError(
        `${where} data_offsets`,
        `inside the ${bufferSize}-byte data buffer`,
        `end ${offs[1]} (truncated file, or an offset that lies)`,
      );
    }
    entries.push({ name, dtype, shape: e.shape.slice(), begin: dataStart + offs[0], end: dataStart + offs[1] });
  }
  // Contiguous, no overlap, no hole, nothing trailing — the reference reader's rule.
  const sorted = [...entries].sort((a, b) => a.begin - b.begin || a.end - b.end);
  let at = dataStart;
  for (const e of sorted) {
    if (e.begin < at) {
      throw new FormatError(
        `${label}: tensor "${e.name}" data_offsets`,
        `no overlap: begin ≥ ${at - dataStart} (end of the previous tensor)`,
        `begin ${e.begin - dataStart}`,
      );
    }
    if (e.begin > at) {
      throw new FormatError(
        `${label}: tensor "${e.name}" data_offsets`,
        `contiguous tensors: begin = ${at - dataStart}`,
        `begin ${e.begin - dataStart} (a hole of ${e.begin - at} bytes)`,
      );
    }
    at = e.end;
  }
  if (at !== fileSize) {
    throw new FormatError(`${label}: data buffer`, `${at - dataStart} bytes (the tensors' total)`, `${bufferSize} bytes`);
  }
  return { tensors: new Map(entries.map((e) => [e.name, e])), metadata, dataStart };
}

/**
 * Converts one tensor's bytes to float64.
 * @throws FormatError when `bytes` does not hold exactly the entry's size; a non-finite value is
 *   a FormatError naming the tensor and element (weights must be finite).
 */
export function decodeTensor(bytes: Uint8Array, entry: TensorEntry, label: string): Tensor {
  const size = entry.end - entry.begin;
  if (bytes.length !== size) {
    throw new FormatError(`${label}: tensor "${entry.name}"`, `${size} bytes`, `${bytes.length} bytes (truncated read)`);
  }
  const count = size / DTYPE_SIZE[entry.dtype];
  const data = decodeElements(bytes, entry.dtype, count);
  const i = firstNonFinite(data, count);
  if (i >= 0) throw new FormatError(`${label}: tensor "${entry.name}"`, "finite values", `${data[i]} at flat index ${i}`);
  return { dtype: entry.dtype, shape: entry.shape, data };
}

/**
 * Index of the first non-finite value among data[0…count−1], or −1. Its own function: inside
 * decodeTensor, V8 compiled the loop on-stack and re-entered that code for every later tensor,
 * bailing out at the property reads after it (95 bailouts loading one sweep's checkpoints, issue 14).
 */
function firstNonFinite(data: Float64Array, count: number): number {
  for (let i = 0; i < count; i++) if (!Number.isFinite(data[i])) return i;
  return -1;
}

/**
 * Parses a whole safetensors file held in memory.
 * @param bytes the file. @param label its name for errors.
 * @returns every tensor as float64, by name, plus the metadata.
 */
export function parseSafetensors(bytes: Uint8Array, label = "bytes"): { tensors: Map<string, Tensor>; metadata: Record<string, string> } {
  if (!(bytes instanceof Uint8Array)) throw new ValueError(label, "a Uint8Array of safetensors bytes", describe(bytes));
  const n = safetensorsHeaderLength(bytes, bytes.length, label);
  const header = parseSafetensorsHeader(bytes.subarray(8, 8 + n), bytes.length, label);
  const tensors = new Map<string, Tensor>();
  for (const e of header.tensors.values()) tensors.set(e.name, decodeTensor(bytes.subarray(e.begin, e.end), e, label));
  return { tensors, metadata: { ...header.metadata } };
}

/** A tensor to write: shape and C-order values. */
export interface TensorInput {
  readonly shape: readonly number[];
  readonly data: ArrayLike<number>;
  /** Element type on disk for this tensor. @default the writer's `dtype` */
  readonly dtype?: SafetensorsWriteDtype;
}

/** Options of {@link encodeSafetensors}. */
export interface SafetensorsWriteOptions {
  /** Element type on disk (F32/F16/BF16 round to nearest, ties to even). @default "F64" */
  dtype?: SafetensorsWriteDtype;
  /** `__metadata__` strings. @default {} */
  metadata?: Record<string, string>;
}

/**
 * Writes tensors as a safetensors file (names sorted, as the reference writer does; header padded
 * with spaces to a multiple of 8 bytes).
 * @throws ValueError when a tensor's data length differs from Π shape.
 */
export function encodeSafetensors(tensors: Readonly<Record<string, TensorInput>>, options: SafetensorsWriteOptions = {}): Uint8Array {
  const names = Object.keys(tensors).sort();
  const header: Record<string, unknown> = {};
  if (options.metadata && Object.keys(options.metadata).length > 0) header.__metadata__ = options.metadata;
  const blobs: Uint8Array[] = [];
  let offset = 0;
  for (const name of names) {
    const t = tensors[name];
    const count = t.shape.reduce((a, b) => a * b, 1);
    if (t.data.length !== count) {
      throw new ValueError(`tensors["${name}"].data`, `length ${count} (shape [${t.shape.join(", ")}])`, `length ${t.data.length}`);
    }
    const dtype = t.dtype ?? options.dtype ?? "F64";
    const blob = encodeElements(t.data, dtype);
    header[name] = { dtype, shape: [...t.shape], data_offsets: [offset, offset + blob.length] };
    blobs.push(blob);
    offset += blob.length;
  }
  let json = JSON.stringify(header);
  const headerBytes0 = new TextEncoder().encode(json);
  json += " ".repeat((8 - (headerBytes0.length % 8)) % 8);
  const headerBytes = new TextEncoder().encode(json);
  const out = new Uint8Array(8 + headerBytes.length + offset);
  new DataView(out.buffer).setBigUint64(0, BigInt(headerBytes.length), true);
  out.set(headerBytes, 8);
  let at = 8 + headerBytes.length;
  for (const b of blobs) {
    out.set(b, at);
    at += b.length;
  }
  return out;
}
