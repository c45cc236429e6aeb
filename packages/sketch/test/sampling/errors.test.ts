import { Matrix, NonFiniteError, NumericalError, ShapeError, ValueError, dotKernel } from "@randattn/core";
import { describe, expect, it } from "vitest";
import { dkmExpectedSquaredError, sampledAttention, sampledMatmul, sampledValueProduct } from "@randattn/sketch";
import { keys, queries, values, weightsP } from "./fixtures.js";

describe("invalid parameters raise typed errors naming argument, expected and actual", () => {
  it("s = 0, s > N without replacement, non-integer s", () => {
    expect(() => sampledValueProduct(weightsP, values, { samples: 0 }, [1])).toThrow(/s: expected an integer ≥ 1, got 0/);
    expect(() => sampledValueProduct(weightsP, values, { samples: 25, design: "horvitz-thompson" }, [1])).toThrow(
      /s: expected an integer in \[1, 24\], got 25/,
    );
    expect(() => sampledAttention(queries, keys, values, { samples: 30, design: "des-raj" }, [1])).toThrow(ValueError);
    expect(() => sampledMatmul(weightsP, values, { samples: 2.5, probabilities: "uniform" }, [1])).toThrow(
      /s: expected an integer ≥ 1, got 2.5/,
    );
    // with replacement, s > N is fine
    expect(sampledValueProduct(weightsP, values, { samples: 50 }, [1]).indices.length).toBe(50);
  });

  it("probabilities that do not sum to 1, of the wrong length, negative, or unknown names", () => {
    const bad = new Float64Array(24).fill(0.05);
    expect(() => sampledMatmul(weightsP, values, { samples: 3, probabilities: bad }, [1])).toThrow(
      /probabilities: expected entries summing to 1.*got sum 1.2/,
    );
    expect(() => sampledMatmul(weightsP, values, { samples: 3, probabilities: [0.5, 0.5] }, [1])).toThrow(
      /probabilities: expected length 24 \(a.cols\), got length 2/,
    );
    expect(() => sampledMatmul(weightsP, values, { samples: 3, probabilities: "best" as "uniform" }, [1])).toThrow(ShapeError);
    expect(() =>
      dkmExpectedSquaredError(
        weightsP,
        values,
        3,
        new Float64Array(24).fill(1 / 24).map((_v, j) => (j === 0 ? 0 : 1 / 23)),
      ),
    ).toThrow(/probabilities: expected p > 0 wherever the outer product is nonzero, got p = 0 at \[0\]/);
  });

  it("mismatched shapes and non-finite inputs", () => {
    expect(() => sampledMatmul(weightsP, new Matrix(23, 3), { samples: 3, probabilities: "uniform" }, [1])).toThrow(
      /b: expected 24×\* \(rows = a.cols\), got 23×3/,
    );
    expect(() => sampledAttention(queries, new Matrix(24, 5), values, { samples: 3 }, [1])).toThrow(
      /keys: expected \*×4 \(cols = queries.cols = d_QK\), got 24×5/,
    );
    expect(() => sampledAttention(queries, keys, new Matrix(20, 3), { samples: 3 }, [1])).toThrow(
      /values: expected 24×\* \(rows = keys.rows = N_KV\), got 20×3/,
    );
    const nan = values.clone();
    nan.data[4] = Number.NaN;
    expect(() => sampledValueProduct(weightsP, nan, { samples: 3 }, [1])).toThrow(NonFiniteError);
    expect(() => sampledValueProduct(weightsP, nan, { samples: 3 }, [1])).toThrow(/values: expected finite entries, got NaN at \[1, 1\]/);
  });

  it("bad options and negative weights where weights must be ≥ 0", () => {
    expect(() => sampledValueProduct(weightsP, values, { samples: 3, scheme: "lucky" as "uniform" }, [1])).toThrow(
      /options.scheme: expected one of/,
    );
    expect(() => sampledAttention(queries, keys, values, { samples: 3, normalizer: "maybe" as "exact" }, [1])).toThrow(
      /options.normalizer/,
    );
    expect(() => sampledAttention(queries, keys, values, { samples: 3, blockSize: 0 }, [1])).toThrow(/options.blockSize/);
    const neg = weightsP.clone();
    neg.data[2] = -0.1;
    expect(() => sampledValueProduct(neg, values, { samples: 3, scheme: "attention" }, [1])).toThrow(
      /weights: expected non-negative entries.*got -0.1 at \[0, 2\]/,
    );
  });

  // Since stop 24 the per-query draw with replacement checks W's entries row by row in its own max
  // pass (perQuery.ts) instead of two passes over all of W first; a bad entry anywhere must still
  // raise the whole-matrix checks' error — the first non-finite entry before any negative one —
  // exactly as a design that checks first (Horvitz–Thompson) raises it.
  it("the per-query draw's row checks raise the whole-matrix checks' errors (NaN, ±∞, negatives, in any row)", () => {
    const nQ = 70; // past one random stream's 64 queries
    const n = 24;
    const base = new Matrix(
      nQ,
      n,
      Float64Array.from({ length: nQ * n }, (_, i) => 0.01 + ((i * 7919) % 97) / 97),
    );
    const v = new Matrix(
      n,
      3,
      Float64Array.from({ length: n * 3 }, (_, i) => Math.sin(i)),
    );
    const cases: [string, [number, number][]][] = [
      ["NaN in the first row", [[0, Number.NaN]]],
      ["+∞ in the last row", [[nQ * n - 1, Number.POSITIVE_INFINITY]]],
      ["−∞ in a row's tail", [[5 * n + 22, Number.NEGATIVE_INFINITY]]],
      ["a negative in row 66", [[66 * n + 3, -1e-300]]],
      [
        "a negative before a NaN",
        [
          [2 * n, -0.5],
          [40 * n + 7, Number.NaN],
        ],
      ],
      [
        "a NaN before a negative",
        [
          [3 * n + 1, Number.NaN],
          [50 * n, -2],
        ],
      ],
      // an all-zero row (the draw's own error) before a later row's NaN: the NaN is named
      ["an all-zero row before a NaN", [...Array.from({ length: n }, (_, j): [number, number] => [n + j, 0]), [30 * n + 2, Number.NaN]]],
    ];
    for (const [what, spots] of cases) {
      const w = base.clone();
      for (const [at, x] of spots) w.data[at] = x;
      const error = (design: "with-replacement" | "horvitz-thompson") => {
        try {
          sampledValueProduct(w, v, { samples: 5, scheme: "attention", design }, [3]);
        } catch (e) {
          return e as Error;
        }
        return null;
      };
      const fused = error("with-replacement");
      const first = error("horvitz-thompson");
      expect(first, what).not.toBeNull();
      expect(fused?.constructor, what).toBe(first?.constructor);
      expect(fused?.message, what).toBe(first?.message);
    }
    // −0 is not negative (as before): no error, and the same draw and estimate as +0 there.
    const z = base.clone();
    z.data[9 * n + 4] = 0;
    const zNeg = z.clone();
    zNeg.data[9 * n + 4] = -0;
    const a = sampledValueProduct(z, v, { samples: 5, scheme: "attention" }, [3]);
    const b = sampledValueProduct(zNeg, v, { samples: 5, scheme: "attention" }, [3]);
    expect(Array.from(b.indices)).toEqual(Array.from(a.indices));
    expect(Array.from(b.output.data)).toEqual(Array.from(a.output.data));
  });

  it("an estimated normalizer of 0 is a NumericalError, not a NaN", () => {
    // dot kernel f = max(0, ·): a query orthogonal-or-opposite to every sampled key gets Ẑ = 0.
    const relu = dotKernel((x) => Math.max(0, x));
    const q = Matrix.fromArray([[-1, 0, 0, 0]]);
    const k = Matrix.fromArray([
      [1, 0, 0, 0],
      [2, 0, 0, 0],
    ]);
    const v = Matrix.fromArray([[1], [2]]);
    expect(() => sampledAttention(q, k, v, { samples: 2, kernel: relu }, [1])).toThrow(NumericalError);
    expect(() => sampledAttention(q, k, v, { samples: 2, kernel: relu, normalizer: "exact" }, [1])).toThrow(
      /keys: expected a key with κ > 0 for query 0, got Z = 0/,
    );
  });
});
