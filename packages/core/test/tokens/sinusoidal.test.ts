import { describe, expect, it } from "vitest";
import { ValueError, sinusoidalPositionalEncoding } from "@randattn/core";

// Vaswani et al. (2017) §3.5: PE[p, 2i] = sin(p / 10000^{2i/d}), PE[p, 2i+1] = cos(p / 10000^{2i/d}).
function literal(p: number, k: number, d: number, base = 10000): number {
  const i = Math.floor(k / 2);
  const angle = p / base ** ((2 * i) / d);
  return k % 2 === 0 ? Math.sin(angle) : Math.cos(angle);
}

describe("sinusoidal positional encoding", () => {
  it("matches the literal formula (even and odd d, custom base, offset)", () => {
    for (const [n, d] of [
      [1, 1],
      [7, 8],
      [50, 16],
      [9, 5],
    ]) {
      const pe = sinusoidalPositionalEncoding(n, d);
      for (let p = 0; p < n; p++) for (let k = 0; k < d; k++) expect(Math.abs(pe.get(p, k) - literal(p, k, d))).toBeLessThanOrEqual(1e-12);
    }
    const shifted = sinusoidalPositionalEncoding(4, 6, { offset: 100, base: 500 });
    for (let p = 0; p < 4; p++)
      for (let k = 0; k < 6; k++) expect(Math.abs(shifted.get(p, k) - literal(100 + p, k, 6, 500))).toBeLessThanOrEqual(1e-12);
  });

  it("position 0 is (0, 1, 0, 1, …) and every (sin, cos) pair has unit norm", () => {
    const pe = sinusoidalPositionalEncoding(32, 12);
    expect(Array.from(pe.row(0))).toEqual([0, 1, 0, 1, 0, 1, 0, 1, 0, 1, 0, 1]);
    for (let p = 0; p < 32; p++)
      for (let i = 0; i < 6; i++) expect(Math.abs(pe.get(p, 2 * i) ** 2 + pe.get(p, 2 * i + 1) ** 2 - 1)).toBeLessThan(1e-15);
  });

  it("rejects bad sizes", () => {
    expect(sinusoidalPositionalEncoding(0, 4).shape).toBe("0×4");
    expect(() => sinusoidalPositionalEncoding(4, 0)).toThrow(/dim: expected an integer ≥ 1, got 0/);
    expect(() => sinusoidalPositionalEncoding(-1, 4)).toThrow(ValueError);
    expect(() => sinusoidalPositionalEncoding(4, 4, { base: 0 })).toThrow(/options\.base: expected a number > 0/);
    expect(() => sinusoidalPositionalEncoding(4, 4, { offset: 0.5 })).toThrow(/options\.offset/);
  });
});
