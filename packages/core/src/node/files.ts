/**
 * Thin filesystem helpers over the byte-level `.npy` / `.npz` functions. Writes go to a
 * temporary file in the same folder, then rename, so a crash never leaves a half-written array
 * under the final name.
 */
import { readFileSync, renameSync, rmSync, writeFileSync } from "node:fs";
import { ValueError } from "../errors.js";
import { describe } from "../validate.js";
import { type NpyArray, type NpyInput, type NpyReadOptions, type NpyWriteOptions, encodeNpy, parseNpy } from "../io/npy.js";
import { type NpzWriteOptions, encodeNpz, parseNpz } from "./npz.js";

function assertPath(path: unknown): asserts path is string {
  if (typeof path !== "string" || path.length === 0) throw new ValueError("path", "a non-empty file path", describe(path));
}

function writeAtomic(path: string, bytes: Uint8Array): void {
  const tmp = `${path}.tmp-${process.pid}-${Date.now()}`;
  try {
    writeFileSync(tmp, bytes);
    renameSync(tmp, path);
  } catch (err) {
    rmSync(tmp, { force: true });
    throw err;
  }
}

/** Reads a `.npy` file (see `parseNpy`; errors name the path).
 * @example
 * ```ts
 * import { mkdtempSync } from "node:fs";
 * import { tmpdir } from "node:os";
 * import { join } from "node:path";
 * import { npyToMatrix, randomMatrix } from "@randattn/core";
 * import { readNpyFile, writeNpyFile } from "@randattn/core/node";
 *
 * const path = join(mkdtempSync(join(tmpdir(), "randattn-")), "q.npy");
 * writeNpyFile(path, randomMatrix(8, 4, {}, [6])); // numpy.load(path) reads it
 * console.log(npyToMatrix(readNpyFile(path)).shape); // "8×4"
 * ```
 */
export function readNpyFile(path: string, options: NpyReadOptions = {}): NpyArray {
  assertPath(path);
  return parseNpy(readFileSync(path), options, path);
}

/** Writes `value` as a `.npy` file (see `encodeNpy`). */
export function writeNpyFile(path: string, value: NpyInput, options: NpyWriteOptions = {}): void {
  assertPath(path);
  writeAtomic(path, encodeNpy(value, options));
}

/** Reads a `.npz` file into name → array (see `parseNpz`; errors name the path and member). */
export function readNpzFile(path: string, options: NpyReadOptions = {}): Map<string, NpyArray> {
  assertPath(path);
  return parseNpz(readFileSync(path), options, path);
}

/** Writes named arrays as a `.npz` file (see `encodeNpz`). */
export function writeNpzFile(
  path: string,
  arrays: Readonly<Record<string, NpyInput>> | ReadonlyMap<string, NpyInput>,
  options: NpzWriteOptions = {},
): void {
  assertPath(path);
  writeAtomic(path, encodeNpz(arrays, options));
}
