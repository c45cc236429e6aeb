/** `.npy` files as matrices, through core's reader (io/). */
import { readFileSync } from "node:fs";
import { FormatError, Matrix } from "@randattn/core";
import { readNpy } from "./core-bindings.js";

/**
 * Reads a 2-D (N×d, one head) or 3-D (heads×N×d) float array from a `.npy` file.
 * @param argument config path for error messages.
 * @throws FormatError for a missing file, another rank, non-finite entries, or what core's reader rejects.
 */
export function readNpyMatrices(path: string, argument: string): Matrix[] {
  let bytes: Uint8Array;
  try {
    bytes = readFileSync(path);
  } catch (e) {
    throw new FormatError(argument, "a readable .npy file", `${path} (${(e as NodeJS.ErrnoException).code ?? (e as Error).message})`);
  }
  const arr = readNpy(bytes);
  const shape = arr.shape;
  if (shape.length !== 2 && shape.length !== 3) throw new FormatError(argument, "a 2-D (N×d) or 3-D (heads×N×d) array", `shape (${shape.join(", ")})`);
  const [h, n, d] = shape.length === 2 ? [1, shape[0], shape[1]] : [shape[0], shape[1], shape[2]];
  if (h * n * d === 0) throw new FormatError(argument, "a non-empty array", `shape (${shape.join(", ")})`);
  const out: Matrix[] = [];
  for (let k = 0; k < h; k++) {
    const data = new Float64Array(n * d);
    for (let i = 0; i < n * d; i++) {
      const v = Number(arr.data[k * n * d + i]);
      if (!Number.isFinite(v)) throw new FormatError(argument, "finite entries", `${v} at flat index ${k * n * d + i}`);
      data[i] = v;
    }
    out.push(new Matrix(n, d, data));
  }
  return out;
}
