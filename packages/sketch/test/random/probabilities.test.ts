import { NonFiniteError, ShapeError, ValueError } from "@randattn/core";
import { describe, expect, it } from "vitest";
import { normalizeWeights, validateProbabilities } from "@randattn/sketch";

describe("probability vectors", () => {
  it("validateProbabilities accepts a distribution and returns it unchanged (no renormalization)", () => {
    const p = [0.25, 0.25, 0.5 + 1e-12];
    expect(Array.from(validateProbabilities(p))).toEqual(p);
  });

  it("validateProbabilities rejects sums off 1, negatives, non-finite and empty input", () => {
    expect(() => validateProbabilities([0.5, 0.6])).toThrow(/probabilities: expected entries summing to 1 \(±1e-9\).*got sum 1.1/);
    expect(() => validateProbabilities([0.5, 0.6], "p", { tolerance: 0.2 })).not.toThrow();
    expect(() => validateProbabilities([1.5, -0.5])).toThrow(/non-negative entries, got -0.5 at \[1\]/);
    expect(() => validateProbabilities([Number.NaN, 1])).toThrow(NonFiniteError);
    expect(() => validateProbabilities([])).toThrow(ShapeError);
    expect(() => validateProbabilities([1], "p", { tolerance: -1 })).toThrow(ValueError);
  });

  it("normalizeWeights divides by the sum (stable for huge weights) and rejects all-zero input", () => {
    const w = [1, 3, 0, 4];
    const p = normalizeWeights(w);
    for (let j = 0; j < w.length; j++) expect(p[j]).toBeCloseTo(w[j] / 8, 15);
    const big = normalizeWeights([1e308, 1e308]);
    expect(Array.from(big)).toEqual([0.5, 0.5]);
    expect(() => normalizeWeights([0, 0])).toThrow(/weights: expected at least one positive weight, got all zero/);
    expect(() => normalizeWeights([1, -1])).toThrow(ValueError);
    expect(() => normalizeWeights([1, Number.POSITIVE_INFINITY])).toThrow(NonFiniteError);
  });
});
