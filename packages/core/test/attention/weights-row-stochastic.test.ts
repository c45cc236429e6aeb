// The rows of P = Z⁻¹A sum to 1 (§2.1) for every kernel and mask, and P ≥ 0.
import { describe, expect, it } from "vitest";
import { type AttentionOptions, attentionWeights, dotKernel, pairwiseKernel, randomMatrix } from "@randattn/core";

const cases: [string, AttentionOptions][] = [
  ["softmax", {}],
  ["softmax causal", { mask: { kind: "causal" } }],
  ["softmax padding", { mask: { kind: "padding", keyLength: 5 } }],
  [
    "relu+eps allowed sets",
    {
      kernel: dotKernel((s) => Math.max(s, 0) + 1e-3),
      mask: { kind: "allowed", sets: Array.from({ length: 9 }, (_, i) => [i % 7, (3 * i) % 7]) },
    },
  ],
  [
    "pairwise multiplicative causal",
    { kernel: pairwiseKernel((a, b) => 1 / (1 + Math.abs(a[0] - b[0]))), mask: { kind: "causal" }, maskForm: "multiplicative" },
  ],
];

describe("rows of Z⁻¹A sum to 1", () => {
  for (const [name, options] of cases) {
    it(name, () => {
      const p = attentionWeights(randomMatrix(9, 4, {}, [14, "q"]), randomMatrix(11, 4, {}, [14, "k"]), options);
      for (let i = 0; i < p.rows; i++) {
        let s = 0;
        for (let j = 0; j < p.cols; j++) {
          expect(p.get(i, j)).toBeGreaterThanOrEqual(0);
          s += p.get(i, j);
        }
        expect(Math.abs(s - 1)).toBeLessThan(1e-14);
      }
    });
  }
});
