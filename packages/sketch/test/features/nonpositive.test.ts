/**
 * Trig features can give Dᵢ ≤ 0. Such rows are never a silent NaN: "error" throws NumericalError
 * naming the row, "zero" outputs zeros, "keep" divides by the negative Dᵢ (the raw ratio estimator);
 * all three list the same rows in nonPositiveRows, which match the sign of the literal Dᵢ.
 */
import { randomMatrix } from "@randattn/core";
import { describe, expect, it } from "vitest";
import { NumericalError } from "@randattn/core";
import { randomFeatureAttention, randomFeatures } from "../../src/features/index.js";
import { featureProductMatrix } from "./reference.js";

describe("non-positive normalizers (trig features)", () => {
  // Few features and large-norm inputs make trig's D negative on some rows.
  const q = randomMatrix(40, 4, { scale: 1.5 }, [41, "q"]);
  const k = randomMatrix(6, 4, { scale: 1.5 }, [41, "k"]);
  const v = randomMatrix(6, 2, {}, [41, "v"]);
  const opts = { numFrequencies: 2, features: "trig", projection: "iid" } as const;

  it("reports exactly the rows whose literal D is ≤ 0, under every policy", () => {
    const keep = randomFeatureAttention(q, k, v, { ...opts, onNonPositiveNormalizer: "keep" }, [41]);
    const a = featureProductMatrix(
      randomFeatures(q, keep.omega, { features: "trig" }).features,
      randomFeatures(k, keep.omega, { features: "trig" }).features,
    );
    const expected: number[] = [];
    for (let i = 0; i < q.rows; i++) {
      let d = 0;
      for (let j = 0; j < k.rows; j++) d += a.get(i, j);
      if (d <= 0) expected.push(i);
    }
    expect(expected.length).toBeGreaterThan(0);
    expect(keep.nonPositiveRows).toEqual(expected);
    const zero = randomFeatureAttention(q, k, v, { ...opts, onNonPositiveNormalizer: "zero" }, [41]);
    expect(zero.nonPositiveRows).toEqual(expected);
    for (const i of expected) {
      expect(zero.output.get(i, 0)).toBe(0);
      expect(keep.output.get(i, 0)).not.toBe(0);
    }
    for (const x of keep.output.data) expect(Number.isNaN(x)).toBe(false);
    let err: unknown;
    try {
      randomFeatureAttention(q, k, v, opts, [41]);
    } catch (e) {
      err = e;
    }
    expect(err).toBeInstanceOf(NumericalError);
    expect((err as NumericalError).actual).toContain(`D[${expected[0]}]`);
  });
});
