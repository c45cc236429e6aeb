/**
 * Latent-cache compression for MLA: at full rank (k = d_L) attention on the compressed latent
 * reproduces exact merged (and unmerged) MLA attention to 1e-12; for k < d_L it equals the merged
 * attention formula evaluated literally on L̃ = C Ṽᵀ (plain loops), i.e. folding Ṽ into the weights
 * is exact; the latent error is the Eckart–Young optimum with the exact SVD and no better than it with
 * the randomized one; output error falls as k grows while the cache shrinks.
 */
import {
  Matrix,
  initMlaWeights,
  matmul,
  maxAbs,
  maxAbsDiff,
  mergeMla,
  mergedMlaAttention,
  mlaAttention,
  randomMatrix,
} from "@randattn/core";
import { describe, expect, it } from "vitest";
import { compressLatent, compressedMlaAttention } from "../../src/lowrank/index.js";
import { oracleSingularValues, tailNorm, frobenius } from "./spectra.js";

const rel = (a: Matrix, b: Matrix) => maxAbsDiff(a, b) / maxAbs(b);

describe("MLA latent compression", () => {
  const weights = initMlaWeights({ dIn: 24, numHeads: 3, latentDim: 10, queryLatentDim: 8, headDim: 6 }, [61]);
  const merged = mergeMla(weights);
  const x = randomMatrix(30, 24, {}, [62, "x"]);
  const xQ = randomMatrix(7, 24, {}, [62, "xq"]);

  it("full rank reproduces exact attention (merged and unmerged, with a causal mask)", () => {
    for (const method of ["randomized", "exact"] as const) {
      const res = compressedMlaAttention(x, x, merged, { rank: 10, method, attention: { mask: { kind: "causal" } } }, [63]);
      const exactMerged = mergedMlaAttention(x, x, merged, { mask: { kind: "causal" } });
      const exactUnmerged = mlaAttention(x, x, weights, { mask: { kind: "causal" } });
      expect(rel(res.output, exactMerged)).toBeLessThan(1e-12);
      expect(rel(res.output, exactUnmerged)).toBeLessThan(1e-12);
      expect(res.compressed.relativeError).toBeLessThan(1e-12);
    }
  });

  it("k < d_L: equals the literal merged formula on L̃ = C Ṽᵀ (folding is exact)", () => {
    const k = 4;
    const res = compressedMlaAttention(xQ, x, merged, { rank: k }, [64]);
    const lTilde = matmul(res.compressed.factor, res.compressed.basis); // N_KV × d_L
    const lq = matmul(xQ, merged.queryDown);
    const dL = 10;
    const y = new Matrix(xQ.rows, merged.latentOutput.cols);
    for (let h = 0; h < 3; h++) {
      const qh = matmul(lq, merged.queryKey[h]);
      for (let i = 0; i < xQ.rows; i++) {
        const logits = Array.from({ length: x.rows }, (_, j) => {
          let s = 0;
          for (let t = 0; t < dL; t++) s += qh.get(i, t) * lTilde.get(j, t);
          return merged.scale * s;
        });
        const mx = Math.max(...logits);
        const w = logits.map((l) => Math.exp(l - mx));
        const z = w.reduce((a, b) => a + b, 0);
        for (let t = 0; t < dL; t++) {
          let pl = 0;
          for (let j = 0; j < x.rows; j++) pl += (w[j] / z) * lTilde.get(j, t);
          for (let c = 0; c < y.cols; c++) y.set(i, c, y.get(i, c) + pl * merged.latentOutput.get(h * dL + t, c));
        }
      }
    }
    expect(rel(res.output, y)).toBeLessThan(1e-12);
    expect(res.merged.latentDown.cols).toBe(k);
    expect(res.cacheFloats).toEqual({ exact: 30 * 10, compressed: 30 * k });
  });

  it("latent error: exact SVD = Eckart–Young, randomized ≥ it; output error falls with k", () => {
    const latent = matmul(x, merged.latentDown);
    const sigma = oracleSingularValues(latent);
    for (const k of [2, 5, 8]) {
      const opt = tailNorm(sigma, k) / frobenius(latent);
      const ex = compressLatent(latent, { rank: k, method: "exact" }, [65]);
      expect(Math.abs(ex.relativeError - opt)).toBeLessThan(1e-12);
      const rnd = compressLatent(latent, { rank: k, oversampling: 2, powerIterations: 0 }, [65]);
      expect(rnd.relativeError).toBeGreaterThanOrEqual(opt * (1 - 1e-12));
      expect(ex.floatsStored).toEqual({ exact: 300, compressed: 30 * k + k * 10 });
    }
    const exact = mergedMlaAttention(xQ, x, merged);
    const errs = [2, 5, 8, 10].map((k) => rel(compressedMlaAttention(xQ, x, merged, { rank: k, method: "exact" }, [66]).output, exact));
    for (let i = 1; i < errs.length; i++) expect(errs[i]).toBeLessThan(errs[i - 1]);
    expect(errs[3]).toBeLessThan(1e-12);
  });

  it("decoupled RoPE part is carried through the fold (full rank = exact)", () => {
    const w = initMlaWeights({ dIn: 16, numHeads: 2, latentDim: 6, queryLatentDim: 5, headDim: 4, ropeDim: 4 }, [67]);
    const m = mergeMla(w);
    const xx = randomMatrix(12, 16, {}, [68]);
    const res = compressedMlaAttention(xx, xx, m, { rank: 6 }, [69]);
    expect(rel(res.output, mergedMlaAttention(xx, xx, m))).toBeLessThan(1e-12);
    expect(res.cacheFloats).toEqual({ exact: 12 * 10, compressed: 12 * 10 });
  });
});
