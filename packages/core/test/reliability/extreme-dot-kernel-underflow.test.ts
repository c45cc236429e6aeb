// Issue #6 regression: a dot kernel on tiny logits (inputs ≈ 1e-160, κ = ReLU(s) ≈ 1e-320,
// subnormal) has a subnormal normalizer Z whose reciprocal overflows; multiplying by 1/Z gave
// κ·∞ and 0·∞ = NaN. P = κ/Z is now formed by division in that case: rows sum to 1, Y is finite.
import { describe, expect, it } from "vitest";
import { attention, attentionWeights, dotKernel, randomMatrix } from "@randattn/core";
import { allFinite, scaled } from "./reference.js";

describe("dot kernel with a subnormal normalizer", () => {
  const relu = dotKernel((s) => Math.max(s, 0), { name: "relu" });
  const q = scaled(randomMatrix(4, 3, {}, [13, "q"]), 1e-160);
  const k = scaled(randomMatrix(6, 3, {}, [13, "k"]), 1e-160);
  const v = randomMatrix(6, 2, {}, [13, "v"]);
  it("the regime under test: some Z is subnormal with 1/Z = ∞", () => {
    let found = false;
    for (let i = 0; i < q.rows; i++) {
      let z = 0;
      for (let j = 0; j < k.rows; j++)
        z += Math.max(
          0,
          q.row(i).reduce((s, x, p) => s + x * k.get(j, p), 0),
        );
      if (z > 0 && !Number.isFinite(1 / z)) found = true;
    }
    expect(found).toBe(true);
  });
  it("attentionWeights: rows sum to 1 (or are zero rows under onEmptyRow: zero), all finite", () => {
    const p = attentionWeights(q, k, { kernel: relu, onEmptyRow: "zero" });
    expect(allFinite(p)).toBe(true);
    for (let i = 0; i < p.rows; i++) {
      const s = p.row(i).reduce((a, b) => a + b, 0);
      expect(s === 0 || Math.abs(s - 1) <= 1e-12).toBe(true);
    }
  });
  it("attention: finite, each row a convex combination of V's rows", () => {
    const y = attention(q, k, v, { kernel: relu, onEmptyRow: "zero" });
    expect(allFinite(y)).toBe(true);
    for (let c = 0; c < v.cols; c++) {
      const col = Array.from({ length: v.rows }, (_, j) => v.get(j, c));
      for (let i = 0; i < y.rows; i++) expect(Math.abs(y.get(i, c))).toBeLessThanOrEqual(Math.max(...col.map(Math.abs)) * (1 + 1e-12));
    }
  });
});
