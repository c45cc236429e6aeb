// Scatterbrain (Chen et al. 2021): exact limit (one bucket), unbiasedness of the sparse + low-rank
// combination (no double counting), causal and padding masks, typed errors.
import { Matrix, ValueError, attention, randomMatrix } from "@randattn/core";
import { drawHyperplanes, scatterbrainAttention } from "@randattn/sketch";
import { describe, expect, it } from "vitest";
import { d, keys, maxAbs, n, queries, values } from "../lsh/fixtures.js";
import { worstStandardizedDeviation } from "../lsh/unbiased.js";

// Small-norm inputs keep the Performer part's second moment exp(2‖x+y‖²) moderate: with heavy-tailed
// weights σ̂ would understate the spread and the z·σ̂/√T check would be invalid.
const q = new Matrix(
  n,
  d,
  Float64Array.from(queries.data, (v) => 0.25 * v),
);
const k = new Matrix(
  n,
  d,
  Float64Array.from(keys.data, (v) => 0.25 * v),
);
const exact = attention(q, k, values);
const exactCausal = attention(q, k, values, { mask: { kind: "causal" } });
const planes = drawHyperplanes(2, d, [79, "planes"]);

describe("Scatterbrain", () => {
  it("one bucket (numBits = 0) is exact: the sparse part replaces the whole low-rank estimate (1e-12)", () => {
    for (const normalizer of ["estimated", "exact"] as const) {
      expect(
        maxAbs(scatterbrainAttention(q, k, values, { numFrequencies: 8, numBits: 0, normalizer }, [1]).output, exact),
      ).toBeLessThanOrEqual(1e-12);
    }
    expect(
      maxAbs(scatterbrainAttention(q, k, values, { numFrequencies: 8, numBits: 0, mask: { kind: "causal" } }, [1]).output, exactCausal),
    ).toBeLessThanOrEqual(1e-12);
    const padded = attention(q, k, values, { mask: { kind: "padding", keyLength: 30 } });
    expect(
      maxAbs(
        scatterbrainAttention(q, k, values, { numFrequencies: 8, numBits: 0, mask: { kind: "padding", keyLength: 30 } }, [1]).output,
        padded,
      ),
    ).toBeLessThanOrEqual(1e-12);
  });
  it("unbiased with the exact normalizer, bidirectional and causal (z·σ̂/√T)", () => {
    for (const [mask, ref] of [
      [undefined, exact],
      [{ kind: "causal" as const }, exactCausal],
    ] as const) {
      const { worst, z } = worstStandardizedDeviation(
        (t) =>
          scatterbrainAttention(q, k, values, { numFrequencies: 4, normalizer: "exact", projection: "iid", planes, mask }, [30, t]).output,
        ref,
        400,
        2 * exact.data.length,
      );
      expect(worst).toBeLessThanOrEqual(z);
    }
  });
  it("typed errors", () => {
    expect(() => scatterbrainAttention(q, k, values, { numFrequencies: 0 }, [1])).toThrow(ValueError);
    expect(() => scatterbrainAttention(q, k, values, { numFrequencies: 4, numBits: -1 }, [1])).toThrow(ValueError);
    expect(() => scatterbrainAttention(q, k, values, { numFrequencies: 4, planes: randomMatrix(3, d, {}, [1]), numBits: 2 }, [1])).toThrow(
      ValueError,
    );
  });
});
