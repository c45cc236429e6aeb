/**
 * Reads a checkpoint's tensors into the core's weight structures, checking every shape against
 * config.json. Hugging Face `nn.Linear` stores W as [out, in] (y = x Wᵀ); the core computes X W with
 * W ∈ R^{in×out} (§2.1), so linear weights are transposed here, once, and split per head. GPT-2's
 * Conv1D already stores [in, out].
 */
import { FormatError } from "../errors.js";
import type { TensorStore } from "../checkpoint/store.js";
import { Matrix } from "../matrix.js";

/** Shape-checked tensor access with errors naming the file, tensor and config field. */
export class WeightReader {
  constructor(
    readonly store: TensorStore,
    /** Prefix prepended to every name ("" or e.g. "transformer." for GPT-2 hub files). */
    readonly prefix = "",
  ) {}

  has(name: string): boolean {
    return this.store.has(this.prefix + name);
  }

  /**
   * The tensor `name` as float64, checked to have `shape`.
   * @param why the config fields the expected shape comes from (for the error message).
   */
  read(name: string, shape: readonly number[], why: string): Float64Array {
    const full = this.prefix + name;
    if (!this.store.has(full)) {
      throw new FormatError(`${this.store.label}: tensor "${full}"`, `present (shape [${shape.join(", ")}] from ${why})`, "absent");
    }
    const actual = this.store.shape(full);
    if (actual.length !== shape.length || actual.some((d, i) => d !== shape[i])) {
      throw new FormatError(
        `${this.store.fileOf(full)}: tensor "${full}" shape`,
        `[${shape.join(", ")}] (from config.json ${why})`,
        `[${actual.join(", ")}]`,
      );
    }
    return this.store.read(full).data;
  }

  /** A [rows, cols] tensor as a rows×cols matrix (as stored). */
  matrix(name: string, rows: number, cols: number, why: string): Matrix {
    return new Matrix(rows, cols, this.read(name, [rows, cols], why));
  }

  /** A 1-D tensor. */
  vector(name: string, length: number, why: string): Float64Array {
    return this.read(name, [length], why);
  }

  /**
   * An [out, in] Linear weight as in×out blocks of columns: block b holds output rows
   * `starts[b] … starts[b] + widths[b] − 1`, transposed (so X·block = the Linear's outputs there).
   */
  linearBlocks(name: string, out: number, inDim: number, blocks: readonly { start: number; width: number }[], why: string): Matrix[] {
    const w = this.read(name, [out, inDim], why);
    return blocks.map(({ start, width }) => {
      const m = new Matrix(inDim, width);
      for (let r = 0; r < width; r++) {
        const src = (start + r) * inDim;
        for (let c = 0; c < inDim; c++) m.data[c * width + r] = w[src + c];
      }
      return m;
    });
  }

  /** An [out, in] Linear weight transposed to in×out. */
  linear(name: string, out: number, inDim: number, why: string): Matrix {
    return this.linearBlocks(name, out, inDim, [{ start: 0, width: out }], why)[0];
  }
}

/** Blocks h·stride + offset … of width `width`, h = 0 … count − 1 (per-head slices of a fused projection). */
export function headBlocks(count: number, stride: number, offset: number, width: number): { start: number; width: number }[] {
  return Array.from({ length: count }, (_, h) => ({ start: h * stride + offset, width }));
}

/** Columns [start, start + width) of a Conv1D [in, out] weight as an in×width matrix. */
export function columnBlock(w: Matrix, start: number, width: number): Matrix {
  const m = new Matrix(w.rows, width);
  for (let i = 0; i < w.rows; i++) m.data.set(w.data.subarray(i * w.cols + start, i * w.cols + start + width), i * width);
  return m;
}
