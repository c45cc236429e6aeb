/**
 * The causal prefix-sum form equals masking the approximate N × N matrix Â = φ(Q)φ(K)ᵀ and
 * normalizing its rows (Performer §2.6), to 1e-12 — for block sizes that cut the diagonal band in
 * every way, N_Q < N_KV (ERRATA: offset = N_KV − N_Q), explicit offsets, all three families.
 */
import { type Matrix, maxAbs, maxAbsDiff, randomMatrix } from "@randattn/core";
import { describe, expect, it } from "vitest";
import { randomFeatureAttention, randomFeatures } from "../../src/features/index.js";
import { featureProductMatrix, maskedRatio } from "./reference.js";

function reference(q: Matrix, k: Matrix, v: Matrix, omega: Matrix, kind: "positive" | "trig" | "hyperbolic", offset: number): Matrix {
  const opts = { features: kind } as const;
  const phiQ = randomFeatures(q, omega, opts).features;
  const phiK = randomFeatures(k, omega, opts).features;
  return maskedRatio(featureProductMatrix(phiQ, phiK), v, (i, j) => j <= offset + i);
}

describe("causal random-feature attention = masked approximate matrix", () => {
  const d = 8;
  const cases: { nQ: number; nKV: number; offset?: number; blockSize: number }[] = [
    { nQ: 37, nKV: 37, blockSize: 5 },
    { nQ: 37, nKV: 37, blockSize: 64 },
    { nQ: 37, nKV: 37, blockSize: 1 },
    { nQ: 10, nKV: 25, blockSize: 4 },
    { nQ: 12, nKV: 12, offset: 3, blockSize: 5 },
  ];
  for (const kind of ["positive", "hyperbolic", "trig"] as const)
    for (const c of cases) {
      it(`${kind}: N_Q=${c.nQ}, N_KV=${c.nKV}, offset=${c.offset ?? "default"}, block=${c.blockSize}`, () => {
        const q = randomMatrix(c.nQ, d, { scale: 0.7 }, [3, "causal", "q"]);
        const k = randomMatrix(c.nKV, d, { scale: 0.7 }, [3, "causal", "k"]);
        const v = randomMatrix(c.nKV, 5, {}, [3, "causal", "v"]);
        const res = randomFeatureAttention(
          q,
          k,
          v,
          {
            numFrequencies: 6,
            features: kind,
            mask: { kind: "causal", offset: c.offset },
            blockSize: c.blockSize,
            onNonPositiveNormalizer: "keep",
          },
          [3, "causal", "omega"],
        );
        const ref = reference(q, k, v, res.omega, kind, c.offset ?? c.nKV - c.nQ);
        expect(maxAbsDiff(res.output, ref) / maxAbs(ref)).toBeLessThan(1e-12);
        if (kind !== "trig") expect(res.nonPositiveRows).toEqual([]);
      });
    }

  it("a negative offset leaves the first rows with no key: reported and zeroed under 'zero'", () => {
    const q = randomMatrix(9, d, { scale: 0.5 }, [4, "q"]);
    const k = randomMatrix(9, d, { scale: 0.5 }, [4, "k"]);
    const v = randomMatrix(9, 3, {}, [4, "v"]);
    const res = randomFeatureAttention(
      q,
      k,
      v,
      { numFrequencies: 8, mask: { kind: "causal", offset: -2 }, blockSize: 4, onNonPositiveNormalizer: "zero" },
      [4],
    );
    expect(res.nonPositiveRows).toEqual([0, 1]);
    const ref = reference(q, k, v, res.omega, "positive", -2);
    expect(maxAbsDiff(res.output, ref) / maxAbs(ref)).toBeLessThan(1e-12);
    expect(() => randomFeatureAttention(q, k, v, { numFrequencies: 8, mask: { kind: "causal", offset: -2 } }, [4])).toThrow(/D\[0\]/);
  });
});
