// The max-subtraction keeps logits of ±1e4 finite (exp(1e4) = ∞ in float64) and exact.
// Integer inputs with scale 1 make every logit exact, so the expected weights can be written
// from the shifted formula σ(x)_j = exp(x_j − max x)/Σ exp(x_ℓ − max x) with the same numbers.
import { describe, expect, it } from "vitest";
import { Matrix, attention, attentionScores, attentionWeights, streamingAttention } from "@randattn/core";
import { allFinite, relErr } from "./reference.js";

// Logits x_j = q·k_j with q = (100, 1): keys chosen so x = (1e4, 1e4 − 1, −1e4, 1e4 − 3, 0).
const q = Matrix.fromArray([
  [100, 1],
  [-100, 1],
]);
const k = Matrix.fromArray([
  [100, 0],
  [100, -1],
  [-100, 0],
  [100, -3],
  [0, 0],
]);
const v = Matrix.fromArray([
  [1, 0],
  [0, 1],
  [5, 5],
  [2, -1],
  [-7, 3],
]);
const opts = { kernel: { kind: "softmax" as const, scale: 1 } };

function shiftedSoftmax(x: number[]): number[] {
  const mx = Math.max(...x);
  const e = x.map((t) => Math.exp(t - mx));
  const s = e.reduce((a, b) => a + b, 0);
  return e.map((t) => t / s);
}

describe("logits of ±1e4", () => {
  const logits = [0, 1].map((i) => [0, 1, 2, 3, 4].map((j) => q.get(i, 0) * k.get(j, 0) + q.get(i, 1) * k.get(j, 1)));

  it("the test logits are really ±1e4 (naive exp overflows)", () => {
    expect(Math.max(...logits[0])).toBe(1e4);
    expect(Math.exp(logits[0][0])).toBe(Number.POSITIVE_INFINITY);
  });

  it("weights are finite and equal the shifted softmax", () => {
    const p = attentionWeights(q, k, opts);
    expect(allFinite(p)).toBe(true);
    expect(relErr(p, logits.map(shiftedSoftmax))).toBeLessThan(1e-15);
  });

  it("outputs are finite and equal P V (materialized and streaming)", () => {
    const p = logits.map(shiftedSoftmax);
    const ref = p.map((row) => [0, 1].map((c) => row.reduce((s, pj, j) => s + pj * v.get(j, c), 0)));
    for (const y of [attention(q, k, v, opts), streamingAttention(q, k, v, { ...opts, blockSize: 2, queryBlockSize: 1 })]) {
      expect(allFinite(y)).toBe(true);
      expect(relErr(y, ref)).toBeLessThan(1e-14);
    }
  });

  it("scores carry the row max as rowShift", () => {
    const { rowShift, normalizer, scores } = attentionScores(q, k, opts);
    expect(Array.from(rowShift)).toEqual(logits.map((x) => Math.max(...x)));
    expect(allFinite(scores)).toBe(true);
    expect(normalizer.every((z) => Number.isFinite(z) && z >= 1)).toBe(true);
  });
});
