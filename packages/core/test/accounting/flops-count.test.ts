import { describe, expect, it } from "vitest";
import { type AttentionSpec, attentionFlops } from "@randattn/core";

// Independent check: run the literal formulas of §2.1–§2.2 / §4.1 as plain loops on tiny sizes,
// counting every multiplication and addition, and compare with attentionFlops (softmax excluded).
function countedGqa(nQ: number, nKV: number, dIn: number, dOut: number, H: number, G: number, dQK: number, dV: number): number {
  let ops = 0;
  const proj = (rows: number, inner: number, cols: number) => {
    for (let i = 0; i < rows; i++) for (let j = 0; j < cols; j++) for (let k = 0; k < inner; k++) ops += 2; // acc += a·b
  };
  for (let h = 0; h < H; h++) proj(nQ, dIn, dQK); // Q_h = X_Q W_Q^h
  for (let g = 0; g < G; g++) {
    proj(nKV, dIn, dQK); // K_g
    proj(nKV, dIn, dV); // V_g
  }
  for (let h = 0; h < H; h++) {
    proj(nQ, dQK, nKV); // Q_h K_gᵀ
    proj(nQ, nKV, dV); // A_h V_g
    for (let i = 0; i < nQ * dV; i++) ops += 1; // Z⁻¹ division
  }
  proj(nQ, H * dV, dOut); // concat(Y_h) W_O
  return ops;
}

describe("attention FLOPs", () => {
  it("MHA/GQA/MQA counts equal a literal operation count", () => {
    for (const [nQ, nKV, dIn, dOut, H, G, dQK, dV] of [
      [1, 1, 1, 1, 1, 1, 1, 1],
      [3, 5, 4, 6, 2, 2, 3, 2],
      [2, 7, 5, 3, 4, 2, 2, 3],
      [4, 4, 6, 6, 6, 1, 2, 2],
    ]) {
      const form = G === H ? "mha" : G === 1 ? "mqa" : "gqa";
      const spec = { form, dIn, dOut, numHeads: H, numKvHeads: G, headDim: dQK, valueDim: dV } as AttentionSpec;
      const f = attentionFlops(spec, { numQueries: nQ, numKeys: nKV, softmaxFlopsPerScore: 0 });
      expect(f.total).toBe(countedGqa(nQ, nKV, dIn, dOut, H, G, dQK, dV));
    }
  });

  it("GQA with G = H gives the MHA count; softmax adds c per score per head", () => {
    const base = { dIn: 16, numHeads: 4, headDim: 4, valueDim: 3 };
    const opts = { numQueries: 5, numKeys: 9 };
    const mha = attentionFlops({ form: "mha", ...base }, opts);
    expect(attentionFlops({ form: "gqa", ...base, numKvHeads: 4 }, opts)).toEqual(mha);
    expect(mha.softmax).toBe(5 * 4 * 5 * 9);
    expect(attentionFlops({ form: "mha", ...base }, { ...opts, softmaxFlopsPerScore: 7 }).total - mha.total).toBe(2 * 4 * 5 * 9);
  });

  it("a cached step projects only the new tokens' keys and values", () => {
    const spec: AttentionSpec = { form: "gqa", dIn: 16, numHeads: 4, numKvHeads: 2, headDim: 4 };
    const full = attentionFlops(spec, { numQueries: 1, numKeys: 10 });
    const cached = attentionFlops(spec, { numQueries: 1, numKeys: 10, numNewKeys: 1 });
    expect(full.keyValueProjection).toBe(2 * 10 * 16 * 2 * (4 + 4));
    expect(cached.keyValueProjection).toBe(2 * 1 * 16 * 2 * (4 + 4));
    expect(cached.scores).toBe(full.scores);
  });

  it("MLA unmerged re-forms K_h, V_h from the latent; merged attends on the latent directly", () => {
    const [dIn, H, dQK, dV, dL, dLQ, dR, nQ, nK, nNew] = [10, 3, 4, 5, 6, 7, 2, 2, 8, 1];
    const spec: AttentionSpec = {
      form: "mla",
      dIn,
      numHeads: H,
      headDim: dQK,
      valueDim: dV,
      latentDim: dL,
      queryLatentDim: dLQ,
      ropeDim: dR,
    };
    const c = 5;
    const un = attentionFlops(spec, { numQueries: nQ, numKeys: nK, numNewKeys: nNew });
    const rope = 3 * (nQ * H * dR + nNew * dR);
    const unLiteral =
      2 * nQ * dIn * dLQ +
      2 * nQ * dLQ * H * dQK +
      2 * nQ * dLQ * H * dR + // L_Q, Q_h, rotary queries
      2 * nNew * dIn * (dL + dR) + // L and the rotary key of the new token
      2 * nK * dL * H * (dQK + dV) + // K_h = L W_LK^h, V_h = L W_LV^h for every cached token
      2 * H * nQ * nK * (dQK + dR) +
      c * H * nQ * nK +
      2 * H * nQ * nK * dV +
      H * nQ * dV +
      2 * nQ * H * dV * dIn +
      rope;
    expect(un.total).toBe(unLiteral);
    const merged = attentionFlops(spec, { numQueries: nQ, numKeys: nK, numNewKeys: nNew, mlaForm: "merged" });
    const mergedLiteral =
      2 * nQ * dIn * dLQ +
      2 * nQ * dLQ * H * dL +
      2 * nQ * dLQ * H * dR + // L_Q, Q̃_h = L_Q W_LQK^h, rotary queries
      2 * nNew * dIn * (dL + dR) +
      2 * H * nQ * nK * (dL + dR) +
      c * H * nQ * nK +
      2 * H * nQ * nK * dL +
      H * nQ * dL +
      2 * nQ * H * dL * dIn +
      rope;
    expect(merged.total).toBe(mergedLiteral);
    expect(merged.keyValueUpProjection).toBe(0);
  });

  it("rejects bad counts", () => {
    const spec: AttentionSpec = { form: "mha", dIn: 8, numHeads: 2, headDim: 4 };
    expect(() => attentionFlops(spec, { numQueries: 0, numKeys: 3 })).toThrow(/options\.numQueries: expected an integer ≥ 1, got 0/);
    expect(() => attentionFlops(spec, { numQueries: 1, numKeys: 3, numNewKeys: 4 })).toThrow(
      /options\.numNewKeys: expected an integer in \[0, 3\], got 4/,
    );
    expect(() => attentionFlops(spec, { numQueries: 1, numKeys: 3, softmaxFlopsPerScore: -1 })).toThrow(/softmaxFlopsPerScore/);
    expect(() => attentionFlops(spec, undefined as unknown as { numQueries: number; numKeys: number })).toThrow(/options/);
  });
});
