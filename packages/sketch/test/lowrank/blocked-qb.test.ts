/**
 * Fixed-accuracy blocked QB (randQB_b / randQB_EI): the true relative error ‖A − QB‖_F/‖A‖_F meets
 * the tolerance and equals the reported one; the rank reached is at least the Eckart–Young minimum
 * rank for that tolerance (from ml-matrix's singular values) and at most a few above it; Q is
 * orthonormal; exactly low-rank inputs stop at their rank; a zero matrix gives rank 0.
 */
import { Matrix, matmul } from "@randattn/core";
import { describe, expect, it } from "vitest";
import { blockedQb } from "../../src/lowrank/index.js";
import { frobenius, oracleSingularValues, orthonormalityDefect, spectra, tailNorm, withSpectrum } from "./spectra.js";

function trueRelError(a: Matrix, q: Matrix, b: Matrix): number {
  const x = matmul(q, b);
  let s = 0;
  for (let i = 0; i < a.data.length; i++) s += (a.data[i] - x.data[i]) ** 2;
  return Math.sqrt(s) / frobenius(a);
}

describe("blocked fixed-accuracy QB", () => {
  for (const [name, make] of Object.entries(spectra))
    for (const tolerance of [1e-1, 1e-3])
      it(`${name} spectrum, tolerance ${tolerance}`, () => {
        const a = withSpectrum(150, 100, make(100), 51);
        const sigma = oracleSingularValues(a);
        const norm = frobenius(a);
        let minRank = 0;
        while (tailNorm(sigma, minRank) > tolerance * norm) minRank++;
        const res = blockedQb(a, { tolerance, blockSize: 8, powerIterations: 1 }, [52, name]);
        if (!res.converged) {
          // Only allowed when the tolerance needs (almost) every direction.
          expect(minRank).toBeGreaterThan(95);
          return;
        }
        const err = trueRelError(a, res.Q, res.B);
        expect(err).toBeLessThanOrEqual(tolerance);
        expect(Math.abs(err - res.relativeError)).toBeLessThan(1e-10);
        expect(res.rank).toBeGreaterThanOrEqual(minRank);
        expect(res.rank).toBeLessThanOrEqual(minRank + 8);
        expect(orthonormalityDefect(res.Q)).toBeLessThan(1e-12);
      });

  it("exactly low-rank input: stops at its rank with error at rounding level", () => {
    const a = withSpectrum(120, 80, [4, 2, 1, 0.5, 0.25, 0.1, 0.05], 53);
    const res = blockedQb(a, { tolerance: 1e-8, blockSize: 5 }, [54]);
    expect(res.converged).toBe(true);
    expect(res.rank).toBe(7);
    expect(trueRelError(a, res.Q, res.B)).toBeLessThan(1e-12);
  });

  it("zero matrix: rank 0", () => {
    const res = blockedQb(new Matrix(20, 10), { tolerance: 0.1 }, [55]);
    expect(res.rank).toBe(0);
    expect(res.converged).toBe(true);
    expect(res.Q.cols).toBe(0);
  });

  it("maxRank caps the rank and reports non-convergence", () => {
    const a = withSpectrum(100, 60, spectra.slow(60), 56);
    const res = blockedQb(a, { tolerance: 1e-3, blockSize: 7, maxRank: 20 }, [57]);
    expect(res.rank).toBe(20);
    expect(res.converged).toBe(false);
    expect(Math.abs(trueRelError(a, res.Q, res.B) - res.relativeError)).toBeLessThan(1e-10);
  });
});
