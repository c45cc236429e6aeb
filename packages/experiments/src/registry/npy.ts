/** `.npy` files as matrices, through core's reader (io/). */
import { FormatError, type Matrix, npyToMatrix, npyToStack, parseNpy } from "@randattn/core";
import { nodeFs } from "../platform/node.js";

/**
 * Reads a 2-D (N×d, one head) or 3-D (heads×N×d) array from a `.npy` file. Core's reader
 * rejects truncated files, lying headers, unsupported dtypes and non-finite values.
 * @param argument config path for error messages.
 * @throws FormatError for a missing file or another rank (and core's errors for bad content).
 */
export function readNpyMatrices(path: string, argument: string): Matrix[] {
  const fs = nodeFs(argument);
  if (!fs.existsSync(path)) throw new FormatError(argument, "an existing .npy file", path);
  const arr = parseNpy(fs.readFileSync(path), {}, path);
  if (arr.shape.length === 2) return [npyToMatrix(arr, argument)];
  if (arr.shape.length === 3) return npyToStack(arr, argument);
  throw new FormatError(argument, "a 2-D (N×d) or 3-D (heads×N×d) array", `shape (${arr.shape.join(", ")}) in ${path}`);
}
