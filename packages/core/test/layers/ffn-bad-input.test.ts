import { describe, expect, it } from "vitest";
import { Matrix, NonFiniteError, NumericalError, ShapeError, ValueError, feedForward, initFfn } from "@randattn/core";

describe("feedForward / initFfn reject bad input", () => {
  const w = initFfn({ kind: "swiglu", dModel: 4, dHidden: 6 }, [1]);
  it("x width ≠ W₁ rows", () => {
    expect(() => feedForward(Matrix.zeros(3, 5), w)).toThrow(ShapeError);
    expect(() => feedForward(Matrix.zeros(3, 5), w)).toThrow("x: expected *×4 (cols = weights.w1.rows), got 3×5");
  });
  it("NaN in x, empty x", () => {
    const x = Matrix.zeros(2, 4);
    x.data[5] = Number.NaN;
    expect(() => feedForward(x, w)).toThrow(NonFiniteError);
    expect(() => feedForward(Matrix.zeros(0, 4), w)).toThrow("x: expected at least 1 row and 1 column, got 0×4");
  });
  it("inconsistent weights", () => {
    expect(() => feedForward(Matrix.zeros(1, 4), { ...w, v: undefined })).toThrow(
      'weights.v: expected 4×6 (same shape as weights.w1 for kind "swiglu"), got undefined',
    );
    expect(() => feedForward(Matrix.zeros(1, 4), { ...w, w2: Matrix.zeros(5, 4) })).toThrow(
      "weights.w2: expected 6×* (rows = weights.w1.cols), got 5×4",
    );
    expect(() => feedForward(Matrix.zeros(1, 4), { ...w, b2: new Float64Array(3) })).toThrow("weights.b2: expected length 4, got length 3");
    expect(() => feedForward(Matrix.zeros(1, 4), { ...w, kind: "relu" })).toThrow(
      'weights.v: expected undefined for the non-gated kind "relu"',
    );
  });
  it("non-finite weights surface as a NumericalError, not a NaN output", () => {
    const w2 = w.w2.clone();
    w2.data[3] = Number.POSITIVE_INFINITY;
    expect(() =>
      feedForward(
        Matrix.from(2, 4, (i, j) => i + j + 1),
        { ...w, w2 },
      ),
    ).toThrow(NumericalError);
    expect(() =>
      feedForward(
        Matrix.from(2, 4, (i, j) => i + j + 1),
        { ...w, w2 },
      ),
    ).toThrow("weights: expected finite FFN weights and outputs");
  });
  it("bad config values", () => {
    expect(() => initFfn({ kind: "mish" as never, dModel: 4, dHidden: 4 }, [1])).toThrow(ValueError);
    expect(() => initFfn({ kind: "relu", dModel: 4, dHidden: 0 }, [1])).toThrow("config.dHidden: expected an integer ≥ 1, got 0");
    expect(() => initFfn({ kind: "relu", dModel: 2.5, dHidden: 4 }, [1])).toThrow("config.dModel: expected an integer ≥ 1, got 2.5");
  });
});
