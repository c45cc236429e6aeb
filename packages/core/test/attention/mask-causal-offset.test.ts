// Causal mask convention (ERRATA): query i sits at absolute position offset + i and sees keys
// j ≤ offset + i, with offset = N_KV − N_Q by default — so the N_Q newest queries of a sequence,
// attended against all N_KV keys, reproduce the last N_Q rows of full causal self-attention.
import { describe, expect, it } from "vitest";
import { NumericalError, attention, emptyMaskRows, multiplicativeMask, randomMatrix, sliceRows } from "@randattn/core";
import { expKappa, literalAttention, relErr, rows } from "./reference.js";

describe("causal mask offset", () => {
  it("N_Q = N_KV: lower triangle j ≤ i", () => {
    const mt = multiplicativeMask({ kind: "causal" }, 5, 5);
    for (let i = 0; i < 5; i++) for (let j = 0; j < 5; j++) expect(mt.get(i, j)).toBe(j <= i ? 1 : 0);
  });

  it("N_Q < N_KV: default offset N_KV − N_Q", () => {
    const mt = multiplicativeMask({ kind: "causal" }, 3, 7);
    for (let i = 0; i < 3; i++) for (let j = 0; j < 7; j++) expect(mt.get(i, j)).toBe(j <= 4 + i ? 1 : 0);
  });

  it("explicit offset (including negative) overrides the default", () => {
    for (const offset of [-1, 0, 2, 10]) {
      const mt = multiplicativeMask({ kind: "causal", offset }, 4, 6);
      for (let i = 0; i < 4; i++) for (let j = 0; j < 6; j++) expect(mt.get(i, j)).toBe(j <= offset + i ? 1 : 0);
    }
    expect(emptyMaskRows({ kind: "causal", offset: -2 }, 4, 6)).toEqual([0, 1]);
  });

  it("newest N_Q queries = last N_Q rows of full causal self-attention", () => {
    const n = 10;
    const x = randomMatrix(n, 4, {}, [17, "q"]);
    const k = randomMatrix(n, 4, {}, [17, "k"]);
    const v = randomMatrix(n, 3, {}, [17, "v"]);
    const full = attention(x, k, v, { mask: { kind: "causal" } });
    const ref = literalAttention(rows(x), rows(k), rows(v), expKappa(0.5), (i, j) => j <= i);
    expect(relErr(full, ref.y)).toBeLessThan(1e-12);
    for (const nQ of [1, 3, 7]) {
      const tail = attention(sliceRows(x, n - nQ), k, v, { mask: { kind: "causal" } });
      expect(relErr(tail, sliceRows(full, n - nQ))).toBeLessThan(1e-14);
    }
  });

  it("N_Q > N_KV: the default offset is negative and the first rows are empty (error by default)", () => {
    const q = randomMatrix(5, 2, {}, [17, "q5"]);
    const k = randomMatrix(3, 2, {}, [17, "k3"]);
    const v = randomMatrix(3, 2, {}, [17, "v3"]);
    expect(() => attention(q, k, v, { mask: { kind: "causal" } })).toThrow(NumericalError);
    const y = attention(q, k, v, { mask: { kind: "causal" }, onEmptyRow: "zero" });
    expect(y.toArray().slice(0, 2)).toEqual([
      [0, 0],
      [0, 0],
    ]);
  });
});
