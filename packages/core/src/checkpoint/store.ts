/**
 * A checkpoint's tensors by name, whatever holds them: one safetensors file, shards listed by
 * `model.safetensors.index.json`, bytes in memory (tests) or files read at offsets (node/).
 * The model builder only asks for shapes and tensors by their on-disk Hugging Face names.
 */
import { FormatError } from "../errors.js";
import { describe } from "../validate.js";
import { type SafetensorsHeader, type Tensor, decodeTensor, parseSafetensorsHeader, safetensorsHeaderLength } from "./safetensors.js";

/** Tensors by on-disk name. */
export interface TensorStore {
  /** What errors call the checkpoint (a folder or file name). */
  readonly label: string;
  /** Every tensor name. */
  names(): string[];
  has(name: string): boolean;
  /** The tensor's shape, without reading it. @throws FormatError naming the tensor when absent. */
  shape(name: string): readonly number[];
  /** Which file holds the tensor (for error messages). */
  fileOf(name: string): string;
  /** Reads and upcasts one tensor to float64. @throws FormatError naming the file and tensor. */
  read(name: string): Tensor;
}

/** Name of the shard index file. */
export const SHARD_INDEX_FILE = "model.safetensors.index.json";
/** Name of a single-file checkpoint. */
export const SINGLE_FILE = "model.safetensors";

/**
 * Parses `model.safetensors.index.json`: `{ "weight_map": { tensor: shardFile } }`.
 * Shard names must be plain file names in the same folder (no path separators, no "..").
 * @throws FormatError naming the file and field.
 */
export function parseShardIndex(text: string, label = SHARD_INDEX_FILE): Map<string, string> {
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch (e) {
    throw new FormatError(label, "JSON", `invalid JSON (${(e as Error).message})`);
  }
  const map = (json as { weight_map?: unknown } | null)?.weight_map;
  if (map === null || typeof map !== "object" || Array.isArray(map)) {
    throw new FormatError(`${label}: weight_map`, "an object { tensor name: shard file }", describe(map));
  }
  const out = new Map<string, string>();
  for (const [name, file] of Object.entries(map as Record<string, unknown>)) {
    if (typeof file !== "string" || file.length === 0 || /[\\/]/.test(file) || file === ".." || file === ".") {
      throw new FormatError(`${label}: weight_map["${name}"]`, "a shard file name in the checkpoint folder", describe(file));
    }
    out.set(name, file);
  }
  return out;
}

/** Random access to one file's bytes (an fs descriptor, or an in-memory array). */
export interface ByteSource {
  readonly size: number;
  /** Bytes [offset, offset + length); fewer when the file ends first. */
  read(offset: number, length: number): Uint8Array;
}

/** One safetensors file: its validated header and a byte source for its tensors. */
export class SafetensorsFile {
  readonly label: string;
  readonly header: SafetensorsHeader;
  private readonly source: ByteSource;

  /** Reads and validates the header (only the header). */
  constructor(source: ByteSource, label: string) {
    this.label = label;
    this.source = source;
    const first = source.read(0, 8);
    const n = safetensorsHeaderLength(first, source.size, label);
    const headerBytes = source.read(8, n);
    if (headerBytes.length !== n) throw new FormatError(`${label}: header`, `${n} bytes`, `${headerBytes.length} bytes (truncated)`);
    this.header = parseSafetensorsHeader(headerBytes, source.size, label);
  }

  read(name: string): Tensor {
    const e = this.header.tensors.get(name);
    if (!e) throw new FormatError(`${this.label}: tensor "${name}"`, "present in the file", "absent");
    return decodeTensor(this.source.read(e.begin, e.end - e.begin), e, this.label);
  }
}

/** A byte source over an in-memory array. */
export function bytesSource(bytes: Uint8Array): ByteSource {
  return { size: bytes.length, read: (offset, length) => bytes.subarray(offset, Math.min(bytes.length, offset + length)) };
}

/**
 * A store over safetensors files. With an index, every indexed tensor must be in its named shard
 * and every shard tensor must be indexed; without one, the single file holds everything.
 * @param open opens a file of the checkpoint by name (throws when absent).
 * @param index the parsed shard index, or undefined for a single `model.safetensors`.
 */
export function safetensorsStore(label: string, open: (file: string) => SafetensorsFile, index?: Map<string, string>): TensorStore {
  const files = new Map<string, SafetensorsFile>();
  const get = (file: string) => {
    let f = files.get(file);
    if (!f) {
      f = open(file);
      files.set(file, f);
    }
    return f;
  };
  const where = new Map<string, string>();
  if (index) {
    for (const [name, file] of index) where.set(name, file);
    for (const file of new Set(index.values())) {
      const f = get(file);
      for (const name of f.header.tensors.keys()) {
        if (where.get(name) !== file) {
          throw new FormatError(
            `${file}: tensor "${name}"`,
            `listed in ${SHARD_INDEX_FILE} under this shard`,
            where.has(name) ? `listed under ${where.get(name)}` : "not listed",
          );
        }
      }
      for (const [name, file2] of index) {
        if (file2 === file && !f.header.tensors.has(name)) {
          throw new FormatError(`${file}: tensor "${name}"`, `present (${SHARD_INDEX_FILE} says this shard holds it)`, "absent");
        }
      }
    }
  } else {
    for (const name of get(SINGLE_FILE).header.tensors.keys()) where.set(name, SINGLE_FILE);
  }
  const entry = (name: string) => {
    const file = where.get(name);
    if (file === undefined) throw new FormatError(`${label}: tensor "${name}"`, "present in the checkpoint", "absent");
    return { file, e: get(file).header.tensors.get(name)! };
  };
  return {
    label,
    names: () => [...where.keys()],
    has: (name) => where.has(name),
    shape: (name) => entry(name).e.shape,
    fileOf: (name) => entry(name).file,
    read: (name) => get(entry(name).file).read(name),
  };
}

/** A store over in-memory files (`{ "model.safetensors": bytes }` or shards plus the index text). */
export function memoryStore(files: Readonly<Record<string, Uint8Array | string>>, label = "checkpoint"): TensorStore {
  const open = (file: string) => {
    const b = files[file];
    if (!(b instanceof Uint8Array)) throw new FormatError(`${label}/${file}`, "a safetensors file", "absent");
    return new SafetensorsFile(bytesSource(b), file);
  };
  const idx = files[SHARD_INDEX_FILE];
  return safetensorsStore(label, open, typeof idx === "string" ? parseShardIndex(idx) : undefined);
}
