// Softmax attention Y = Z⁻¹AV with κ(v,w) = exp(⟨v,w⟩/√d_QK) against the literal loops (§2.1),
// including N_Q ≠ N_KV, d_QK ≠ d_V and an overridden scale.
import { describe, expect, it } from "vitest";
import { attention, randomMatrix } from "@randattn/core";
import { expKappa, literalAttention, relErr, rows } from "./reference.js";

const shapes: [number, number, number, number][] = [
  // [N_Q, N_KV, d_QK, d_V]
  [1, 1, 1, 1],
  [3, 3, 4, 4],
  [5, 9, 3, 7],
  [9, 4, 8, 2],
  [17, 23, 6, 11],
];

describe("softmax attention = literal Z⁻¹AV", () => {
  for (const [nQ, nKV, d, dV] of shapes) {
    it(`N_Q=${nQ} N_KV=${nKV} d_QK=${d} d_V=${dV}, default scale 1/√d_QK`, () => {
      const q = randomMatrix(nQ, d, {}, [7, "q", nQ, nKV, d]);
      const k = randomMatrix(nKV, d, {}, [7, "k", nQ, nKV, d]);
      const v = randomMatrix(nKV, dV, {}, [7, "v", nQ, nKV, dV]);
      const ref = literalAttention(rows(q), rows(k), rows(v), expKappa(1 / Math.sqrt(d)));
      const y = attention(q, k, v);
      expect([y.rows, y.cols]).toEqual([nQ, dV]);
      expect(relErr(y, ref.y)).toBeLessThan(1e-12);
    });
  }

  it("an explicit scale overrides 1/√d_QK (and changes the result)", () => {
    const q = randomMatrix(6, 5, {}, [8, "q"]);
    const k = randomMatrix(7, 5, {}, [8, "k"]);
    const v = randomMatrix(7, 3, {}, [8, "v"]);
    const ref = literalAttention(rows(q), rows(k), rows(v), expKappa(0.9));
    const y = attention(q, k, v, { kernel: { kind: "softmax", scale: 0.9 } });
    expect(relErr(y, ref.y)).toBeLessThan(1e-12);
    const yDefault = attention(q, k, v);
    expect(relErr(yDefault, ref.y)).toBeGreaterThan(1e-3);
  });
});
