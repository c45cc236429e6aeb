/**
 * Seed derivation. Every random draw of a sweep is keyed by core's SeedKey = [root, ...purpose]:
 * - inputs: (root, "inputs", generator, structural params…, "trial", t) — the same Q/K/V for
 *   every method of a cell, and for every value of a non-structural param such as `scale`;
 * - method randomness: (root, "method", name, canonical params, "trial", t) — independent of the
 *   problem point, the label, the worker and the order in which cells run.
 * A cell's id is a hash of (root, cell identity), so it is stable across plans that share cells.
 */
import { type SeedKey, seedString } from "@randattn/core";
import { canonicalJson, sha256 } from "../base/canonical.js";
import type { Params } from "../registry/types.js";

/** Key of the input draw of (generator, structural params, trial). */
export function inputSeed(root: number, generator: string, params: Params, structural: readonly string[], trial: number): SeedKey {
  const parts: (string | number)[] = [];
  for (const name of structural) {
    const v = params[name];
    parts.push(name, typeof v === "boolean" ? String(v) : (v as string | number));
  }
  return [root, "inputs", generator, ...parts, "trial", trial];
}

/** Key of a method's own randomness for (method name, params, trial). The trial is the last part. */
export function methodSeed(root: number, method: string, params: Params, trial: number): SeedKey {
  return [root, "method", method, canonicalJson(params), "trial", trial];
}

/** 16-hex-digit id of a cell: sha256 of (root seed, canonical cell identity). */
export function cellSeed(root: number, identity: unknown): string {
  return sha256(seedString([root, "cell", canonicalJson(identity)])).slice(0, 16);
}
