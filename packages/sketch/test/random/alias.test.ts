import { describe, expect, it } from "vitest";
import { AliasTable, sampleWithReplacement } from "@randattn/sketch";
import { chiSquareQuantile, chiSquareStatistic, counts } from "../helpers/stats.js";

describe("alias method (Vose), with replacement", () => {
  const p = [0.05, 0, 0.3, 0.15, 0, 0.2, 0.1, 0.2];

  it("draw frequencies pass χ² against p; zero-probability indices are never drawn", () => {
    const draws = AliasTable.fromProbabilities(p).sample({ count: 50_000 }, [3, "alias"]);
    const c = counts(draws, p.length);
    expect(c[1]).toBe(0);
    expect(c[4]).toBe(0);
    // df = support size − 1 = 5
    expect(chiSquareStatistic(c, p)).toBeLessThan(chiSquareQuantile(1e-3, 5));
  });

  it("a wrong distribution fails the same χ² test (the test has power)", () => {
    const draws = sampleWithReplacement(p, { count: 50_000 }, [3, "alias"]);
    const q = [0.1, 0, 0.25, 0.15, 0, 0.2, 0.1, 0.2];
    expect(chiSquareStatistic(counts(draws, p.length), q)).toBeGreaterThan(chiSquareQuantile(1e-3, 5));
  });

  it("a point mass always returns its index; the table is reusable and deterministic per key", () => {
    expect(Array.from(sampleWithReplacement([0, 0, 1], { count: 5 }, [1]))).toEqual([2, 2, 2, 2, 2]);
    const t = AliasTable.fromProbabilities(p);
    expect(t.size).toBe(8);
    expect(t.sample({ count: 20 }, [1, "x"])).toEqual(sampleWithReplacement(p, { count: 20 }, [1, "x"]));
    expect(t.sample({ count: 20 }, [1, "x"])).not.toEqual(t.sample({ count: 20 }, [1, "y"]));
  });

  it("rejects invalid probabilities and counts", () => {
    expect(() => AliasTable.fromProbabilities([0.5, 0.4])).toThrow(/probabilities: expected entries summing to 1/);
    expect(() => sampleWithReplacement([1], { count: -1 }, [1])).toThrow(/count: expected an integer ≥ 0, got -1/);
  });
});
