// attentionScores returns A and Z in factored form: A[i,j] = scores[i,j]·exp(rowShift[i]),
// Z[i,i] = normalizer[i]·exp(rowShift[i]) — checked against the literal A and Z.
import { describe, expect, it } from "vitest";
import { attentionScores, dotKernel, randomMatrix } from "@randattn/core";
import { dot, expKappa, literalAttention, relErr, rows } from "./reference.js";

describe("attentionScores factored form", () => {
  const q = randomMatrix(5, 4, {}, [15, "q"]);
  const k = randomMatrix(8, 4, {}, [15, "k"]);
  const v = randomMatrix(8, 1, {}, [15, "v"]);

  it("softmax with a causal mask: rowShift = max allowed logit", () => {
    const allowed = (i: number, j: number) => j <= 3 + i;
    const ref = literalAttention(rows(q), rows(k), rows(v), expKappa(0.5), allowed);
    const { scores, normalizer, rowShift } = attentionScores(q, k, { kernel: { kind: "softmax", scale: 0.5 }, mask: { kind: "causal" } });
    const a = rows(scores).map((row, i) => row.map((x) => x * Math.exp(rowShift[i])));
    expect(relErr(a, ref.a)).toBeLessThan(1e-12);
    for (let i = 0; i < 5; i++) {
      expect(Math.abs(normalizer[i] * Math.exp(rowShift[i]) - ref.z[i]) / ref.z[i]).toBeLessThan(1e-12);
      const maxLogit = Math.max(
        ...rows(k)
          .filter((_, j) => allowed(i, j))
          .map((kj) => 0.5 * dot(rows(q)[i], kj)),
      );
      expect(Math.abs(rowShift[i] - maxLogit)).toBeLessThan(1e-14 * Math.max(1, Math.abs(maxLogit)));
    }
  });

  it("dot kernels: rowShift = 0, scores = A, normalizer = Z", () => {
    const f = (s: number) => Math.max(s, 0) + 0.5;
    const ref = literalAttention(rows(q), rows(k), rows(v), (a, b) => f(dot(a, b)));
    const { scores, normalizer, rowShift } = attentionScores(q, k, { kernel: dotKernel(f) });
    expect(Array.from(rowShift)).toEqual([0, 0, 0, 0, 0]);
    expect(relErr(scores, ref.a)).toBeLessThan(1e-12);
    expect(relErr([Array.from(normalizer)], [ref.z])).toBeLessThan(1e-12);
  });
});
