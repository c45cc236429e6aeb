/** Bad inputs to the low-rank routines: typed errors naming argument, expected and actual. */
import { Matrix, NonFiniteError, ShapeError, ValueError, randomMatrix } from "@randattn/core";
import { describe, expect, it } from "vitest";
import { gaussianSketch } from "../../src/operators/index.js";
import { blockedQb, exactSvd, householderQr, luLowerFactor, qb, randomizedSvd, rangeFinder } from "../../src/lowrank/index.js";

function caught(f: () => unknown): { name: string; argument: string; expected: string; actual: string } {
  try {
    f();
  } catch (e) {
    return e as never;
  }
  throw new Error("did not throw");
}

describe("lowrank/ argument validation", () => {
  const a = randomMatrix(20, 12, {}, [1]);
  it("rank outside [1, min(m, n)], negative oversampling / power iterations, unknown modes", () => {
    for (const f of [rangeFinder, qb, randomizedSvd]) {
      expect(caught(() => f(a, { rank: 13 }, [1]))).toMatchObject({
        name: "ValueError",
        argument: "options.rank",
        expected: "an integer in [1, 12]",
        actual: "13",
      });
      expect(caught(() => f(a, { rank: 0 }, [1]))).toMatchObject({ argument: "options.rank", actual: "0" });
      expect(caught(() => f(a, { rank: 3, oversampling: -1 }, [1]))).toMatchObject({ argument: "options.oversampling" });
      expect(caught(() => f(a, { rank: 3, powerIterations: 1.5 }, [1]))).toMatchObject({ argument: "options.powerIterations" });
      expect(caught(() => f(a, { rank: 3, orthonormalization: "gs" as never }, [1]))).toMatchObject({
        argument: "options.orthonormalization",
      });
      expect(caught(() => f(a, { rank: 3, testMatrix: "fourier" as never }, [1]))).toMatchObject({ argument: "options.testMatrix" });
      expect(caught(() => f(a, null as never, [1]))).toBeInstanceOf(ValueError);
    }
  });
  it("a test-matrix factory of the wrong shape", () => {
    expect(caught(() => rangeFinder(a, { rank: 3, oversampling: 2, testMatrix: (r) => gaussianSketch(r, 4) }, [1]))).toMatchObject({
      name: "ShapeError",
      argument: "options.testMatrix",
      expected: "a distribution of shape 12×5 (A.cols × samples)",
      actual: "12×4",
    });
  });
  it("non-finite, empty or non-Matrix inputs", () => {
    const bad = a.clone();
    bad.set(3, 4, Number.NaN);
    const e = caught(() => randomizedSvd(bad, { rank: 2 }, [1]));
    expect(e).toBeInstanceOf(NonFiniteError);
    expect(e.actual).toContain("[3, 4]");
    expect(caught(() => qb(new Matrix(0, 3), { rank: 1 }, [1]))).toBeInstanceOf(ShapeError);
    expect(caught(() => rangeFinder([[1, 2]] as never, { rank: 1 }, [1]))).toMatchObject({ name: "ShapeError", argument: "a" });
    expect(caught(() => exactSvd(a, { rank: 20 }))).toMatchObject({ argument: "options.rank", actual: "20" });
  });
  it("householderQr / luLowerFactor refuse wide matrices", () => {
    expect(caught(() => householderQr(randomMatrix(3, 5, {}, [2])))).toMatchObject({ name: "ShapeError", argument: "a", actual: "3×5" });
    expect(caught(() => luLowerFactor(randomMatrix(3, 5, {}, [2])))).toMatchObject({ name: "ShapeError", argument: "a" });
  });
  it("blockedQb options", () => {
    expect(caught(() => blockedQb(a, { tolerance: 0 }, [1]))).toMatchObject({ argument: "options.tolerance", expected: "a number > 0" });
    expect(caught(() => blockedQb(a, { tolerance: 2 }, [1]))).toMatchObject({ argument: "options.tolerance" });
    expect(caught(() => blockedQb(a, { tolerance: 0.1, blockSize: 0 }, [1]))).toMatchObject({ argument: "options.blockSize" });
    expect(caught(() => blockedQb(a, { tolerance: 0.1, maxRank: 50 }, [1]))).toMatchObject({ argument: "options.maxRank", actual: "50" });
  });
});
