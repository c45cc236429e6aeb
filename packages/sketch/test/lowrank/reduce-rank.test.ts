/**
 * Latent-rank reduction of merged MLA weights (W_L, W_LQK, W_LO, and W_LQ): unchanged ranks give
 * the same attention to 1e-12; the data-free latent error is the Eckart–Young error of W_L (exact
 * SVD), the calibrated one that of X W_L; the report's sizes add up; the output error on the
 * calibration input is at most the data-free one's at the same rank (the calibrated basis is optimal
 * for that latent).
 */
import { type Matrix, initMlaWeights, matmul, maxAbs, maxAbsDiff, mergeMla, mergedMlaAttention, randomMatrix } from "@randattn/core";
import { Matrix as MlMatrix, solve } from "ml-matrix";
import { describe, expect, it } from "vitest";
import { reduceLatentRank } from "../../src/lowrank/index.js";
import { frobenius, oracleSingularValues, tailNorm } from "./spectra.js";

const rel = (a: Matrix, b: Matrix) => maxAbsDiff(a, b) / maxAbs(b);

describe("reduceLatentRank", () => {
  const merged = mergeMla(initMlaWeights({ dIn: 20, numHeads: 2, latentDim: 12, queryLatentDim: 9, headDim: 5 }, [81]));
  const x = randomMatrix(25, 20, {}, [82]);
  const exact = mergedMlaAttention(x, x, merged, { mask: { kind: "causal" } });

  it("full ranks reproduce the attention", () => {
    const { merged: same } = reduceLatentRank(merged, {}, [83]);
    expect(rel(mergedMlaAttention(x, x, same, { mask: { kind: "causal" } }), exact)).toBeLessThan(1e-12);
    const { merged: full } = reduceLatentRank(merged, { latentRank: 12, queryLatentRank: 9, method: "exact" }, [83]);
    expect(rel(mergedMlaAttention(x, x, full, { mask: { kind: "causal" } }), exact)).toBeLessThan(1e-12);
  });

  it("errors are Eckart–Young (data-free and calibrated); sizes reported", () => {
    const { merged: r, report } = reduceLatentRank(merged, { latentRank: 5, queryLatentRank: 4, method: "exact" }, [84]);
    expect(Math.abs(report.latentError - tailNorm(oracleSingularValues(merged.latentDown), 5) / frobenius(merged.latentDown))).toBeLessThan(
      1e-12,
    );
    expect(
      Math.abs(report.queryLatentError - tailNorm(oracleSingularValues(merged.queryDown), 4) / frobenius(merged.queryDown)),
    ).toBeLessThan(1e-12);
    expect(report.cacheFloatsPerToken).toEqual({ before: 12, after: 5 });
    expect(r.latentDown.cols).toBe(5);
    expect(r.queryDown.cols).toBe(4);
    expect(r.latentOutput.rows).toBe(2 * 5);
    expect(report.weightFloats.after).toBe(20 * 4 + 20 * 5 + 2 * 4 * 5 + 2 * 5 * 20);
    const latent = matmul(x, merged.latentDown);
    const cal = reduceLatentRank(merged, { latentRank: 5, method: "exact", calibration: x }, [85]);
    expect(Math.abs(cal.report.latentError - tailNorm(oracleSingularValues(latent), 5) / frobenius(latent))).toBeLessThan(1e-12);
    const free = reduceLatentRank(merged, { latentRank: 5, method: "exact" }, [85]);
    // On its own calibration latent the calibrated basis is optimal: its latent error ≤ the data-free basis's.
    const freeOnX = latentErrorOn(latent, free.merged.latentDown, merged.latentDown);
    expect(cal.report.latentError).toBeLessThanOrEqual(freeOnX + 1e-12);
  });

  it("bad ranks", () => {
    expect(() => reduceLatentRank(merged, { latentRank: 13 }, [1])).toThrow(
      /options\.latentRank: expected an integer in \[1, 12\], got 13/,
    );
    expect(() => reduceLatentRank(merged, { queryLatentRank: 0 }, [1])).toThrow(/options\.queryLatentRank/);
    expect(() => reduceLatentRank(merged, { latentRank: 3, calibration: randomMatrix(4, 7, {}, [1]) }, [1])).toThrow(
      /options\.calibration/,
    );
  });
});

/** ‖L − L Ṽ Ṽᵀ‖_F/‖L‖_F for the basis implied by a folded W_L Ṽ (Ṽ = W_L⁺ (W_L Ṽ), W_L full column rank). */
function latentErrorOn(latent: Matrix, foldedDown: Matrix, down: Matrix): number {
  // Recover Ṽ by least squares (ml-matrix's solve on the tall W_L; exact since W_L Ṽ is in its range).
  const v = solve(new MlMatrix(down.toArray()), new MlMatrix(foldedDown.toArray()));
  const V = v.to2DArray();
  const k = V[0].length;
  const n = latent.rows;
  const d = latent.cols;
  let num = 0;
  let den = 0;
  for (let i = 0; i < n; i++) {
    const c = new Float64Array(k);
    for (let t = 0; t < k; t++) for (let s = 0; s < d; s++) c[t] += latent.get(i, s) * V[s][t];
    for (let s = 0; s < d; s++) {
      let y = 0;
      for (let t = 0; t < k; t++) y += c[t] * V[s][t];
      num += (latent.get(i, s) - y) ** 2;
      den += latent.get(i, s) ** 2;
    }
  }
  return Math.sqrt(num / den);
}
