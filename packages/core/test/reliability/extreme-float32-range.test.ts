// Issue #6 regression: with `precision: "float32"`, inputs or logits beyond float32's range
// (≈ 3.4e38) used to come back as NaN/±Inf, silently. attention / streamingAttention now detect it
// and compute in float64 instead (at least as accurate), so the result is finite and exact.
import { describe, expect, it } from "vitest";
import { attention, randomMatrix, streamingAttention } from "@randattn/core";
import { allFinite, refAttention, relMaxErr, scaled } from "./reference.js";

describe('precision "float32" beyond float32 range', () => {
  for (const s of [1e20, 1e150]) {
    const q = scaled(randomMatrix(3, 4, {}, [12, "q"]), s);
    const k = scaled(randomMatrix(6, 4, {}, [12, "k"]), s);
    const v = scaled(randomMatrix(6, 2, {}, [12, "v"]), s);
    it(`inputs × ${s}: the float32 arithmetic really overflows`, () => {
      expect(Math.fround(s * s)).toBe(Number.POSITIVE_INFINITY);
    });
    it(`inputs × ${s}: attention and streamingAttention are finite and equal the float64 reference`, () => {
      const ref = refAttention(q, k, v);
      for (const y of [attention(q, k, v, { precision: "float32" }), streamingAttention(q, k, v, { precision: "float32", blockSize: 2 })]) {
        expect(allFinite(y)).toBe(true);
        // logits ≈ s²: a hard max; the float64 fallback picks the same key as the reference
        expect(relMaxErr(y, ref)).toBeLessThanOrEqual(1e-12);
      }
    });
  }
});
