// κ(v,w) = f(scale·⟨v,w⟩) for several f ≥ 0 against the literal loops (§2.1's general kernel).
import { describe, expect, it } from "vitest";
import { attention, attentionWeights, dotKernel, randomMatrix } from "@randattn/core";
import { dot, literalAttention, relErr, rows } from "./reference.js";

const fs: [string, (s: number) => number][] = [
  ["relu + 0.1", (s) => Math.max(s, 0) + 0.1],
  ["sigmoid", (s) => 1 / (1 + Math.exp(-s))],
  ["square + 1 (no ∅_κ)", (s) => s * s + 1],
  ["exp (unscaled softmax)", (s) => Math.exp(s)],
];

describe("dot kernel attention = literal Z⁻¹AV", () => {
  for (const [name, f] of fs) {
    for (const scale of [undefined, 0.37]) {
      it(`f = ${name}, scale ${scale ?? "default 1"}`, () => {
        const q = randomMatrix(7, 4, {}, [11, "q", name]);
        const k = randomMatrix(10, 4, {}, [11, "k", name]);
        const v = randomMatrix(10, 5, {}, [11, "v", name]);
        const sc = scale ?? 1;
        const ref = literalAttention(rows(q), rows(k), rows(v), (a, b) => f(sc * dot(a, b)));
        const kernel = dotKernel(f, scale === undefined ? {} : { scale });
        expect(relErr(attention(q, k, v, { kernel }), ref.y)).toBeLessThan(1e-12);
        expect(relErr(attentionWeights(q, k, { kernel }), ref.p)).toBeLessThan(1e-12);
      });
    }
  }
});
