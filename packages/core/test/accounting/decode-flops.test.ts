import { describe, expect, it } from "vitest";
import { type AttentionSpec, attentionFlops, decodeFlops } from "@randattn/core";

// Notes §4 "Why KV caching": recomputing everything per new token costs O(N³ d) in total; with a
// cache, O(N² d).
describe("decode FLOPs: cached versus recompute", () => {
  const spec: AttentionSpec = { form: "gqa", dIn: 64, numHeads: 8, numKvHeads: 2, headDim: 8 };

  it("sums one attentionFlops call per generated token", () => {
    const N = 12;
    let cached = 0;
    let recompute = 0;
    for (let t = 1; t <= N; t++) {
      cached += attentionFlops(spec, { numQueries: 1, numKeys: t, numNewKeys: 1 }).total;
      recompute += attentionFlops(spec, { numQueries: t, numKeys: t }).total;
    }
    expect(decodeFlops(spec, N)).toBe(cached);
    expect(decodeFlops(spec, N, { mode: "recompute" })).toBe(recompute);
    expect(decodeFlops(spec, N, { numLayers: 3 })).toBe(3 * cached);
  });

  it("is exactly cubic in N_tokens when recomputing and exactly quadratic with a cache", () => {
    // Finite differences of an exact polynomial: Δ^{deg+1} = 0 and Δ^{deg} = deg!·(leading coefficient) ≠ 0.
    const diff = (xs: number[]) => xs.slice(1).map((x, i) => x - xs[i]);
    const nth = (xs: number[], k: number): number[] => (k === 0 ? xs : nth(diff(xs), k - 1));
    const Ns = [1, 2, 3, 4, 5, 6, 7, 8];
    const recompute = Ns.map((n) => decodeFlops(spec, n, { mode: "recompute" }));
    const cached = Ns.map((n) => decodeFlops(spec, n));
    expect(nth(recompute, 4).every((v) => v === 0)).toBe(true);
    expect(new Set(nth(recompute, 3)).size).toBe(1);
    expect(nth(recompute, 3)[0]).toBeGreaterThan(0);
    expect(nth(cached, 3).every((v) => v === 0)).toBe(true);
    expect(nth(cached, 2)[0]).toBeGreaterThan(0);
    // Leading terms: step t costs H·t²·(2·d_QK + c + 2·d_V) recomputing (Σ t² has Δ³ = 2) and
    // H·t·(2·d_QK + c + 2·d_V) with a cache (Σ t has Δ² = 1); c = 5 softmax FLOPs per score.
    const H = 8;
    const dQK = 8;
    const perScore = 2 * dQK + 5 + 2 * dQK; // QKᵀ, softmax, A·V (d_V = d_QK)
    expect(nth(recompute, 3)[0]).toBe(2 * H * perScore); // Σ t² has Δ³ = 2
    expect(nth(cached, 2)[0]).toBe(H * perScore); // Σ t has Δ² = 1
  });

  it("rejects bad arguments", () => {
    expect(() => decodeFlops(spec, 0)).toThrow(/numTokens: expected an integer ≥ 1, got 0/);
    expect(() => decodeFlops(spec, 4, { mode: "lazy" as "cached" })).toThrow(
      /options\.mode: expected one of "cached", "recompute", got "lazy"/,
    );
  });
});
