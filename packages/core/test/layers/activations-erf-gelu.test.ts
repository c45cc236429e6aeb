import { describe, expect, it } from "vitest";
import { erf, gelu, geluTanh } from "@randattn/core";

// Independent oracle: erf(x) = (2/√π) e^{−x²} Σ_{n≥0} 2ⁿ x^{2n+1} / (1·3·5···(2n+1)).
// All terms are positive (no cancellation), so it is accurate to a few ulps for any x.
function erfSeries(x: number): number {
  let term = x;
  let sum = x;
  for (let n = 1; n < 2000; n++) {
    term *= (2 * x * x) / (2 * n + 1);
    sum += term;
    if (Math.abs(term) < 1e-18 * Math.abs(sum)) break;
  }
  return (2 / Math.sqrt(Math.PI)) * Math.exp(-x * x) * sum;
}

const xs: number[] = [];
for (let x = -6; x <= 6; x += 0.0625 * 1.37) xs.push(x);
xs.push(0, 1e-10, -1e-10, 0.46875, 0.4687500001, 4, 4.0000001, 0.5, 2.5);

describe("erf (Cody's rational approximations)", () => {
  it("agrees with the positive-term series to ≤ 1e-14 relative", () => {
    for (const x of xs) {
      const ref = erfSeries(x);
      const err = Math.abs(erf(x) - ref) / Math.max(Math.abs(ref), 1e-300);
      expect(err, `x = ${x}`).toBeLessThan(1e-14);
    }
  });
  it("is odd, 2x/√π at 0, and saturates to ±1", () => {
    for (const x of xs) expect(erf(-x)).toBe(-erf(x));
    expect(erf(1e-200)).toBe((2 / Math.sqrt(Math.PI)) * 1e-200);
    expect(erf(40)).toBe(1);
    expect(erf(Number.NEGATIVE_INFINITY)).toBe(-1);
  });
});

describe("GELU, exact and tanh forms", () => {
  it("exact: ½ x (1 + erf(x/√2))", () => {
    for (const x of xs) {
      const ref = 0.5 * x * (1 + erfSeries(x / Math.SQRT2));
      // absolute scale: for x ≪ 0 both sides cancel in 1 + erf(·) the same way
      expect(Math.abs(gelu(x) - ref), `x = ${x}`).toBeLessThan(4e-16 * (1 + Math.abs(x)));
    }
  });
  it("tanh: ½ x (1 + tanh(√(2/π)(x + 0.044715 x³))) and within 1e-3 of the exact form", () => {
    for (const x of xs) {
      const ref = 0.5 * x * (1 + Math.tanh(Math.sqrt(2 / Math.PI) * (x + 0.044715 * x ** 3)));
      expect(Math.abs(geluTanh(x) - ref)).toBeLessThan(4e-16 * (1 + Math.abs(x)));
      // the approximation's documented max error is ≈ 5e-4 (Hendrycks & Gimpel)
      expect(Math.abs(geluTanh(x) - gelu(x))).toBeLessThan(1e-3);
    }
    // and it is an approximation: the two differ somewhere by more than rounding
    expect(Math.max(...xs.map((x) => Math.abs(geluTanh(x) - gelu(x))))).toBeGreaterThan(1e-5);
  });
});
