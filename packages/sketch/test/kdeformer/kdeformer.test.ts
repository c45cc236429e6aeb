// KDEformer (Zandieh et al. 2023): exact limit, unbiasedness with the exact normalizer, the
// defensive sampling distribution, refused masks.
import { ValueError, attention } from "@randattn/core";
import { drawHyperplanes, kdeformerAttention } from "@randattn/sketch";
import { describe, expect, it } from "vitest";
import { d, keys, maxAbs, n, queries, values } from "../lsh/fixtures.js";
import { worstStandardizedDeviation } from "../lsh/unbiased.js";

const exact = attention(queries, keys, values);
const planes = drawHyperplanes(3, d, [78, "planes"]);

describe("KDEformer", () => {
  it("one block is exact (1e-12), both normalizers", () => {
    for (const normalizer of ["approximate", "exact"] as const)
      expect(maxAbs(kdeformerAttention(queries, keys, values, { blockSize: n, normalizer }, [1]).output, exact)).toBeLessThanOrEqual(1e-12);
  });
  it("unbiased with the exact normalizer (column-norm importance sampling, z·σ̂/√T)", () => {
    const { worst, z } = worstStandardizedDeviation(
      (t) =>
        kdeformerAttention(queries, keys, values, { blockSize: 8, sampleSize: 6, columnSamples: 5, normalizer: "exact", planes }, [20, t])
          .output,
      exact,
      400,
      exact.data.length,
    );
    expect(worst).toBeLessThanOrEqual(z);
  });
  it("p = (1 − ε)ĉ/Σĉ + ε/N: a distribution with every p_j ≥ ε/N", () => {
    const r = kdeformerAttention(queries, keys, values, { blockSize: 8, uniformShare: 0.25, planes }, [2]);
    let s = 0;
    for (const p of r.probabilities) {
      expect(p).toBeGreaterThanOrEqual(0.25 / n - 1e-15);
      s += p;
    }
    expect(s).toBeCloseTo(1, 12);
  });
  it("refuses masks and bad options with ValueError", () => {
    expect(() => kdeformerAttention(queries, keys, values, { mask: { kind: "causal" } } as never, [1])).toThrow(ValueError);
    expect(() => kdeformerAttention(queries, keys, values, { uniformShare: 0 }, [1])).toThrow(ValueError);
    expect(() => kdeformerAttention(queries, keys, values, { uniformShare: 1.5 }, [1])).toThrow(ValueError);
    expect(() => kdeformerAttention(queries, keys, values, { kernel: { kind: "dot" } as never }, [1])).toThrow(ValueError);
  });
});
