import { describe, expect, it } from "vitest";
import {
  Matrix,
  NonFiniteError,
  ShapeError,
  ValueError,
  applyNorm,
  initLayerNorm,
  initNorm,
  initRMSNorm,
  layerNorm,
  rmsNorm,
} from "@randattn/core";

describe("norms reject bad input with named argument, expected and actual", () => {
  it("width mismatch between x and γ", () => {
    expect(() => layerNorm(Matrix.zeros(2, 3), initLayerNorm(4))).toThrow(ShapeError);
    expect(() => layerNorm(Matrix.zeros(2, 3), initLayerNorm(4))).toThrow("params.gain: expected length 3 (the model width), got length 4");
    expect(() => rmsNorm(Matrix.zeros(2, 5), initRMSNorm(2))).toThrow("params.gain: expected length 5");
  });
  it("NaN / Inf entries", () => {
    const x = Matrix.fromArray([
      [1, 2],
      [3, Number.NaN],
    ]);
    expect(() => layerNorm(x, initLayerNorm(2))).toThrow(NonFiniteError);
    expect(() => rmsNorm(x, initRMSNorm(2))).toThrow("x: expected finite entries, got NaN at [1, 1]");
  });
  it("empty input and non-matrix", () => {
    expect(() => layerNorm(Matrix.zeros(0, 3), initLayerNorm(3))).toThrow("x: expected at least 1 row and 1 column, got 0×3");
    expect(() => rmsNorm([[1]] as unknown as Matrix, initRMSNorm(1))).toThrow(ShapeError);
  });
  it("bad ε, bad dim, bad kind, wrong params kind", () => {
    expect(() => initLayerNorm(3, { epsilon: 0 })).toThrow("options.epsilon: expected a number > 0, got 0");
    expect(() => initRMSNorm(3, { epsilon: Number.NaN })).toThrow(ValueError);
    expect(() => initLayerNorm(0)).toThrow("dim: expected an integer ≥ 1, got 0");
    expect(() => initNorm("batch" as never, 3)).toThrow('kind: expected one of "layer", "rms", got "batch"');
    expect(() => layerNorm(Matrix.zeros(1, 3), initRMSNorm(3) as never)).toThrow('params.kind: expected "layer", got "rms"');
    expect(() => applyNorm(Matrix.zeros(1, 3), { kind: "layer", gain: new Float64Array(3), epsilon: 1 } as never)).toThrow(
      "params.shift: expected a Float64Array, got undefined",
    );
  });
});
