/**
 * ./gkr.ts claims ml-matrix's SVD (`autoTranspose: true`) bit for bit, on flat arrays: every σ and
 * every entry of U and V compared with Object.is (so −0 ≠ +0 too) on tall, wide, square, 1 × n and
 * n × 1 matrices, rank-deficient ones (exact zero columns and repeated rows: the deflation branches,
 * cases 1 and 2 of the iteration) and graded ones (entries spanning 1e-150…1e150), with both,
 * neither, or one side's vectors. Any reordered operation moves at least one last bit somewhere in these.
 */
import { Matrix, randomMatrix } from "@randattn/core";
import fc from "fast-check";
import { SVD, Matrix as MlMatrix } from "ml-matrix";
import { describe, expect, it } from "vitest";
import { golubKahanSvd } from "../../src/lowrank/gkr.js";

function firstDifference(a: ArrayLike<number>, b: ArrayLike<number>): string | null {
  if (a.length !== b.length) return `length ${a.length} vs ${b.length}`;
  for (let i = 0; i < a.length; i++) if (!Object.is(a[i], b[i])) return `[${i}] ${a[i]} vs ${b[i]}`;
  return null;
}

/** ml-matrix's factors as flat row-major arrays restricted to min(rows, cols) columns (those asked for). */
function oracle(a: Matrix, left: boolean, right: boolean): { s: number[]; u?: Float64Array; v?: Float64Array } {
  const ml = new MlMatrix(Array.from({ length: a.rows }, (_, i) => Array.from(a.data.subarray(i * a.cols, (i + 1) * a.cols))));
  const svd = new SVD(ml, { autoTranspose: true, computeLeftSingularVectors: left, computeRightSingularVectors: right });
  const r = Math.min(a.rows, a.cols);
  const flat = (x: MlMatrix, rows: number) => {
    const out = new Float64Array(rows * r);
    for (let i = 0; i < rows; i++) for (let j = 0; j < r; j++) out[i * r + j] = x.get(i, j);
    return out;
  };
  return {
    s: svd.diagonal,
    ...(left ? { u: flat(svd.leftSingularVectors, a.rows) } : {}),
    ...(right ? { v: flat(svd.rightSingularVectors, a.cols) } : {}),
  };
}

/** Both vectors, neither, left only, right only (leverage scores ask for the left ones alone). */
const WISHES: [boolean, boolean][] = [
  [true, true],
  [false, false],
  [true, false],
  [false, true],
];

function expectSame(a: Matrix, what: string): void {
  for (const [left, right] of WISHES) {
    const want = oracle(a, left, right);
    const got = golubKahanSvd(a.data, a.rows, a.cols, left, right);
    const how = `${what} (left ${left}, right ${right})`;
    expect(firstDifference(got.s, want.s), `${how} σ`).toBeNull();
    if (left) expect(firstDifference(got.u as Float64Array, want.u as Float64Array), `${how} U`).toBeNull();
    else expect(got.u, how).toBeUndefined();
    if (right) expect(firstDifference(got.v as Float64Array, want.v as Float64Array), `${how} V`).toBeNull();
    else expect(got.v, how).toBeUndefined();
  }
}

describe("golubKahanSvd: ml-matrix's SVD, bit for bit", () => {
  it("tall, wide and square matrices, the shapes the sketches use (512 × 32, 15 × 32, 32 × 32, …)", () => {
    const shapes: [number, number][] = [
      [512, 32],
      [15, 32],
      [32, 15],
      [32, 32],
      [70, 64],
      [64, 70],
      [1, 9],
      [9, 1],
      [1, 1],
      [2, 2],
      [3, 7],
    ];
    for (const [r, c] of shapes) expectSame(randomMatrix(r, c, {}, [7, "gkr", r, c]), `${r} × ${c}`);
  });

  it("rank-deficient matrices: zero columns and rows, repeated rows, all zeros (the deflation branches)", () => {
    const a = randomMatrix(12, 8, {}, [7, "gkr", "def"]);
    for (let i = 0; i < 12; i++) {
      a.data[i * 8 + 3] = 0; // a zero column
      a.data[i * 8 + 5] = a.data[i * 8 + 1]; // a repeated column
    }
    a.data.copyWithin(6 * 8, 2 * 8, 3 * 8); // a repeated row
    expectSame(a, "12 × 8, rank ≤ 6");
    expectSame(new Matrix(5, 4), "5 × 4 zeros");
    // Bidiagonal input with a zero on the diagonal: case 2 (split at a negligible s(k)).
    const b = new Matrix(6, 6);
    for (let i = 0; i < 6; i++) {
      b.data[i * 6 + i] = i === 2 ? 0 : i + 1;
      if (i < 5) b.data[i * 6 + i + 1] = 0.5;
    }
    expectSame(b, "bidiagonal with s₂ = 0");
    expectSame(
      Matrix.fromArray([
        [0, 1],
        [0, 0],
      ]),
      "nilpotent 2 × 2",
    );
  });

  it("graded matrices (columns scaled 1e-150 … 1e150)", () => {
    const a = randomMatrix(20, 10, {}, [7, "gkr", "graded"]);
    for (let i = 0; i < 20; i++) for (let j = 0; j < 10; j++) a.data[i * 10 + j] *= 10 ** (30 * j - 150);
    expectSame(a, "graded 20 × 10");
  });

  it("random shapes and entries (property)", () => {
    fc.assert(
      fc.property(fc.integer({ min: 1, max: 24 }), fc.integer({ min: 1, max: 24 }), fc.integer({ min: 0, max: 1e6 }), (r, c, seed) => {
        expectSame(randomMatrix(r, c, {}, [seed, "gkr-property"]), `${r} × ${c} seed ${seed}`);
      }),
      { numRuns: 60, seed: 14 },
    );
  });

  it("does not modify its input", () => {
    const a = randomMatrix(9, 5, {}, [7, "gkr", "in"]);
    const copy = a.data.slice();
    for (const [left, right] of WISHES) golubKahanSvd(a.data, 9, 5, left, right);
    expect(firstDifference(a.data, copy)).toBeNull();
  });
});
