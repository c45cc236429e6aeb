/**
 * panel_column_sums_f64 (kernels/watFeatures.ts, issue 14, stop 42): sketch's resident random-feature
 * attention's running feature sums z[l] += Σ_p φ[p, l] over a block of keys in 4-column panels,
 * against the JavaScript loop it replaced (the same additions in the same order: the same bits),
 * for feature counts that fill the last panel or not, over two blocks (z carried from one to the next).
 */
import { KernelArena, panelIndex } from "@randattn/core/internal";
import seedrandom from "seedrandom";
import { describe, expect, it } from "vitest";

const rng = seedrandom("feature-passes");
const arena = new KernelArena();
const k = arena.k;
const bits = (a: ArrayLike<number>) => Array.from(a, (x) => (Object.is(x, -0) ? "-0" : String(x)));

describe("panel_column_sums_f64", () => {
  it.each([1, 3, 4, 7, 16, 33])("adds each feature's column in key order onto the running sums (%i features)", (F) => {
    const z = Float64Array.from({ length: F }, () => rng() * 1e3);
    const ref = z.slice();
    const P = Math.ceil(F / 4) * 4;
    for (const kb of [1, 37]) {
      // A block of kb keys in 4-column panels, the padding lanes of a last partial panel zero.
      const panels = new Float64Array(P * kb);
      for (let p = 0; p < kb; p++)
        for (let l = 0; l < F; l++) panels[panelIndex(p, l, kb)] = Math.exp(4 * rng() - 2) * (rng() < 0.1 ? 1e-17 : 1);
      for (let l = 0; l < F; l++) for (let p = 0; p < kb; p++) ref[l] += panels[panelIndex(p, l, kb)];
      const [A, Z] = arena.frame([panels.byteLength, P * 8]);
      k.f64.set(panels, A / 8);
      k.f64.set(z, Z / 8);
      k.f64.fill(-1, Z / 8 + F, Z / 8 + P); // past count: must stay as they were
      k.panel_column_sums_f64(A, kb, F, Z);
      z.set(k.f64.subarray(Z / 8, Z / 8 + F));
      expect(bits(z)).toEqual(bits(ref));
      expect(Array.from(k.f64.subarray(Z / 8 + F, Z / 8 + P))).toEqual(Array(P - F).fill(-1));
    }
  });
});
