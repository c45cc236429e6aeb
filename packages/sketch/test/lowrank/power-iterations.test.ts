/**
 * Power iterations reduce the error on slowly decaying spectra (HMT §4.5, Cor. 10.10): the mean
 * error over seeds falls strictly from q = 0 to q = 1 to q = 2, with QR and with LU re-normalization,
 * and approaches the Eckart–Young optimum of the rank-ℓ projection.
 */
import { describe, expect, it } from "vitest";
import { rangeFinder } from "../../src/lowrank/index.js";
import { projectionError, spectra, tailNorm, withSpectrum } from "./spectra.js";

describe("power iterations on slow-decay spectra", () => {
  const sigma = spectra.slow(100);
  const a = withSpectrum(160, 100, sigma, 21);
  for (const orthonormalization of ["qr", "lu", "none"] as const)
    it(`error decreases with q (${orthonormalization})`, () => {
      const mean = (q: number) => {
        let s = 0;
        for (let t = 0; t < 6; t++)
          s += projectionError(a, rangeFinder(a, { rank: 10, oversampling: 5, powerIterations: q, orthonormalization }, [22, t]).Q);
        return s / 6;
      };
      const e = [0, 1, 2].map(mean);
      expect(e[1]).toBeLessThan(e[0]);
      expect(e[2]).toBeLessThan(e[1]);
      expect(e[2]).toBeGreaterThanOrEqual(tailNorm(sigma, 15));
      expect(e[2] / tailNorm(sigma, 15)).toBeLessThan(e[0] / tailNorm(sigma, 15));
    });
});
