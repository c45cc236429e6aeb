// A general κ(v,w) — here the Gaussian kernel exp(−‖v−w‖²/2) — against the literal loops.
import { describe, expect, it } from "vitest";
import { attention, evaluateKernel, pairwiseKernel, randomMatrix } from "@randattn/core";
import { literalAttention, relErr, rows } from "./reference.js";

const gauss = (a: ArrayLike<number>, b: ArrayLike<number>) => {
  let s = 0;
  for (let p = 0; p < a.length; p++) s += (a[p] - b[p]) ** 2;
  return Math.exp(-s / 2);
};

describe("pairwise kernel attention = literal Z⁻¹AV", () => {
  it("Gaussian kernel, N_Q ≠ N_KV, d_QK ≠ d_V", () => {
    const q = randomMatrix(6, 3, {}, [12, "q"]);
    const k = randomMatrix(11, 3, {}, [12, "k"]);
    const v = randomMatrix(11, 4, {}, [12, "v"]);
    const ref = literalAttention(rows(q), rows(k), rows(v), gauss);
    const y = attention(q, k, v, { kernel: pairwiseKernel((a, b) => gauss(a, b), "gauss") });
    expect(relErr(y, ref.y)).toBeLessThan(1e-12);
  });

  it("evaluateKernel gives κ(q,k) for one pair of each kind", () => {
    const q = Float64Array.from([0.5, -1, 2]);
    const k = Float64Array.from([1, 0.25, -0.5]);
    const s = 0.5 - 0.25 - 1;
    expect(evaluateKernel(undefined, q, k)).toBeCloseTo(Math.exp(s / Math.sqrt(3)), 15);
    expect(evaluateKernel({ kind: "dot", f: (x) => x * x, scale: 2 }, q, k)).toBeCloseTo((2 * s) ** 2, 14);
    expect(evaluateKernel(pairwiseKernel(gauss), q, k)).toBe(gauss(q, k));
  });
});
