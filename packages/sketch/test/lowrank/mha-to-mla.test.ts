/**
 * MHA/GQA → MLA conversion (TransMLA-style SVD of the stacked [W_K, W_V]): exact (output and
 * weights to 1e-12) when d_L ≥ rank of the stacked weights — full rank, and a layer whose stacked
 * weights have rank 7 converted at d_L = 7 — with GQA head grouping, a causal mask and naive RoPE;
 * below that rank the weight error is the Eckart–Young optimum (exact SVD), the output error falls
 * as d_L grows, and the cache floats per token are reported.
 */
import { type Matrix, Rope, concatCols, initMultiHeadWeights, matmul, randomMatrix } from "@randattn/core";
import { describe, expect, it } from "vitest";
import { multiHeadToMla } from "../../src/lowrank/index.js";
import { frobenius, oracleSingularValues, tailNorm } from "./spectra.js";

describe("MHA/GQA → MLA", () => {
  const mha = initMultiHeadWeights({ dIn: 32, numHeads: 4, numKvHeads: 2, headDim: 6, valueDim: 5 }, [71]);
  const x = randomMatrix(15, 32, {}, [72]);

  it("full rank (d_L = G(d_K + d_V) = 22): exact outputs, with causal mask and RoPE", () => {
    for (const method of ["randomized", "exact"] as const) {
      const { weights, report } = multiHeadToMla(
        mha,
        { latentDim: 22, method, calibration: { xQ: x, xKV: x, options: { mask: { kind: "causal" }, rope: new Rope(6) } } },
        [73],
      );
      expect(report.outputRelativeError).toBeLessThan(1e-12);
      expect(report.weightRelativeError).toBeLessThan(1e-12);
      expect(report.cacheFloatsPerToken).toEqual({ multiHead: 22, latent: 22 });
      expect(weights.keyUp.length).toBe(4);
      // GQA: heads 0, 1 share KV group 0; heads 2, 3 group 1.
      expect(Array.from(weights.keyUp[1].data)).toEqual(Array.from(weights.keyUp[0].data));
      expect(Array.from(weights.keyUp[2].data)).not.toEqual(Array.from(weights.keyUp[1].data));
    }
  });

  it("stacked weights of rank 7: exact at d_L = 7, saving cache floats", () => {
    const basis = randomMatrix(32, 7, {}, [74, "b"]);
    const low = {
      ...mha,
      keys: mha.keys.map((_, g) => matmul(basis, randomMatrix(7, 6, {}, [74, "k", g]))),
      values: mha.values.map((_, g) => matmul(basis, randomMatrix(7, 5, {}, [74, "v", g]))),
    };
    const { report } = multiHeadToMla(low, { latentDim: 7, calibration: { xQ: x, xKV: x } }, [75]);
    expect(report.outputRelativeError).toBeLessThan(1e-12);
    expect(report.cacheFloatsPerToken).toEqual({ multiHead: 22, latent: 7 });
  });

  it("d_L below the rank: Eckart–Young weight error (exact SVD), output error falling with d_L", () => {
    const stacked: Matrix = concatCols([...mha.keys, ...mha.values]);
    const sigma = oracleSingularValues(stacked);
    const errs: number[] = [];
    for (const dL of [4, 10, 16, 22]) {
      const { report } = multiHeadToMla(mha, { latentDim: dL, method: "exact", calibration: { xQ: x, xKV: x } }, [76]);
      expect(Math.abs(report.weightRelativeError - tailNorm(sigma, dL) / frobenius(stacked))).toBeLessThan(1e-12);
      errs.push(report.outputRelativeError!);
    }
    for (let i = 1; i < errs.length; i++) expect(errs[i]).toBeLessThan(errs[i - 1]);
  });

  it("bad latentDim / cross-attention widths", () => {
    expect(() => multiHeadToMla(mha, { latentDim: 23 }, [1])).toThrow(/options\.latentDim: expected an integer in \[1, 22\], got 23/);
    const cross = initMultiHeadWeights({ dIn: 8, numHeads: 2, headDim: 4 }, [2]);
    const bad = {
      ...cross,
      keys: cross.keys.map(() => randomMatrix(5, 4, {}, [3])),
      values: cross.values.map(() => randomMatrix(5, 4, {}, [4])),
    };
    expect(() => multiHeadToMla(bad, { latentDim: 2 }, [1])).toThrow(/weights\.keys/);
  });
});
