/**
 * Halko–Martinsson–Tropp Theorem 10.5 (Gaussian test matrix, no power iterations):
 *   E‖A − QQᵀA‖_F ≤ √(1 + k/(p − 1)) · (Σ_{j>k} σ_j²)^½,
 * checked on the mean over seeded trials for polynomial, exponential and step spectra; and every
 * trial is no better than Eckart–Young allows for a rank-(k + p) projection, the optimum computed
 * from ml-matrix's SVD of A (which must match the prescribed spectrum).
 */
import { describe, expect, it } from "vitest";
import { rangeFinder } from "../../src/lowrank/index.js";
import { oracleSingularValues, projectionError, spectra, tailNorm, withSpectrum } from "./spectra.js";

describe("HMT average-error bound", () => {
  const m = 120;
  const n = 80;
  const k = 10;
  for (const [name, make] of Object.entries(spectra))
    for (const p of [2, 5])
      it(`${name} spectrum, k = ${k}, p = ${p}`, () => {
        const sigma = make(n);
        const a = withSpectrum(m, n, sigma, 11);
        const oracle = oracleSingularValues(a);
        for (let j = 0; j < n; j++) expect(Math.abs(oracle[j] - sigma[j])).toBeLessThan(1e-12);
        const bound = Math.sqrt(1 + k / (p - 1)) * tailNorm(oracle, k);
        const floor = tailNorm(oracle, k + p);
        const trials = 20;
        let sum = 0;
        for (let t = 0; t < trials; t++) {
          const { Q } = rangeFinder(a, { rank: k, oversampling: p, powerIterations: 0 }, [12, name, p, t]);
          const err = projectionError(a, Q);
          expect(err).toBeGreaterThanOrEqual(floor * (1 - 1e-12));
          sum += err;
        }
        expect(sum / trials).toBeLessThanOrEqual(bound);
      });
});
