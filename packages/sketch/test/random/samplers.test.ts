import { RandomStream, ValueError } from "@randattn/core";
import { describe, expect, it } from "vitest";
import { gaussianArray, rademacherArray, randomPermutation, uniformArray, uniformIntegers, uniformSubset } from "@randattn/sketch";
import { checkMean, chiSquareQuantile, chiSquareStatistic, counts } from "../helpers/stats.js";

const N = 20_000;

describe("elementary samplers", () => {
  it("gaussianArray has mean μ and variance σ² (known-σ bounds) and equals core's stream", () => {
    const x = gaussianArray(N, { mean: 2, std: 3 }, [7, "g"]);
    expect(checkMean(x, 2, { knownStd: 3, comparisons: 2 }).ok).toBe(true);
    // (X − μ)² has mean σ² and standard deviation σ²√2 for a normal X.
    const sq = Array.from(x, (v) => (v - 2) ** 2);
    expect(checkMean(sq, 9, { knownStd: 9 * Math.SQRT2, comparisons: 2 }).ok).toBe(true);
    const rng = new RandomStream([7, "g"]);
    for (let i = 0; i < 10; i++) expect(x[i]).toBe(2 + 3 * rng.gaussian());
  });

  it("rademacherArray is ±c with probability ½ (known σ = c)", () => {
    const x = rademacherArray(N, { magnitude: 0.5 }, [7, "r"]);
    expect(x.every((v) => v === 0.5 || v === -0.5)).toBe(true);
    expect(checkMean(x, 0, { knownStd: 0.5 }).ok).toBe(true);
  });

  it("uniformArray lies in [low, high) with mean (low+high)/2 and σ = (high−low)/√12", () => {
    const x = uniformArray(N, { low: -1, high: 3 }, [7, "u"]);
    expect(x.every((v) => v >= -1 && v < 3)).toBe(true);
    expect(checkMean(x, 1, { knownStd: 4 / Math.sqrt(12) }).ok).toBe(true);
  });

  it("uniformIntegers pass a χ² goodness-of-fit test", () => {
    const x = uniformIntegers(N, { upper: 10 }, [7, "i"]);
    const stat = chiSquareStatistic(counts(x, 10), new Float64Array(10).fill(0.1));
    expect(stat).toBeLessThan(chiSquareQuantile(1e-3, 9));
  });

  it("uniformSubset gives distinct indices, each included with probability count/n (both code paths)", () => {
    for (const [n, k] of [
      [10, 4], // dense Fisher–Yates path (4k ≥ n)
      [1000, 3], // sparse map path
    ]) {
      const trials = 2000;
      const inc = new Float64Array(n);
      for (let t = 0; t < trials; t++) {
        const s = uniformSubset(n, { count: k }, [7, "sub", n, t]);
        expect(new Set(s).size).toBe(k);
        for (const j of s) inc[j]++;
      }
      if (n === 10) {
        // Each index is a Bernoulli(k/n) per trial.
        const p = k / n;
        for (let j = 0; j < n; j++) expect(Math.abs(inc[j] / trials - p)).toBeLessThan(4.1 * Math.sqrt((p * (1 - p)) / trials));
      } else {
        // First draw is uniform on [0, n): its mean is (n−1)/2 with σ = n/√12.
        const first = Array.from({ length: trials }, (_, t) => uniformSubset(n, { count: k }, [7, "sub", n, t])[0]);
        expect(checkMean(first, (n - 1) / 2, { knownStd: n / Math.sqrt(12) }).ok).toBe(true);
      }
    }
    expect(Array.from(randomPermutation(6, [1, "perm"])).sort()).toEqual([0, 1, 2, 3, 4, 5]);
  });

  it("draws are pure functions of the key", () => {
    expect(gaussianArray(5, {}, [1, "a"])).toEqual(gaussianArray(5, {}, [1, "a"]));
    expect(gaussianArray(5, {}, [1, "a"])).not.toEqual(gaussianArray(5, {}, [1, "b"]));
    expect(uniformSubset(50, { count: 5 }, [1, "a"])).toEqual(uniformSubset(50, { count: 5 }, [1, "a"]));
  });

  it("rejects bad parameters, naming the argument", () => {
    expect(() => gaussianArray(-1, {}, [1])).toThrow(/length: expected an integer ≥ 0, got -1/);
    expect(() => gaussianArray(3, { std: -1 }, [1])).toThrow(ValueError);
    expect(() => rademacherArray(3, { magnitude: 0 }, [1])).toThrow(/options.magnitude: expected a number > 0, got 0/);
    expect(() => uniformArray(3, { low: 2, high: 1 }, [1])).toThrow(/options.high: expected a number > options.low = 2, got 1/);
    expect(() => uniformIntegers(3, { upper: 0 }, [1])).toThrow(/upper/);
    expect(() => uniformSubset(5, { count: 6 }, [1])).toThrow(/count: expected an integer in \[0, 5\], got 6/);
    expect(() => gaussianArray(3, {}, [] as unknown as [number])).toThrow(/seed/);
  });
});
