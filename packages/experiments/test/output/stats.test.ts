import { describe, expect, it } from "vitest";
import { studentTCdf, studentTQuantile, summarize } from "@randattn/experiments/internal";

describe("summary statistics", () => {
  it("t quantiles match the closed forms for 1 and 2 degrees of freedom", () => {
    // df = 1 (Cauchy): t_p = tan(π(p − ½)); df = 2: t_p = (2p − 1)/√(2p(1 − p)).
    for (const p of [0.9, 0.975, 0.995]) {
      const t1 = Math.tan(Math.PI * (p - 0.5));
      const t2 = (2 * p - 1) / Math.sqrt(2 * p * (1 - p));
      expect(Math.abs(studentTQuantile(p, 1) - t1)).toBeLessThan(1e-9 * t1);
      expect(Math.abs(studentTQuantile(p, 2) - t2)).toBeLessThan(1e-9 * t2);
    }
  });

  it("the t CDF tends to the normal CDF (Φ(1.959963984540054) = 0.975)", () => {
    expect(studentTCdf(1.959963984540054, 1_000_000)).toBeCloseTo(0.975, 6);
    expect(studentTCdf(0, 5)).toBe(0.5);
  });

  it("summarize: mean, sample std, median, t interval", () => {
    const s = summarize([1, 2, 3, 4, 10]);
    expect(s.mean).toBe(4);
    expect(s.median).toBe(3);
    const std = Math.sqrt(((1 - 4) ** 2 + (2 - 4) ** 2 + (3 - 4) ** 2 + 0 + 36) / 4);
    expect(s.std).toBeCloseTo(std, 14);
    const half = studentTQuantile(0.975, 4) * (std / Math.sqrt(5));
    expect(s.ciLow).toBeCloseTo(4 - half, 12);
    expect(s.ciHigh).toBeCloseTo(4 + half, 12);
    expect(summarize([7]).ciLow).toBeNull();
    expect(summarize([]).mean).toBeNull();
  });

  it("summarize's interval uses t_{0.975, n−1} of its own n, bit for bit, whatever sizes came before (its quantiles are kept by df)", () => {
    const sizes = [3, 2, 6, 3, 11, 2, 6, 4, 3];
    sizes.forEach((n, k) => {
      const values = Array.from({ length: n }, (_, i) => Math.sin(7 * i + k) + 0.1 * i);
      const s = summarize(values);
      const half = studentTQuantile(0.975, n - 1) * (s.std! / Math.sqrt(n));
      expect(Object.is(s.ciLow, s.mean! - half)).toBe(true);
      expect(Object.is(s.ciHigh, s.mean! + half)).toBe(true);
    });
  });
});
