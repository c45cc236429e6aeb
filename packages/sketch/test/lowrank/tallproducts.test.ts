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
import { gramMatrix, upperTriangularRightProduct } from "../../src/lowrank/tallproducts.js";

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
});
