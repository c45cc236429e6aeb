import { ShapeError, ValueError, getKernelBackend, setKernelBackend } from "@randattn/core";
import { powerIterationEigenvalue, powerIterationEigenvalueJs, symmetricMaxEigenvalueJs } from "@randattn/core/internal";
import seedrandom from "seedrandom";
import { afterAll, describe, expect, it } from "vitest";

// The power iteration behind the experiments' spectral norm past the Jacobi sizes: its value is in
// committed results (frontier's ‖D⁻¹A‖₂ at n = 512), so the one-row SIMD kernel form must give the
// JavaScript loops' bits, not merely their value. Checked bit for bit on Gram matrices (the metric's
// input) and on matrices that are NOT symmetric (the kernel reads gᵀ's panels: a layout slip that
// transposed g would pass on symmetric inputs only), n not a multiple of 4 (a padded panel) and odd
// panel counts (the kernel's pair-then-one passes). And as an eigenvalue: on a Gram matrix with a
// spectral gap λ₂/λ₁ ≤ 0.5, 200 steps converge to λ₁ (the Jacobi reference) to 1e-12 relative.
const previous = getKernelBackend();
afterAll(() => setKernelBackend(previous));

function matrix(n: number, seed: string, kind: "gram" | "general" | "gap"): Float64Array {
  const rng = seedrandom(seed);
  if (kind === "general") return Float64Array.from({ length: n * n }, () => rng() - 0.5);
  const rows = n + 5;
  const x = Array.from({ length: rows * n }, () => rng() - 0.5);
  if (kind === "gap") for (let r = 0; r < rows; r++) x[r * n] = 4 * (rng() + 1); // one dominant direction
  const g = new Float64Array(n * n);
  for (let i = 0; i < n; i++) for (let j = 0; j < n; j++) for (let r = 0; r < rows; r++) g[i * n + j] += x[r * n + i] * x[r * n + j];
  return g;
}

const bits = (x: number) => new BigUint64Array(Float64Array.of(x).buffer)[0];

describe("powerIterationEigenvalue: the one-row kernel ≡ the JavaScript loops", () => {
  for (const [n, kind] of [
    [1, "gram"],
    [5, "general"],
    [9, "gram"],
    [12, "general"],
    [257, "gram"],
    [300, "general"],
  ] as const) {
    it(`n = ${n}, ${kind}: the same bits`, () => {
      const g = matrix(n, `pi-${n}-${kind}`, kind);
      const copy = g.slice();
      const want = powerIterationEigenvalueJs(g, n, 200);
      setKernelBackend("auto");
      const got = powerIterationEigenvalue(g, n, 200);
      expect(bits(got)).toBe(bits(want));
      expect(g).toEqual(copy); // not modified
      setKernelBackend("scalar");
      expect(bits(powerIterationEigenvalue(g, n, 200))).toBe(bits(want));
      setKernelBackend(previous);
    });
  }

  it("converges to λ_max of a Gram matrix with a spectral gap (Jacobi reference)", () => {
    const n = 260;
    const g = matrix(n, "pi-gap", "gap");
    const exact = symmetricMaxEigenvalueJs(g, n);
    expect(Math.abs(powerIterationEigenvalue(g, n, 200) - exact) / exact).toBeLessThan(1e-12);
  });

  it("a zero matrix gives 0; bad arguments are refused by name", () => {
    expect(powerIterationEigenvalue(new Float64Array(16), 4, 200)).toBe(0);
    expect(() => powerIterationEigenvalue(new Float64Array(8), 3, 10)).toThrow(ShapeError);
    expect(() => powerIterationEigenvalue(new Float64Array(9), 3, 0)).toThrow(ValueError);
    expect(() => powerIterationEigenvalue(new Float64Array(9), 1.5, 10)).toThrow(/n/);
  });
});
