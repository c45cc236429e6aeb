import { describe, expect, it } from "vitest";
import { Matrix, NonFiniteError, Rope, ShapeError, ValueError, ropeFrequencies } from "@randattn/core";

describe("RoPE rejects bad input with typed, named errors", () => {
  it("odd or non-integer dimension", () => {
    expect(() => new Rope(7)).toThrow(ValueError);
    expect(() => new Rope(7)).toThrow(/dim: expected an even dimension.*got 7/);
    expect(() => new Rope(0)).toThrow(/dim: expected an integer ≥ 1, got 0/);
    expect(() => ropeFrequencies(5)).toThrow(/dim: expected an even dimension/);
  });

  it("bad base or pairing", () => {
    expect(() => new Rope(4, { base: 0 })).toThrow(/options.base: expected a number > 0, got 0/);
    expect(() => new Rope(4, { base: Number.NaN })).toThrow(ValueError);
    // biome-ignore lint/suspicious/noExplicitAny: deliberately wrong pairing
    expect(() => new Rope(4, { pairing: "rotate" as any })).toThrow(/options.pairing: expected one of "interleaved", "half", got "rotate"/);
  });

  it("wrong column count or positions length", () => {
    const rope = new Rope(4);
    expect(() => rope.apply(Matrix.zeros(2, 6), [0, 1])).toThrow(ShapeError);
    expect(() => rope.apply(Matrix.zeros(2, 6), [0, 1])).toThrow(/x: expected \*×4 \(cols = RoPE dim\), got 2×6/);
    expect(() => rope.apply(Matrix.zeros(2, 4), [0])).toThrow(/positions: expected length 2 \(x.rows\), got length 1/);
  });

  it("NaN / Inf in x or positions", () => {
    const rope = new Rope(4);
    const x = Matrix.zeros(2, 4);
    x.set(1, 2, Number.NaN);
    expect(() => rope.apply(x, [0, 1])).toThrow(NonFiniteError);
    expect(() => rope.apply(x, [0, 1])).toThrow(/x: expected finite entries, got NaN at \[1, 2\]/);
    expect(() => rope.apply(Matrix.zeros(2, 4), [0, Number.POSITIVE_INFINITY])).toThrow(
      /positions: expected finite entries, got Infinity at \[1\]/,
    );
    expect(() => rope.rotationMatrix(Number.NaN)).toThrow(/position: expected a finite number, got NaN/);
  });
});
