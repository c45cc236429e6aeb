import { wasmSimdAvailable } from "@randattn/core";
import { simdExp } from "@randattn/core/internal";
import { describe, expect, it } from "vitest";

// The SIMD exponential of the kernel module (range reduction x = k·ln2 + r, degree-13 Taylor in
// Horner form, 2^k from exponent bits in two factors) against Math.exp: within 2 ulp everywhere
// (measured ≤ 1), exact at 0, correct special values, subnormal results and overflow.

/** ulp of a positive float64 y (subnormal spacing below 2⁻¹⁰²²). */
function ulp(y: number): number {
  if (y < 2 ** -1022) return 2 ** -1074;
  return 2 ** (Math.floor(Math.log2(y)) - 52);
}

function maxUlpError(xs: Float64Array): number {
  const e = simdExp(xs);
  let worst = 0;
  for (let i = 0; i < xs.length; i++) {
    const r = Math.exp(xs[i]);
    if (e[i] === r) continue;
    if (!Number.isFinite(r) || r === 0) return Number.POSITIVE_INFINITY; // special values must match exactly
    worst = Math.max(worst, Math.abs(e[i] - r) / ulp(r));
  }
  return worst;
}

describe("simdExp", () => {
  it("runs on WebAssembly SIMD here (the fallback would be Math.exp itself)", () => {
    expect(wasmSimdAvailable()).toBe(true);
  });

  it("is within 2 ulp of Math.exp on [−750, 720] and on the softmax range [−40, 0]", () => {
    // Deterministic grids (odd lengths exercise the 8-wide, pairwise and single-element tails).
    const wide = Float64Array.from({ length: 200_001 }, (_, i) => -750 + (1470 * i) / 200_000 + 1e-7 * Math.sin(i));
    const soft = Float64Array.from({ length: 100_003 }, (_, i) => -40 * (i / 100_002) ** 2 + 1e-9 * Math.cos(i));
    expect(maxUlpError(wide)).toBeLessThanOrEqual(2);
    expect(maxUlpError(soft)).toBeLessThanOrEqual(2);
  });

  it("special values: −∞ → 0, +∞ → +∞, NaN → NaN, 0 → 1 exactly, overflow and underflow", () => {
    const xs = Float64Array.from([
      0,
      -0,
      Number.NEGATIVE_INFINITY,
      Number.POSITIVE_INFINITY,
      Number.NaN,
      -1e308,
      1e308,
      709.78,
      709.79,
      -745.2,
      -5e-324,
    ]);
    const e = simdExp(xs);
    expect(Array.from(e.subarray(0, 4))).toEqual([1, 1, 0, Number.POSITIVE_INFINITY]);
    expect(Number.isNaN(e[4])).toBe(true);
    expect(e[5]).toBe(0);
    expect(e[6]).toBe(Number.POSITIVE_INFINITY);
    expect(e[7]).toBe(Math.exp(709.78)); // largest finite results
    expect(e[8]).toBe(Number.POSITIVE_INFINITY);
    expect(e[9]).toBe(0);
    expect(e[10]).toBe(1);
  });

  it("rounds subnormal results like Math.exp (to within one subnormal step) and never gives NaN below −708", () => {
    const xs = Float64Array.from({ length: 4001 }, (_, i) => -745.2 + (37 * i) / 4000); // e^x from 0 to ≈ 2e-308·e^…
    const e = simdExp(xs);
    for (let i = 0; i < xs.length; i++) {
      const r = Math.exp(xs[i]);
      expect(Number.isNaN(e[i])).toBe(false);
      expect(Math.abs(e[i] - r)).toBeLessThanOrEqual(2 * ulp(r));
    }
  });

  it("writes in place and handles lengths 0…9 (every tail)", () => {
    for (let n = 0; n <= 9; n++) {
      const xs = Float64Array.from({ length: n }, (_, i) => -i / 3);
      const ref = xs.map(Math.exp);
      simdExp(xs, xs);
      for (let i = 0; i < n; i++) expect(Math.abs(xs[i] - ref[i])).toBeLessThanOrEqual(2 * ulp(ref[i]));
    }
  });
});
