import { streamFor, wasmSimdAvailable } from "@randattn/core";
import { expTable, simdExp, simdExp32 } from "@randattn/core/internal";
import { describe, expect, it } from "vitest";

// The SIMD exponential of the kernel module (Tang's table-driven method: x = (2048e + i)·ln2/2048 + r
// by Cody–Waite, e^r − 1 by a degree-3 near-minimax polynomial, 2^(i/2048) from a table of
// correctly rounded hi values, 2^e from exponent bits — in two factors on the rare path, one integer
// add on the fast path) against Math.exp: within 2 ulp everywhere (the analysis gives ≤ 1.17 ulp
// from the exact value, Math.exp is within 1; measured ≤ 1), exact at 0, correct special values,
// subnormal results and overflow. A one-entry error in the table, a dropped polynomial term or a lost Cody–Waite term
// each give ≥ 2 ulp somewhere on these grids.

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

  it("is within 2 ulp of Math.exp on a dense grid and at random points of softmax's range [−745, 0]", () => {
    const grid = Float64Array.from({ length: 400_001 }, (_, i) => (-745 * i) / 400_000);
    const s = streamFor(14, "simd-exp", "uniform");
    const random = Float64Array.from({ length: 200_000 }, () => -745 * s.uniform());
    // Near 0 (where most softmax weights live) with full-precision mantissas.
    const small = Float64Array.from({ length: 100_000 }, () => -Math.exp(-20 * s.uniform()));
    expect(maxUlpError(grid)).toBeLessThanOrEqual(2);
    expect(maxUlpError(random)).toBeLessThanOrEqual(2);
    expect(maxUlpError(small)).toBeLessThanOrEqual(2);
  });

  it("has a table of 2^(i/2048) as exact (hi, lo) pairs: T[2i] = T[i]² to ≈ 2⁻¹⁰⁰ (double-double check)", () => {
    // |lo| ≤ 2⁻⁵³·hi below says hi (the part in the kernel memory) is 2^(i/2048) correctly rounded.
    const t = expTable();
    expect(t.length).toBe(4096);
    // Dekker's exact product of two float64s (Veltkamp split), then (hi + lo)² − T[2i] in double-double.
    const split = (a: number) => {
      const c = 134217729 * a; // 2²⁷ + 1
      const h = c - (c - a);
      return [h, a - h];
    };
    const twoProd = (a: number, b: number) => {
      const p = a * b;
      const [ah, al] = split(a);
      const [bh, bl] = split(b);
      return [p, ah * bh - p + ah * bl + al * bh + al * bl];
    };
    let worst = 0;
    for (let i = 0; i < 1024; i++) {
      const [hi, lo] = [t[2 * i], t[2 * i + 1]];
      expect(Math.abs(lo)).toBeLessThanOrEqual(2 ** -53 * hi);
      const [p, e] = twoProd(hi, hi);
      const sq = p - t[4 * i] + (e + 2 * hi * lo) - t[4 * i + 1];
      worst = Math.max(worst, Math.abs(sq));
    }
    expect(t[0]).toBe(1);
    expect(t[1]).toBe(0);
    expect(worst).toBeLessThan(2 ** -98);
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

  it("gives the same bits on the fast path and on the rare path (a group of 8 with one lane below −669)", () => {
    // exp_f64 takes 8 values at a time; a group with any lane outside [−669, 709] (or NaN) runs the
    // clamped two-factor form, every other group the fast form. A value's result must not depend on
    // its neighbours: put each value in a group whose other lanes force the rare path, and compare.
    // The last 500 sit around the fast range's lower end (−707 … −600) on (almost) multiples of ln2/2048, where p is
    // tiny and 2^e·hi·p underflows on the fast path (wat.ts EXP_FAST_LO: the same bits even then).
    const s = streamFor(14, "simd-exp", "paths");
    const xs = Float64Array.from({ length: 2500 }, (_, i) =>
      i < 1000
        ? -40 * s.uniform()
        : i < 2000
          ? -669 + 1378 * s.uniform()
          : (Math.round((-707 + 107 * s.uniform()) * (2048 / Math.LN2)) * Math.LN2) / 2048 + (s.uniform() - 0.5) * 2 ** -(20 + (i % 30)),
    );
    const fast = simdExp(xs);
    const probe = new Float64Array(8);
    let differ = 0;
    for (let i = 0; i < xs.length; i++) {
      probe.fill(-800);
      probe[i % 8] = xs[i];
      const slow = simdExp(probe);
      if (slow[i % 8] !== fast[i]) differ++;
      expect(slow[(i + 1) % 8]).toBe(0);
    }
    expect(differ).toBe(0);
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

// The f32x4 exp of the float32 attention path (Cody–Waite in float32, Cephes' degree-7 minimax
// form, 2^k in two factors): stated bound ≤ 2 ulp of float32 from the exact e^x; measured < 1 ulp
// (0.99) over 3·10⁶ points, i.e. within 1 ulp of the correctly rounded value. The test asserts 1.5.
describe("simdExp32", () => {
  const ulp32 = (y: number) => (y < 2 ** -126 ? 2 ** -149 : 2 ** (Math.floor(Math.log2(y)) - 23));
  function maxUlp32(xs: Float32Array): number {
    const e = simdExp32(xs);
    let worst = 0;
    for (let i = 0; i < xs.length; i++) {
      const r = Math.exp(xs[i]); // float64: exact to 2⁻⁵³, far below float32's ulp
      const r32 = Math.fround(r);
      if (e[i] === r32) continue;
      if (!Number.isFinite(r32) || r32 === 0) return Number.POSITIVE_INFINITY;
      worst = Math.max(worst, Math.abs(e[i] - r) / ulp32(r32));
    }
    return worst;
  }

  it("is within 1.5 ulp of float32 from e^x on a dense grid and at random points of [−103, 0], and on [−88, 88]", () => {
    const s = streamFor(14, "simd-exp32", "uniform");
    const grid = Float32Array.from({ length: 300_001 }, (_, i) => (-103 * i) / 300_000);
    const random = Float32Array.from({ length: 200_000 }, () => -103 * s.uniform());
    const wide = Float32Array.from({ length: 100_000 }, () => 176 * s.uniform() - 88);
    expect(maxUlp32(grid)).toBeLessThanOrEqual(1.5);
    expect(maxUlp32(random)).toBeLessThanOrEqual(1.5);
    expect(maxUlp32(wide)).toBeLessThanOrEqual(1.5);
  });

  it("special values, overflow, subnormal results and every tail length", () => {
    const xs = Float32Array.from([
      0,
      -0,
      Number.NEGATIVE_INFINITY,
      Number.POSITIVE_INFINITY,
      Number.NaN,
      -1e30,
      1e30,
      88.72,
      88.73,
      -103.97,
      -103.98,
      1,
    ]);
    const e = simdExp32(xs);
    expect(Array.from(e.subarray(0, 4))).toEqual([1, 1, 0, Number.POSITIVE_INFINITY]);
    expect(Number.isNaN(e[4])).toBe(true);
    expect([e[5], e[6]]).toEqual([0, Number.POSITIVE_INFINITY]);
    expect(e[7]).toBe(Math.fround(Math.exp(Math.fround(88.72)))); // largest finite results
    expect(e[8]).toBe(Number.POSITIVE_INFINITY);
    expect(e[9]).toBe(2 ** -149); // the smallest subnormal, rounded once
    expect(e[10]).toBe(0);
    expect(e[11]).toBe(Math.fround(Math.E));
    const band = Float32Array.from({ length: 2001 }, (_, i) => -104 + (17 * i) / 2000); // subnormal results
    const eb = simdExp32(band);
    for (let i = 0; i < band.length; i++) {
      expect(Math.abs(eb[i] - Math.exp(band[i]))).toBeLessThanOrEqual(1.5 * ulp32(Math.fround(Math.exp(band[i]))));
    }
    for (let n = 0; n <= 21; n++) {
      const x = Float32Array.from({ length: n }, (_, i) => -i / 3);
      const ref = Array.from(x, Math.exp);
      const y = simdExp32(x, x);
      expect(y).toBe(x);
      for (let i = 0; i < n; i++) expect(Math.abs(y[i] - ref[i])).toBeLessThanOrEqual(1.5 * ulp32(Math.fround(ref[i])));
    }
  });
});
