import { readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { Matrix, type Tensor, parseSafetensors } from "@randattn/core";

/** Folder of a hand-built checkpoint written by scripts/models/make_fixtures.py. */
export function fixtureDir(name: string): string {
  return fileURLToPath(new URL(`../fixtures/pretrained/${name}`, import.meta.url));
}

/** The torch reference tensors of a fixture (float64). */
export function reference(name: string): Map<string, Tensor> {
  return parseSafetensors(readFileSync(`${fixtureDir(name)}/reference.safetensors`), "reference.safetensors").tensors;
}

/** A 2-D tensor as a matrix, or the i-th slice of a 3-D one. */
export function slice(t: Tensor, i?: number): Matrix {
  if (i === undefined) return new Matrix(t.shape[0], t.shape[1], t.data);
  const [_, r, c] = t.shape;
  return new Matrix(r, c, t.data.slice(i * r * c, (i + 1) * r * c));
}

/** max |a − b| / max |b|: the relative error the tests state. */
export function relError(a: ArrayLike<number>, b: ArrayLike<number>): number {
  if (a.length !== b.length) throw new Error(`length ${a.length} vs ${b.length}`);
  let num = 0;
  let den = 0;
  for (let i = 0; i < b.length; i++) {
    num = Math.max(num, Math.abs(a[i] - b[i]));
    den = Math.max(den, Math.abs(b[i]));
  }
  return num / den;
}

/** Flattens a list of matrices (heads × rows × cols). */
export function stack(ms: readonly Matrix[]): Float64Array {
  const out = new Float64Array(ms.reduce((s, m) => s + m.data.length, 0));
  let o = 0;
  for (const m of ms) {
    out.set(m.data, o);
    o += m.data.length;
  }
  return out;
}

/** "Name: message" of what `f` throws, or "no error": lets two paths' errors be compared as strings. */
export function errorMessage(f: () => unknown): string {
  try {
    f();
  } catch (e) {
    return `${(e as Error).name}: ${(e as Error).message}`;
  }
  return "no error";
}
