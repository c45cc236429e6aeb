import { Matrix as MlMatrix } from "ml-matrix";
import { describe, expect, it } from "vitest";
import { Matrix, ShapeError, matmul, matmulTransA, matmulTransB, randomMatrix, transpose } from "@randattn/core";

// ml-matrix's plain `mmul` is the independent oracle (never mmulStrassen: wrong past n = 512).
function oracle(a: Matrix, b: Matrix): Matrix {
  return Matrix.fromMlMatrix(a.toMlMatrix().mmul(b.toMlMatrix()));
}

function relErr(x: Matrix, y: Matrix): number {
  let num = 0;
  let den = 0;
  for (let i = 0; i < x.data.length; i++) {
    num += (x.data[i] - y.data[i]) ** 2;
    den += y.data[i] ** 2;
  }
  return Math.sqrt(num / (den || 1));
}

const shapes: [number, number, number][] = [
  [1, 1, 1],
  [1, 7, 1],
  [5, 1, 3],
  [3, 5, 2],
  [4, 4, 4],
  [7, 9, 11],
  [17, 300, 13],
  [33, 65, 129],
];

describe("matmul kernels agree with ml-matrix", () => {
  for (const [m, k, n] of shapes) {
    it(`${m}×${k} · ${k}×${n}`, () => {
      const a = randomMatrix(m, k, {}, [1, "a", m, k]);
      const b = randomMatrix(k, n, {}, [1, "b", k, n]);
      const ref = oracle(a, b);
      expect(relErr(matmul(a, b), ref)).toBeLessThan(1e-13);
      expect(relErr(matmulTransB(a, transpose(b)), ref)).toBeLessThan(1e-13);
      expect(relErr(matmulTransA(transpose(a), b), ref)).toBeLessThan(1e-13);
    });
  }

  it("rejects mismatched inner dimensions naming the argument and shapes", () => {
    const a = new Matrix(3, 4);
    const b = new Matrix(5, 2);
    expect(() => matmul(a, b)).toThrow(ShapeError);
    expect(() => matmul(a, b)).toThrow(/b: expected rows = 4 .*got 5×2/);
  });

  it("ml-matrix conversion round-trips", () => {
    const a = randomMatrix(3, 5, {}, [2, "conv"]);
    const back = Matrix.fromMlMatrix(new MlMatrix(a.toArray()));
    expect(Array.from(back.data)).toEqual(Array.from(a.data));
  });
});
