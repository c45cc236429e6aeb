import { describe, expect, it } from "vitest";
import { ACTIVATIONS, Matrix, NonFiniteError, ValueError, activationFunction, applyActivation, relu, sigmoid, silu } from "@randattn/core";

const literal: Record<string, (x: number) => number> = {
  relu: (x) => Math.max(0, x),
  sigmoid: (x) => 1 / (1 + Math.exp(-x)),
  silu: (x) => x * (1 / (1 + Math.exp(-x))),
  identity: (x) => x,
};

describe("elementwise activations", () => {
  const x = Matrix.fromArray([
    [-800, -3, -0.5, 0],
    [0.25, 1, 4, 800],
  ]);
  for (const name of ["relu", "sigmoid", "silu", "identity"] as const) {
    it(`${name} = literal formula, no NaN at ±800`, () => {
      const y = applyActivation(x, name);
      for (let i = 0; i < x.data.length; i++) {
        const ref = literal[name](x.data[i]);
        expect(Math.abs(y.data[i] - ref)).toBeLessThanOrEqual(2 ** -52 * Math.abs(ref));
        expect(Number.isFinite(y.data[i])).toBe(true);
      }
    });
  }
  it("named lookup matches the exported functions", () => {
    expect(activationFunction("relu")).toBe(relu);
    expect(activationFunction("sigmoid")).toBe(sigmoid);
    expect(activationFunction("silu")).toBe(silu);
    expect(ACTIVATIONS).toContain("gelu-tanh");
  });
  it("bad input", () => {
    expect(() => applyActivation(x, "tanh" as never)).toThrow(ValueError);
    expect(() => applyActivation(x, "tanh" as never)).toThrow(
      'name: expected one of "relu", "gelu", "gelu-tanh", "sigmoid", "silu", "identity", got "tanh"',
    );
    expect(() => applyActivation(Matrix.fromArray([[Number.POSITIVE_INFINITY]]), "relu")).toThrow(NonFiniteError);
  });
});
