/**
 * `.npz` archives (numpy.savez / savez_compressed): a ZIP of `.npy` members, one per named array.
 * Names are given without the ".npy" suffix, as numpy's `np.load(...)[name]` does.
 */
import { FormatError, ValueError } from "../errors.js";
import { describe, assertOptions } from "../validate.js";
import { type NpyArray, type NpyInput, type NpyReadOptions, type NpyWriteOptions, encodeNpy, parseNpy } from "../io/npy.js";
import { readZip, writeZip } from "./zip.js";

export interface NpzWriteOptions extends NpyWriteOptions {
  /** Deflate the members (numpy.savez_compressed) instead of storing them (numpy.savez). @default false */
  compress?: boolean;
}

/**
 * Parses an `.npz` archive held in memory into name → array, in archive order.
 * @throws FormatError for a malformed archive, a member that is not a `.npy`, a duplicate name,
 *   or any member's `.npy` error (named `label["member.npy"]`).
 */
export function parseNpz(bytes: Uint8Array, options: NpyReadOptions = {}, label = "bytes"): Map<string, NpyArray> {
  assertOptions(options, "options");
  if (!(bytes instanceof Uint8Array)) throw new ValueError(label, "a Uint8Array (or Buffer) of .npz bytes", describe(bytes));
  const out = new Map<string, NpyArray>();
  for (const entry of readZip(bytes, label)) {
    const where = `${label}[${JSON.stringify(entry.name)}]`;
    if (!entry.name.endsWith(".npy")) throw new FormatError(where, "a .npy member", JSON.stringify(entry.name));
    const name = entry.name.slice(0, -4);
    if (out.has(name)) throw new FormatError(where, "distinct member names", `a second ${JSON.stringify(entry.name)}`);
    out.set(name, parseNpy(entry.data, options, where));
  }
  return out;
}

/**
 * Serializes named arrays as an `.npz` archive (member `name.npy` per entry).
 * @throws ValueError for an empty or non-string name; any `encodeNpy` error, named `arrays.name`.
 */
export function encodeNpz(
  arrays: Readonly<Record<string, NpyInput>> | ReadonlyMap<string, NpyInput>,
  options: NpzWriteOptions = {},
): Uint8Array {
  assertOptions(options, "options");
  if (arrays === null || typeof arrays !== "object") throw new ValueError("arrays", "a record or Map of name → array", describe(arrays));
  const compress = options.compress ?? false;
  if (typeof compress !== "boolean") throw new ValueError("options.compress", "a boolean", describe(compress));
  const pairs = arrays instanceof Map ? [...arrays.entries()] : Object.entries(arrays);
  const entries = pairs.map(([name, value]) => {
    if (typeof name !== "string" || name.length === 0) throw new ValueError("arrays", "non-empty string names", describe(name));
    return { name: `${name}.npy`, data: encodeNpy(value, options, `arrays.${name}`) };
  });
  return writeZip(entries, compress);
}
