import { Matrix, ValueError, matmulTransB, randomMatrix } from "@randattn/core";
import { describe, expect, it } from "vitest";
import { createSketch, fwhtInPlace, fwhtRowsInPlace, srhtSketch } from "@randattn/sketch";
import { naiveMatmul, relDiff } from "./kinds.js";

/** H[a, b] = (−1)^{popcount(a & b)} written from the definition. */
function hadamard(n: number): Matrix {
  return Matrix.from(n, n, (a, b) => {
    let bits = a & b;
    let parity = 0;
    for (; bits; bits >>= 1) parity ^= bits & 1;
    return parity ? -1 : 1;
  });
}

describe("fast Walsh–Hadamard transform", () => {
  it.each([1, 2, 8, 64])("n = %i: FWHT(x) = H x, H² = n I", (n) => {
    const x = randomMatrix(n, 1, {}, [3, "fwht", n]);
    const y = fwhtInPlace(x.data.slice());
    expect(relDiff(new Matrix(n, 1, y), naiveMatmul(hadamard(n), x))).toBeLessThanOrEqual(1e-13);
    const back = fwhtInPlace(y.slice()).map((v) => v / n);
    expect(relDiff(new Matrix(n, 1, back), x)).toBeLessThanOrEqual(1e-13);
  });

  it("the row-blocked form transforms every column", () => {
    const x = randomMatrix(16, 5, {}, [3, "rows"]);
    const y = fwhtRowsInPlace(x.data.slice(), 16, 5);
    expect(relDiff(new Matrix(16, 5, y), naiveMatmul(hadamard(16), x))).toBeLessThanOrEqual(1e-13);
  });

  it("rejects lengths that are not powers of two", () => {
    expect(() => fwhtInPlace(new Float64Array(6))).toThrow(ValueError);
    expect(() => fwhtInPlace(new Float64Array(6))).toThrow(/n: expected a power of two, got 6/);
  });
});

describe("SRHT structure", () => {
  it("without padding, rows are orthogonal: S Sᵀ = scale²·n'·I = (n/d)·I", () => {
    const s = createSketch(srhtSketch(8, 32), [1, "orth"]).toMatrix();
    const g = matmulTransB(s, s);
    for (let i = 0; i < 8; i++) for (let j = 0; j < 8; j++) expect(g.get(i, j)).toBeCloseTo(i === j ? 32 / 8 : 0, 12);
  });

  it("pads n = 20 to n' = 32, entries are ±1/√d, and the d selected Hadamard rows are distinct", () => {
    const dist = srhtSketch(5, 20);
    expect(dist.paddedDim).toBe(32);
    const s = createSketch(dist, [1, "pad"]).toMatrix();
    for (const v of s.data) expect(Math.abs(Math.abs(v) - 1 / Math.sqrt(5))).toBeLessThan(1e-15);
    const rows = new Set(Array.from({ length: 5 }, (_, i) => Array.from(s.row(i), Math.sign).join()));
    expect(rows.size).toBe(5);
  });
});
