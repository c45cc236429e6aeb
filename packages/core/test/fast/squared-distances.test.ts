import { Matrix, ShapeError, getKernelBackend, setKernelBackend } from "@randattn/core";
import { squaredDistances, squaredDistancesJs } from "@randattn/core/internal";
import fc from "fast-check";
import { Matrix as MlMatrix } from "ml-matrix";
import seedrandom from "seedrandom";
import { afterAll, describe, expect, it } from "vitest";

// The squared-distance kernel (kernels/watDistance.ts) against its JavaScript form bit for bit — the
// experiments' first-order row-sampling theory sums these distances into committed results — and
// both against ml-matrix's ‖a‖² + ‖b‖² − 2 a·b (an independent oracle): each side's rounding error is
// at most a few d·ε·(‖a_i‖² + ‖b_j‖²), so 1e-12 of that sum (≈ 4500 ulps) holds for d ≤ 100 with room
// and fails for any wrong pairing of rows or columns.
const previous = getKernelBackend();
afterAll(() => setKernelBackend(previous));

function random(rows: number, cols: number, rng: () => number, wide: boolean): Matrix {
  const m = new Matrix(rows, cols);
  for (let i = 0; i < m.data.length; i++) m.data[i] = (rng() - 0.5) * (wide ? 10 ** Math.floor(rng() * 6 - 3) : 1);
  return m;
}

const same = (x: Matrix, y: Matrix) => x.rows === y.rows && x.cols === y.cols && x.data.every((v, i) => Object.is(v, y.data[i]));

describe("squaredDistances: WebAssembly kernel ≡ JavaScript, both against ml-matrix", () => {
  // n = 1000: 65 rows of D per kernel call, so m = 150 takes three calls (the last one partial).
  for (const [m, n, d] of [
    [1, 1, 1],
    [3, 5, 7],
    [17, 9, 1],
    [64, 63, 16],
    [150, 1000, 33],
    [40, 8, 64],
    [9, 16, 100],
  ]) {
    it(`${m} × ${n} pairs, d = ${d}`, () => {
      const rng = seedrandom(`sqd-${m}-${n}-${d}`);
      const a = random(m, d, rng, true);
      const b = random(n, d, rng, true);
      setKernelBackend("wasm");
      const w = squaredDistances(a, b);
      setKernelBackend("scalar");
      const s = squaredDistances(a, b);
      expect(same(w, squaredDistancesJs(a, b))).toBe(true);
      expect(same(w, s)).toBe(true);
      const am = new MlMatrix(Array.from({ length: m }, (_, i) => Array.from(a.rowView(i))));
      const bm = new MlMatrix(Array.from({ length: n }, (_, j) => Array.from(b.rowView(j))));
      const ab = am.mmul(bm.transpose());
      const na = am.mmul(am.transpose()).diag();
      const nb = bm.mmul(bm.transpose()).diag();
      let worst = 0;
      for (let i = 0; i < m; i++) {
        for (let j = 0; j < n; j++) {
          const want = na[i] + nb[j] - 2 * ab.get(i, j);
          worst = Math.max(worst, Math.abs(w.data[i * n + j] - want) / (na[i] + nb[j]));
        }
      }
      expect(worst).toBeLessThanOrEqual(1e-12);
    });
  }

  it("any shape and entries (fast-check): the kernel's bits are the JavaScript loop's", () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 0, max: 12 }),
        fc.integer({ min: 0, max: 20 }),
        fc.integer({ min: 0, max: 9 }),
        fc.integer(),
        (m, n, d, seed) => {
          const rng = seedrandom(String(seed));
          const a = random(m, d, rng, true);
          const b = random(n, d, rng, true);
          setKernelBackend("wasm");
          return same(squaredDistances(a, b), squaredDistancesJs(a, b));
        },
      ),
      { numRuns: 200, seed: 20261203 },
    );
  });

  it("non-finite entries and signed zeros propagate as in the loop; d = 0 gives zeros", () => {
    const a = Matrix.fromArray([
      [Number.POSITIVE_INFINITY, 1],
      [-0, 0],
      [Number.NaN, 2],
    ]);
    const b = Matrix.fromArray([
      [Number.POSITIVE_INFINITY, 1],
      [0, -0],
      [1e300, 1e300],
    ]);
    setKernelBackend("wasm");
    const w = squaredDistances(a, b);
    expect(same(w, squaredDistancesJs(a, b))).toBe(true);
    expect(w.get(0, 0)).toBeNaN(); // ∞ − ∞
    expect(Object.is(w.get(1, 1), 0)).toBe(true);
    expect(w.get(1, 2)).toBe(Number.POSITIVE_INFINITY); // overflow, as in the loop
    expect(Array.from(squaredDistances(new Matrix(2, 0), new Matrix(3, 0)).data)).toEqual([0, 0, 0, 0, 0, 0]);
  });

  it("writes into a given array (stale entries and all, longer than needed) the same bits, both backends", () => {
    const rng = seedrandom("sqd-into");
    const a = random(150, 33, rng, true);
    const b = random(1000, 33, rng, true);
    const want = squaredDistancesJs(a, b);
    for (const backend of ["wasm", "scalar"] as const) {
      setKernelBackend(backend);
      const into = new Float64Array(150 * 1000 + 7).fill(Number.NaN);
      const d = squaredDistances(a, b, into);
      expect(d.data.buffer).toBe(into.buffer); // no copy
      expect(same(d, want)).toBe(true);
      expect(into[150 * 1000]).toBeNaN(); // nothing past D
      // d = 0: every entry 0, not what the array held.
      expect(Array.from(squaredDistances(new Matrix(2, 0), new Matrix(3, 0), into).data)).toEqual([0, 0, 0, 0, 0, 0]);
    }
  });

  it("a too-short array to write into is a ShapeError naming into, before anything is written", () => {
    const into = new Float64Array(11).fill(7);
    expect(() => squaredDistances(new Matrix(3, 2), new Matrix(4, 2), into)).toThrow(ShapeError);
    expect(() => squaredDistances(new Matrix(3, 2), new Matrix(4, 2), into)).toThrow(/into.*at least 12 floats \(3×4\).*length 11/);
    expect(into.every((x) => x === 7)).toBe(true);
  });

  it("a column-count mismatch is a ShapeError naming b, the expected and the actual", () => {
    expect(() => squaredDistances(new Matrix(2, 3), new Matrix(4, 2))).toThrow(ShapeError);
    expect(() => squaredDistances(new Matrix(2, 3), new Matrix(4, 2))).toThrow(/\bb\b.*3 columns.*4×2/);
  });
});
