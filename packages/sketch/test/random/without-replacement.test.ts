import { describe, expect, it } from "vitest";
import { inclusionProbabilities, sampleWithoutReplacement, systematicSample } from "@randattn/sketch";
import { bonferroniZ, chiSquareQuantile, chiSquareStatistic } from "../helpers/stats.js";

const p = [0.1, 0.2, 0.3, 0.4];
const n = p.length;
const trials = 20_000;

describe("Efraimidis–Spirakis sampling without replacement", () => {
  it("ordered pairs follow successive sampling: P(i then j) = p_i·p_j/(1 − p_i)", () => {
    const observed = new Float64Array(n * n);
    const expected = new Float64Array(n * n);
    for (let i = 0; i < n; i++) for (let j = 0; j < n; j++) if (i !== j) expected[i * n + j] = (p[i] * p[j]) / (1 - p[i]);
    for (let t = 0; t < trials; t++) {
      const s = sampleWithoutReplacement(p, { count: 2 }, [5, "es", t]);
      expect(s[0]).not.toBe(s[1]);
      observed[s[0] * n + s[1]]++;
    }
    // 12 non-empty cells → df 11
    expect(chiSquareStatistic(observed, expected)).toBeLessThan(chiSquareQuantile(1e-3, 11));
  });

  it("never returns zero-probability indices and refuses count > support", () => {
    const q = [0.5, 0, 0.5];
    for (let t = 0; t < 50; t++) expect(Array.from(sampleWithoutReplacement(q, { count: 2 }, [1, t])).sort()).toEqual([0, 2]);
    expect(() => sampleWithoutReplacement(q, { count: 3 }, [1])).toThrow(/count: expected an integer in \[0, 2\], got 3/);
  });
});

describe("randomized systematic πps sampling", () => {
  it("inclusionProbabilities: π_j = min(1, c·p_j), Σ π = count, certainty units capped at 1", () => {
    const pi = inclusionProbabilities(p, 2);
    expect(pi.reduce((a, b) => a + b, 0)).toBeCloseTo(2, 14);
    for (let j = 0; j < n; j++) expect(pi[j]).toBeCloseTo(2 * p[j], 14);
    const capped = inclusionProbabilities([0.7, 0.1, 0.1, 0.1], 2);
    expect(capped[0]).toBe(1);
    for (let j = 1; j < 4; j++) expect(capped[j]).toBeCloseTo(1 / 3, 14);
    expect(Array.from(inclusionProbabilities([0.25, 0.25, 0.25, 0.25], 4))).toEqual([1, 1, 1, 1]);
  });

  it("each index is included with frequency π_j (Bonferroni binomial bound), samples are distinct", () => {
    for (const [probs, count] of [
      [p, 2],
      [[0.7, 0.1, 0.1, 0.1], 2],
      [[0.05, 0.15, 0.3, 0.1, 0.4], 3],
    ] as const) {
      const pi = inclusionProbabilities(probs, count);
      const freq = new Float64Array(probs.length);
      const T = 5000;
      for (let t = 0; t < T; t++) {
        const { indices } = systematicSample(probs, { count }, [9, "sys", t]);
        expect(new Set(indices).size).toBe(count);
        for (const j of indices) freq[j]++;
      }
      const z = bonferroniZ(1e-3, probs.length);
      for (let j = 0; j < probs.length; j++) {
        const sd = Math.sqrt((pi[j] * (1 - pi[j])) / T);
        expect(Math.abs(freq[j] / T - pi[j])).toBeLessThanOrEqual(z * sd + 1e-12);
      }
    }
  });

  it("rejects a count larger than the support", () => {
    expect(() => inclusionProbabilities([0.5, 0.5, 0], 3)).toThrow(/count: expected an integer in \[1, 2\], got 3/);
  });
});
