// Issue #6 regression: for a non-exp kernel κ = f(⟨q,k⟩) there is no max-shift, and κ ≈ 1e300 times
// |V| ≈ 1e150 overflowed inside A·V (materialized: Z⁻¹(AV); streaming: Σ κ_j V_j) although Y, a
// convex combination of V's rows, is ≈ 1e150. Both paths now normalize before multiplying by V.
import { describe, expect, it } from "vitest";
import { attention, dotKernel, pairwiseKernel, randomMatrix, streamingAttention } from "@randattn/core";
import { allFinite, refAttention, relMaxErr, scaled } from "./reference.js";

const reluEps = (s: number): number => Math.max(s, 0) + 1e-3;

describe("dot / pairwise kernels with κ ≈ 1e300 and |V| ≈ 1e150", () => {
  const q = scaled(randomMatrix(4, 3, {}, [8, "q"]), 1e150);
  const k = scaled(randomMatrix(7, 3, {}, [8, "k"]), 1e150);
  const v = scaled(randomMatrix(7, 2, {}, [8, "v"]), 1e150);
  const ref = refAttention(q, k, v, { kind: "dot", f: reluEps });
  it("the unnormalized product really overflows (the regime under test)", () => {
    let big = 0;
    for (let i = 0; i < q.rows; i++)
      for (let j = 0; j < k.rows; j++) big = Math.max(big, reluEps(q.row(i).reduce((s, x, p) => s + x * k.get(j, p), 0)));
    expect(big * 1e150).toBe(Number.POSITIVE_INFINITY);
    expect(allFinite(ref)).toBe(true);
  });
  it("materialized attention is finite and equals the reference", () => {
    const y = attention(q, k, v, { kernel: dotKernel(reluEps) });
    expect(allFinite(y)).toBe(true);
    expect(relMaxErr(y, ref)).toBeLessThanOrEqual(1e-13);
  });
  for (const blockSize of [1, 3, 256]) {
    it(`streaming attention (blockSize ${blockSize}) is finite and equals the reference`, () => {
      const y = streamingAttention(q, k, v, { kernel: dotKernel(reluEps), blockSize, queryBlockSize: 2 });
      expect(allFinite(y)).toBe(true);
      expect(relMaxErr(y, ref)).toBeLessThanOrEqual(1e-13);
    });
  }
  it("a pairwise kernel with huge values, streaming with causal mask, is finite", () => {
    const big = pairwiseKernel((a, b) => Math.abs(a[0] * b[0]) + 1, "abs-product");
    const y = streamingAttention(q, k, v, { kernel: big, blockSize: 2, mask: { kind: "causal" } });
    expect(allFinite(y)).toBe(true);
    const yMat = attention(q, k, v, { kernel: big, mask: { kind: "causal" } });
    expect(relMaxErr(y, yMat)).toBeLessThanOrEqual(1e-13);
  });
});
