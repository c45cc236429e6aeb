/**
 * Writes a forward pass to `.npy` files (core io): `logits.npy` (N × vocab, float64) and one file
 * per captured layer and tensor, `layer{l}.{tensor}.npy` — per-head lists as heads × N × d stacks
 * (`q`, `qPre`, `weights`: query heads; `k`, `kPre`, `v`: KV heads, H for MLA), `latent` (N × d_L),
 * `rotaryKey` (N × d_R), `hidden` (N × d). The file names are the `randattn model forward` contract.
 */
import { mkdirSync } from "node:fs";
import { join } from "node:path";
import { writeNpyFile } from "./files.js";
import type { Matrix } from "../matrix.js";
import type { ForwardResult, LayerCapture } from "../pretrained/model.js";

/** Tensors {@link writeForwardNpy} writes per layer, in this order. */
const FILES = [
  "hidden",
  "qPre",
  "q",
  "kPre",
  "k",
  "v",
  "weights",
  "latent",
  "rotaryKey",
] as const satisfies readonly (keyof LayerCapture)[];

/**
 * Writes `logits.npy` and every captured tensor of `result` under `dir` (created if needed).
 * @returns the paths written.
 */
export function writeForwardNpy(dir: string, result: ForwardResult): string[] {
  mkdirSync(dir, { recursive: true });
  const written = [join(dir, "logits.npy")];
  writeNpyFile(written[0], result.logits);
  for (const cap of result.layers) {
    for (const name of FILES) {
      const value = cap[name] as Matrix | Matrix[] | undefined;
      if (value === undefined) continue;
      const path = join(dir, `layer${cap.layer}.${name}.npy`);
      writeNpyFile(path, value);
      written.push(path);
    }
  }
  return written;
}
