/**
 * The range finder's Q is orthonormal to 1e-12 (max |QᵀQ − I|) for every test-matrix kind from
 * operators/ and every re-normalization mode — including on an exactly low-rank input with more
 * samples than its rank, where re-orthonormalization must not divide by zero.
 */
import { describe, expect, it } from "vitest";
import { rangeFinder } from "../../src/lowrank/index.js";
import { orthonormalityDefect, spectra, withSpectrum } from "./spectra.js";

describe("range finder: Q orthonormal to 1e-12", () => {
  const a = withSpectrum(150, 90, spectra.polynomial(90), 1);
  const lowRank = withSpectrum(150, 90, spectra.exponential(6), 2);
  for (const testMatrix of ["gaussian", "rademacher", "srht", "countsketch", "sparse-sign"] as const)
    for (const orthonormalization of ["qr", "lu", "none"] as const)
      it(`${testMatrix}, ${orthonormalization}`, () => {
        for (const [name, m] of [
          ["full", a],
          ["rank 6", lowRank],
        ] as const) {
          const { Q } = rangeFinder(m, { rank: 10, oversampling: 5, powerIterations: 2, orthonormalization, testMatrix }, [3, name]);
          expect(Q.rows).toBe(150);
          expect(Q.cols).toBe(15);
          for (const x of Q.data) expect(Number.isFinite(x)).toBe(true);
          expect(orthonormalityDefect(Q)).toBeLessThan(1e-12);
        }
      });
});
