/**
 * exactSvd / exactSingularValues remember their last full SVDs by the input's bits (svd.ts,
 * `rememberedSvd`, issue 14). What must hold: every call returns what ml-matrix computes for the
 * matrix as it is NOW — after the caller changed it in place, flipped a zero's sign, or wrote into
 * the factors an earlier call returned — and whatever the order of calls with and without vectors,
 * over more matrices than are kept. Compared with Object.is against ml-matrix (the oracle ./gkr.ts
 * reproduces bit for bit).
 */
import { Matrix, randomMatrix } from "@randattn/core";
import { exactSingularValues, exactSvd } from "@randattn/sketch";
import { SVD, Matrix as MlMatrix } from "ml-matrix";
import { describe, expect, it } from "vitest";

/** ml-matrix's thin SVD of a as exactSvd lays it out (σ already decreasing for these inputs). */
function oracle(a: Matrix) {
  const ml = new MlMatrix(Array.from({ length: a.rows }, (_, i) => Array.from(a.data.subarray(i * a.cols, (i + 1) * a.cols))));
  const svd = new SVD(ml, { autoTranspose: true });
  const r = Math.min(a.rows, a.cols);
  const U = Float64Array.from({ length: a.rows * r }, (_, q) => svd.leftSingularVectors.get(Math.floor(q / r), q % r));
  const Vt = Float64Array.from({ length: r * a.cols }, (_, q) => svd.rightSingularVectors.get(q % a.cols, Math.floor(q / a.cols)));
  return { S: Float64Array.from(svd.diagonal), U, Vt };
}

const same = (x: ArrayLike<number>, y: ArrayLike<number>) => x.length === y.length && Array.from(x).every((v, i) => Object.is(v, y[i]));

function expectOracle(a: Matrix) {
  const o = oracle(a);
  const r = exactSvd(a);
  expect(same(r.S, o.S)).toBe(true);
  expect(same(r.U.data, o.U)).toBe(true);
  expect(same(r.Vt.data, o.Vt)).toBe(true);
  expect(same(exactSingularValues(a), o.S)).toBe(true);
}

describe("exactSvd's remembered SVDs", () => {
  it("a matrix changed in place after a call is factored afresh", () => {
    const a = randomMatrix(40, 12, {}, ["memo", "a"]);
    expectOracle(a);
    a.data[123] += 0.5;
    expectOracle(a);
    a.data[123] -= 0.5; // back to the first content: the first result again
    expectOracle(a);
  });

  it("+0 and −0 are different inputs", () => {
    const a = randomMatrix(9, 7, {}, ["memo", "zero"]);
    for (let j = 0; j < 7; j++) a.data[2 * 7 + j] = 0; // a zero row
    expectOracle(a);
    for (let j = 0; j < 7; j++) a.data[2 * 7 + j] = -0;
    expectOracle(a);
  });

  it("writing into returned factors does not reach a later call", () => {
    const a = randomMatrix(30, 10, {}, ["memo", "w"]);
    const first = exactSvd(a, { rank: 4 });
    first.U.data.fill(7);
    first.S.fill(7);
    first.Vt.data.fill(7);
    exactSingularValues(a).fill(7);
    expectOracle(a);
  });

  it("calls with and without vectors, over more matrices than are kept, in any order", () => {
    const ms = [0, 1, 2, 3].map((i) => randomMatrix(20 + i, 6 + i, {}, ["memo", "many", i]));
    const oracles = ms.map(oracle);
    for (const i of [0, 1, 2, 0, 3, 1, 1, 2, 0, 3, 3]) {
      expect(same(exactSingularValues(ms[i]), oracles[i].S)).toBe(true);
      const r = exactSvd(ms[i], { rank: 3 });
      expect(same(r.S, oracles[i].S.subarray(0, 3))).toBe(true);
      const k = Math.min(ms[i].rows, ms[i].cols);
      const u3 = Float64Array.from({ length: ms[i].rows * 3 }, (_, q) => oracles[i].U[Math.floor(q / 3) * k + (q % 3)]);
      expect(same(r.U.data, u3)).toBe(true);
    }
  });

  it("the same shape with other entries is another matrix (a view into a larger buffer included)", () => {
    const big = randomMatrix(2, 5 * 4, {}, ["memo", "views"]);
    const a = new Matrix(5, 4, big.data.subarray(0, 20));
    const b = new Matrix(5, 4, big.data.subarray(20, 40));
    expectOracle(a);
    expectOracle(b);
    expectOracle(a);
  });
});
