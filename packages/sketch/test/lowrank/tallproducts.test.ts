/**
 * The SYRK Gram and the triangular product of CholeskyQR (issue 14) against the plain products they
 * replace: bit for bit (same depth-256 slices summed in the same order; only half the tiles run).
 * Shapes cover a partial last panel (ℓ mod 4 ≠ 0), ℓ > 256 (several depth slices in the triangle),
 * a one-column sample, m not a multiple of the chunk, and the scalar backend's fallback. A kernel
 * call on the wrong panel, a missed tile or a wrong triangle depth changes entries by O(1).
 */
import { randomMatrix, withKernelBackend } from "@randattn/core";
import { matmulInto, matmulTransAInto } from "@randattn/core/internal";
import { describe, expect, it } from "vitest";
import { qb } from "../../src/lowrank/qb.js";
import { rangeFinderResolved, transposedProduct } from "../../src/lowrank/rangefinder.js";
import { PackedTallOperand, gramMatrix, upperTriangularRightProduct } from "../../src/lowrank/tallproducts.js";

const SHAPES: [number, number][] = [
  [2048, 74],
  [1000, 17],
  [700, 301],
  [4096, 3],
  [300, 1],
  [517, 8],
];

function plainGram(y: Float64Array, m: number, l: number): Float64Array {
  const g = new Float64Array(l * l);
  matmulTransAInto(y, y, g, m, l, l, false);
  for (let i = 0; i < l; i++)
    for (let j = i + 1; j < l; j++) {
      const v = 0.5 * (g[i * l + j] + g[j * l + i]);
      g[i * l + j] = v;
      g[j * l + i] = v;
    }
  return g;
}

function upperTriangle(l: number, seed: number): Float64Array {
  const u = randomMatrix(l, l, {}, [seed, "u"]).data;
  for (let i = 0; i < l; i++) for (let j = 0; j < i; j++) u[i * l + j] = 0;
  return u;
}

describe("tall-sample products (SYRK Gram, triangular product)", () => {
  for (const backend of ["auto", "scalar"] as const) {
    it(`match the plain products bit for bit (${backend} backend)`, () => {
      withKernelBackend(backend, () => {
        for (const [m, l] of SHAPES) {
          const y = randomMatrix(m, l, {}, [m, l]).data;
          expect(Array.from(gramMatrix(y, m, l))).toEqual(Array.from(plainGram(y, m, l)));
          const u = upperTriangle(l, l);
          const want = new Float64Array(m * l);
          matmulInto(y, u, want, m, l, l, false);
          const got = new Float64Array(m * l).fill(Number.NaN);
          upperTriangularRightProduct(y, u, got, m, l);
          expect(Array.from(got)).toEqual(Array.from(want));
        }
      });
    });
  }

  it("ignores the entries below the diagonal of the triangle", () => {
    const [m, l] = [1024, 21];
    const y = randomMatrix(m, l, {}, [3]).data;
    const u = upperTriangle(l, 4);
    const noisy = u.slice();
    for (let i = 0; i < l; i++) for (let j = 0; j < i; j++) noisy[i * l + j] = 1e6;
    const a = new Float64Array(m * l);
    const b = new Float64Array(m * l);
    upperTriangularRightProduct(y, u, a, m, l);
    upperTriangularRightProduct(y, noisy, b, m, l);
    expect(Array.from(b)).toEqual(Array.from(a));
  });

  it("a packed A serves every Yᵀ·A of a call with transposedProduct's bits, beside the Gram and triangle", () => {
    const [m, n] = [1300, 203]; // a partial depth slice and a partial last panel
    const a = randomMatrix(m, n, {}, [5]).data;
    const packed = PackedTallOperand.create(a, m, n, 30);
    expect(packed).not.toBeNull();
    // one operand at a time: a second create while the first is live gets null (the plain product)
    expect(PackedTallOperand.create(a, m, n, 30)).toBeNull();
    try {
      for (const [c, seed] of [
        [30, 1],
        [7, 2],
        [30, 3],
      ]) {
        const y = randomMatrix(m, c, {}, [seed]).data;
        expect(Array.from(packed?.transposedProduct(y, c) ?? [])).toEqual(Array.from(transposedProduct(a, y, m, n, c)));
        // the scratch above the panels is the Gram's and the triangle's: the panels must survive them
        upperTriangularRightProduct(y, upperTriangle(c, seed), new Float64Array(m * c), m, c);
        gramMatrix(y, m, c);
      }
    } finally {
      packed?.release();
    }
    const again = PackedTallOperand.create(a, m, n, 30);
    expect(again).not.toBeNull();
    again?.release();
  });

  it("QB with the default driver (A packed once) equals the same driver run unshared, bit for bit", () => {
    const a = randomMatrix(900, 140, {}, [6]);
    const options = { rank: 12, oversampling: 6, powerIterations: 2 };
    const shared = qb(a, options, [7]);
    const plain = qb(a, { ...options, rangeFinder: (x, r, seed) => rangeFinderResolved(x, r, seed) }, [7]);
    expect(Array.from(shared.Q.data)).toEqual(Array.from(plain.Q.data));
    expect(Array.from(shared.B.data)).toEqual(Array.from(plain.B.data));
    const scalar = withKernelBackend("scalar", () => qb(a, options, [7]));
    let d = 0;
    for (let i = 0; i < scalar.B.data.length; i++) d = Math.max(d, Math.abs(scalar.B.data[i] - shared.B.data[i]));
    // another summation order throughout (Q too): B agrees to rounding, ≈ m·u·max|A|·√m ≈ 1e-11 here
    expect(d).toBeLessThan(1e-11);
  });
});
