import {
  NonFiniteError,
  NumericalError,
  ShapeError,
  ValueError,
  attention32,
  fastAttention,
  float32AttentionErrorBound,
  getKernelBackend,
  setKernelBackend,
  streamingAttention32,
} from "@randattn/core";
import { afterAll, describe, expect, it } from "vitest";
import { literalAttention, relMaxError, rnd } from "./helpers.js";

const previous = getKernelBackend();
afterAll(() => {
  setKernelBackend(previous);
});

function maxAbsDiff(x: { data: Float64Array }, y: { data: Float64Array }): number {
  let e = 0;
  for (let i = 0; i < x.data.length; i++) e = Math.max(e, Math.abs(x.data[i] - y.data[i]));
  return e;
}

// (N_Q, N_KV, d_QK, d_V): cross-attention, d_QK ≠ d_V, sizes off the tiles and blocks.
const CASES: [number, number, number, number][] = [
  [1, 1, 1, 1],
  [7, 13, 5, 3],
  [37, 70, 16, 9],
  [65, 129, 33, 17],
];

describe("fast exact softmax attention", () => {
  for (const [nQ, nKV, d, dV] of CASES) {
    const q = rnd(nQ, d, "q", nQ, nKV);
    const k = rnd(nKV, d, "k", nQ, nKV);
    const v = rnd(nKV, dV, "v", nQ, nKV);
    const ref = literalAttention(q, k, v, 1 / Math.sqrt(d));

    it(`${nQ}×${nKV}, d=${d}, d_V=${dV}: float64 materialized and streaming = literal Z⁻¹AV to 1e-12`, () => {
      for (const backend of ["wasm", "scalar"] as const) {
        setKernelBackend(backend);
        expect(relMaxError(fastAttention(q, k, v), ref)).toBeLessThan(1e-12);
        expect(relMaxError(fastAttention(q, k, v, { mode: "streaming", blockSize: 16, queryBlockSize: 10 }), ref)).toBeLessThan(1e-12);
      }
    });

    it(`${nQ}×${nKV}, d=${d}, d_V=${dV}: float32 within the stated float32 bound`, () => {
      setKernelBackend("auto");
      const bound = float32AttentionErrorBound(q, k, v, { blockSize: 16 });
      expect(bound).toBeLessThan(1e-3); // the bound itself is small: a wrong result (O(1)) fails it
      expect(maxAbsDiff(attention32(q, k, v), ref)).toBeLessThanOrEqual(bound);
      expect(maxAbsDiff(streamingAttention32(q, k, v, { blockSize: 16 }), ref)).toBeLessThanOrEqual(bound);
    });
  }

  it("causal (default offset N_KV − N_Q, ERRATA) and padding masks match the literal masked formula", () => {
    const q = rnd(20, 8, "mq");
    const k = rnd(45, 8, "mk");
    const v = rnd(45, 6, "mv");
    const s = 0.7;
    const causal = literalAttention(q, k, v, s, (i) => 45 - 20 + i + 1);
    const padded = literalAttention(q, k, v, s, () => 30);
    for (const mode of ["materialized", "streaming"] as const) {
      const o = { scale: s, mode, blockSize: 7, queryBlockSize: 6 };
      expect(relMaxError(fastAttention(q, k, v, { ...o, mask: { kind: "causal" } }), causal)).toBeLessThan(1e-12);
      expect(relMaxError(fastAttention(q, k, v, { ...o, mask: { kind: "padding", keyLength: 30 } }), padded)).toBeLessThan(1e-12);
      const bound = float32AttentionErrorBound(q, k, v, { scale: s, blockSize: 7 });
      expect(maxAbsDiff(fastAttention(q, k, v, { ...o, precision: "float32", mask: { kind: "causal" } }), causal)).toBeLessThanOrEqual(
        bound,
      );
    }
  });

  it("keeps logits of ±1e4 finite (max subtraction) in both modes", () => {
    const q = rnd(5, 4, "bq");
    const k = rnd(9, 4, "bk");
    for (let i = 0; i < q.data.length; i++) q.data[i] *= 300;
    const v = rnd(9, 3, "bv");
    const ref = literalAttention(q, k, v, 0.5);
    expect(relMaxError(fastAttention(q, k, v, { scale: 0.5 }), ref)).toBeLessThan(1e-12);
    expect(relMaxError(fastAttention(q, k, v, { scale: 0.5, mode: "streaming", blockSize: 2 }), ref)).toBeLessThan(1e-12);
  });

  it("a query row with no allowed key: NumericalError by default, zero row with onEmptyRow: zero", () => {
    const q = rnd(4, 3, "eq");
    const k = rnd(6, 3, "ek");
    const v = rnd(6, 2, "ev");
    const mask = { kind: "causal" as const, offset: -2 }; // rows 0, 1 see no key
    for (const mode of ["materialized", "streaming"] as const) {
      expect(() => fastAttention(q, k, v, { mask, mode })).toThrow(NumericalError);
      const y = fastAttention(q, k, v, { mask, mode, onEmptyRow: "zero", blockSize: 2 });
      expect(Array.from(y.data.subarray(0, 4))).toEqual([0, 0, 0, 0]);
      const ref = literalAttention(q, k, v, 1 / Math.sqrt(3), (i) => Math.max(0, i - 1));
      expect(relMaxError(y, ref)).toBeLessThan(1e-12);
    }
  });

  it("rejects bad input naming the argument, the expected and the actual value", () => {
    const q = rnd(4, 3, "xq");
    const k = rnd(6, 3, "xk");
    const v = rnd(6, 2, "xv");
    expect(() => fastAttention(q, rnd(6, 4, "k4"), v)).toThrow(/keys: expected \*×3 \(cols = queries.cols = 3\), got 6×4/);
    expect(() => fastAttention(q, k, rnd(5, 2, "v5"))).toThrow(/values: expected 6×\* \(rows = keys.rows = 6\), got 5×2/);
    expect(() => fastAttention(rnd(0, 3, "e"), k, v)).toThrow(ShapeError);
    const bad = q.clone();
    bad.data[4] = Number.NaN;
    expect(() => attention32(bad, k, v)).toThrow(NonFiniteError);
    expect(() => attention32(bad, k, v)).toThrow(/queries: expected finite entries, got NaN at \[1, 1\]/);
    expect(() => fastAttention(q, k, v, { precision: "float16" as never })).toThrow(ValueError);
    expect(() => fastAttention(q, k, v, { blockSize: 0 })).toThrow(/options.blockSize: expected an integer ≥ 1, got 0/);
    expect(() => fastAttention(q, k, v, { mask: { kind: "padding", keyLength: 7 } })).toThrow(
      /options.mask.keyLength: expected an integer in \[0, 6\]/,
    );
    expect(() => fastAttention(q, k, v, { mask: { kind: "dense" } as never })).toThrow(
      /options.mask.kind: expected one of "causal", "padding"/,
    );
  });
});
