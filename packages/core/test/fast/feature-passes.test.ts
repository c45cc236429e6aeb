/**
 * The passes of sketch's resident random-feature attention in kernels/watFeatures.ts (issue 14,
 * stop 42) against the JavaScript loops they replaced, bit for bit: the running feature sums
 * z[l] += Σ_p φ[p, l] over a block of keys in 4-column panels (feature counts that fill the last
 * panel or not, z carried over two blocks), each row's Σ x² with the finiteness test beside it, and
 * the [numerator | D] rows divided by the same reciprocal (declining when some D ≤ 0).
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

describe("rows_sumsq_f64 and divide_rows_f64", () => {
  it.each([1, 2, 3, 4, 5, 9, 64])(
    "rows_sumsq_f64 gives each row's Σ x² in column order, bit for bit (%i rows), and finds a NaN or ±∞",
    (rows) => {
      const cols = 13;
      const ld = cols + 2;
      const x = Float64Array.from({ length: rows * ld }, () => (rng() - 0.5) * Math.exp(6 * rng()));
      const ref = Float64Array.from({ length: rows }, (_, r) => {
        let t = 0;
        for (let c = 0; c < cols; c++) t += x[r * ld + c] * x[r * ld + c];
        return t;
      });
      const [S, D] = arena.frame([x.byteLength, rows * 8]);
      k.f64.set(x, S / 8);
      expect(k.rows_sumsq_f64(S, ld, rows, cols, D)).toBe(1);
      expect(bits(k.f64.subarray(D / 8, D / 8 + rows))).toEqual(bits(ref));
      for (const bad of [Number.NaN, Number.POSITIVE_INFINITY, Number.NEGATIVE_INFINITY]) {
        k.f64.set(x, S / 8);
        k.f64[S / 8 + (rows - 1) * ld + cols - 1] = bad;
        expect(k.rows_sumsq_f64(S, ld, rows, cols, D)).toBe(0);
      }
      // Entries past cols in a row's stride are not read.
      k.f64.set(x, S / 8);
      k.f64[S / 8 + cols] = Number.NaN;
      expect(k.rows_sumsq_f64(S, ld, rows, cols, D)).toBe(1);
    },
  );

  it("divide_rows_f64 divides [numerator | D] rows by the same reciprocal as the loop, and declines when some D ≤ 0", () => {
    const [rows, cols] = [7, 5];
    const w = cols + 1;
    const src = Float64Array.from({ length: rows * w }, () => rng() * 10 - 3);
    for (let r = 0; r < rows; r++) src[r * w + cols] = 0.1 + rng() * 1e-3;
    const ref = new Float64Array(rows * cols);
    for (let r = 0; r < rows; r++) {
      const inv = 1 / src[r * w + cols];
      for (let c = 0; c < cols; c++) ref[r * cols + c] = src[r * w + c] * inv;
    }
    const [S, D] = arena.frame([src.byteLength, rows * cols * 8]);
    k.f64.set(src, S / 8);
    expect(k.divide_rows_f64(S, w, rows, cols, D)).toBe(1);
    expect(bits(k.f64.subarray(D / 8, D / 8 + rows * cols))).toEqual(bits(ref));
    for (const bad of [0, -1, Number.NaN]) {
      k.f64.set(src, S / 8);
      k.f64[S / 8 + 3 * w + cols] = bad;
      k.f64.fill(7, D / 8, D / 8 + rows * cols);
      expect(k.divide_rows_f64(S, w, rows, cols, D)).toBe(0);
      expect(Array.from(k.f64.subarray(D / 8, D / 8 + rows * cols)).every((v) => v === 7)).toBe(true); // nothing written
    }
  });
});
