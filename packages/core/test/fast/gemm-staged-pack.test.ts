import { STAGE_MAX, gemmWasm, setGemmStageMax } from "@randattn/core/internal";
import fc from "fast-check";
import seedrandom from "seedrandom";
import { afterEach, describe, expect, it } from "vitest";
import { maxAbsOf } from "../../src/kernels/range32.js";

// gemmWasm stages a float64 operand of ≤ STAGE_MAX entries whole in kernel memory and packs it
// there (watPack.ts) instead of in the JavaScript packA / packB. The panels must be the same values
// (float64 copied, float32 rounded to nearest-even, zero padding), so every C entry must be the
// JavaScript path's bit for bit — the same sums in the same order — and the packers' max |entry|
// must be maxAbsOf's (NaN when one entry is NaN), which the float32 range check relies on.
// Shapes cover: fewer rows than a register tile, odd k (the packers' one-column tail), n not a
// multiple of NR (the partial panel), several KC / MC / NC blocks, and several C row chunks.

afterEach(() => {
  setGemmStageMax(STAGE_MAX);
});

function rand(n: number, seed: string, special = false): Float64Array {
  const rng = seedrandom(seed);
  const x = new Float64Array(n);
  for (let i = 0; i < n; i++) x[i] = (rng() - 0.5) * 2 ** Math.floor(rng() * 20 - 10);
  if (special && n > 0) x[Math.floor(rng() * n)] = -0;
  return x;
}

/** C from the staged packers and from the JavaScript ones, and the maxima the staged call reported. */
function bothPaths(
  precision: "float64" | "float32",
  transA: boolean,
  transB: boolean,
  A: Float64Array,
  B: Float64Array,
  m: number,
  k: number,
  n: number,
  accumulate: boolean,
): { staged: Float64Array; js: Float64Array; maxima: Float64Array } {
  const C0 = rand(m * n, `c-${m}-${k}-${n}`);
  const staged = C0.slice();
  const js = C0.slice();
  const maxima = new Float64Array(2).fill(-1);
  gemmWasm(precision, transA, transB, A, B, staged, m, k, n, accumulate, maxima);
  setGemmStageMax(0);
  gemmWasm(precision, transA, transB, A, B, js, m, k, n, accumulate);
  setGemmStageMax(STAGE_MAX);
  return { staged, js, maxima };
}

const bitsEqual = (x: Float64Array, y: Float64Array) => x.length === y.length && x.every((v, i) => Object.is(v, y[i]));

describe("gemmWasm: staged WebAssembly packing = the JavaScript packers, bit for bit", () => {
  const SHAPES: [number, number, number][] = [
    [1, 1, 1],
    [3, 5, 7],
    [4, 8, 8],
    [5, 257, 9],
    [17, 1, 33],
    [130, 301, 1030],
    [9, 2, 1031],
    [129, 513, 5],
    [2100, 3, 600],
  ];
  for (const [m, k, n] of SHAPES) {
    for (const precision of ["float64", "float32"] as const) {
      it(`${precision} ${m}×${k}·${k}×${n}: every transpose, overwrite and accumulate`, () => {
        const A = rand(m * k, `a-${m}-${k}`, true);
        const B = rand(k * n, `b-${k}-${n}`, true);
        for (const transA of [false, true]) {
          for (const transB of [false, true]) {
            for (const accumulate of [false, true]) {
              const { staged, js, maxima } = bothPaths(precision, transA, transB, A, B, m, k, n, accumulate);
              expect(bitsEqual(staged, js), `transA ${transA} transB ${transB} acc ${accumulate}`).toBe(true);
              expect(maxima[0]).toBe(maxAbsOf(A));
              expect(maxima[1]).toBe(maxAbsOf(B));
            }
          }
        }
      });
    }
  }

  it("random shapes and transposes (fast-check): the same bits and maxima", () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 1, max: 70 }),
        fc.integer({ min: 1, max: 300 }),
        fc.integer({ min: 1, max: 70 }),
        fc.boolean(),
        fc.boolean(),
        fc.constantFrom("float64" as const, "float32" as const),
        (m, k, n, transA, transB, precision) => {
          const A = rand(m * k, `fa-${m}-${k}`);
          const B = rand(k * n, `fb-${k}-${n}`);
          const { staged, js, maxima } = bothPaths(precision, transA, transB, A, B, m, k, n, false);
          return bitsEqual(staged, js) && maxima[0] === maxAbsOf(A) && maxima[1] === maxAbsOf(B);
        },
      ),
      { numRuns: 60, seed: 23 },
    );
  });

  it("one operand past STAGE_MAX takes the JavaScript packers, the other is staged: same bits, both maxima", () => {
    const [m, k, n] = [STAGE_MAX / 256 + 4, 256, 8]; // A has more than STAGE_MAX entries, B 2048
    const A = rand(m * k, "big-a");
    const B = rand(k * n, "big-b");
    for (const precision of ["float64", "float32"] as const) {
      const { staged, js, maxima } = bothPaths(precision, false, false, A, B, m, k, n, false);
      expect(bitsEqual(staged, js)).toBe(true);
      expect(maxima[0]).toBe(maxAbsOf(A));
      expect(maxima[1]).toBe(maxAbsOf(B));
    }
  });
});

describe("gemmWasm maxima: max |entry| as maxAbsOf, NaN wherever a NaN is", () => {
  it("NaN in a full panel, in the odd-k tail and in the partial panel; ±∞; −0; all zero", () => {
    const [m, k, n] = [6, 7, 11]; // rows 4–5: partial A panel; column 6: odd tail; columns 8–10: partial B panel
    const base = () => rand(m * k, "nan-a");
    const cases: [string, (a: Float64Array) => void][] = [
      ["full panel", (a) => (a[1 * k + 2] = NaN)],
      ["odd-k tail", (a) => (a[2 * k + 6] = NaN)],
      ["partial panel", (a) => (a[5 * k + 3] = NaN)],
      ["+∞", (a) => (a[3] = Infinity)],
      ["−∞", (a) => (a[5 * k + 6] = -Infinity)],
    ];
    const B = rand(k * n, "nan-b");
    for (const [name, poke] of cases) {
      for (const precision of ["float64", "float32"] as const) {
        for (const transA of [false, true]) {
          const A = base();
          poke(A);
          const maxima = new Float64Array(2);
          gemmWasm(precision, transA, false, A, B, new Float64Array(m * n), m, k, n, false, maxima);
          expect(maxima[0], `${name} ${precision} transA ${transA}`).toBe(maxAbsOf(A));
          expect(maxima[1]).toBe(maxAbsOf(B));
        }
      }
    }
    for (const transB of [false, true]) {
      const Bn = rand(k * n, "nan-b2");
      Bn[(k - 1) * n + n - 1] = NaN; // the last entry: partial panel (B) or odd tail (Bᵀ)
      const maxima = new Float64Array(2);
      gemmWasm("float32", false, transB, base(), Bn, new Float64Array(m * n), m, k, n, false, maxima);
      expect(maxima[1]).toBeNaN();
    }
    const zeros = new Float64Array(m * k);
    zeros[4] = -0;
    const maxima = new Float64Array(2);
    gemmWasm("float32", false, false, zeros, B, new Float64Array(m * n), m, k, n, false, maxima);
    expect(Object.is(maxima[0], 0)).toBe(true);
  });

  it("nothing to pack (m, n or k = 0): the maxima are still those of the operands", () => {
    const A = rand(12, "e-a");
    const B = rand(12, "e-b");
    for (const [m, k, n] of [
      [0, 4, 3],
      [3, 4, 0],
      [3, 0, 4],
    ]) {
      const maxima = new Float64Array(2).fill(-1);
      gemmWasm("float32", false, false, A.subarray(0, m * k), B.subarray(0, k * n), new Float64Array(m * n), m, k, n, false, maxima);
      expect(maxima[0]).toBe(maxAbsOf(A.subarray(0, m * k)));
      expect(maxima[1]).toBe(maxAbsOf(B.subarray(0, k * n)));
    }
  });

  it("a float32 operand (JavaScript packers) gets its maximum from maxAbsOf", () => {
    const [m, k, n] = [5, 9, 6];
    const A = new Float32Array(rand(m * k, "f32-a"));
    A[7] = NaN;
    const B = rand(k * n, "f32-b");
    const maxima = new Float64Array(2);
    gemmWasm("float32", false, false, A, B, new Float64Array(m * n), m, k, n, false, maxima);
    expect(maxima[0]).toBeNaN();
    expect(maxima[1]).toBe(maxAbsOf(B));
  });
});
