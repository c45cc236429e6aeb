import {
  ValueError,
  attention,
  attention32,
  dotKernel,
  float32AttentionErrorBound,
  getKernelBackend,
  initMultiHeadWeights,
  matmul,
  multiHeadAttention,
  randomMatrix,
  setKernelBackend,
  streamingAttention,
  streamingAttention32,
} from "@randattn/core";
import { describe, expect, it } from "vitest";
import { rnd } from "./helpers.js";

// AttentionOptions.precision: "float32" routes attention / streamingAttention (and so
// multiHeadAttention) to the float32 kernels; the error stays within the a-priori bound of
// `float32AttentionErrorBound` (module doc of fast/attention32.ts), and "float64" is the default.

function maxAbsDiff(x: { data: Float64Array }, y: { data: Float64Array }): number {
  let e = 0;
  for (let i = 0; i < x.data.length; i++) e = Math.max(e, Math.abs(x.data[i] - y.data[i]));
  return e;
}

describe("options.precision", () => {
  const cases: [number, number, number, number][] = [
    [1, 1, 1, 1],
    [7, 13, 5, 3],
    [65, 129, 33, 17],
  ];
  for (const [nQ, nKV, d, dV] of cases) {
    it(`${nQ}×${nKV}, d ${d}/${dV}: float32 = the float32 kernels, within the bound of float64`, () => {
      const q = rnd(nQ, d, "pq", nQ);
      const k = rnd(nKV, d, "pk", nQ);
      const v = rnd(nKV, dV, "pv", nQ);
      for (const mask of [undefined, { kind: "causal" as const }, { kind: "padding" as const, keyLength: Math.max(1, nKV - 2) }]) {
        const y64 = attention(q, k, v, { mask });
        expect(attention(q, k, v, { mask, precision: "float64" }).data).toEqual(y64.data); // the default
        const y32 = attention(q, k, v, { mask, precision: "float32" });
        const s32 = streamingAttention(q, k, v, { mask, precision: "float32", blockSize: 5, queryBlockSize: 3 });
        expect(y32.data).toEqual(attention32(q, k, v, { mask }).data);
        expect(s32.data).toEqual(streamingAttention32(q, k, v, { mask, blockSize: 5, queryBlockSize: 3 }).data);
        const bound = float32AttentionErrorBound(q, k, v, { blockSize: 5 });
        expect(maxAbsDiff(y32, y64)).toBeLessThanOrEqual(bound);
        expect(maxAbsDiff(s32, y64)).toBeLessThanOrEqual(bound);
      }
    });
  }

  it("float32 really computes in float32 (differs from float64 by more than float64 rounding)", () => {
    const q = rnd(40, 16, "rq");
    const k = rnd(50, 16, "rk");
    const v = rnd(50, 8, "rv");
    const diff = maxAbsDiff(attention(q, k, v, { precision: "float32" }), attention(q, k, v));
    expect(diff).toBeGreaterThan(1e-10);
  });

  it("multiHeadAttention honours it: the output error is within max_c Σ_h bound_h · Σ_p |W_O[h·d_V+p, c]|", () => {
    const w = initMultiHeadWeights({ dIn: 12, numHeads: 4, numKvHeads: 2, headDim: 5 }, [3, "prec-mha"]);
    const x = randomMatrix(9, 12, {}, [3, "prec-x"]);
    const y64 = multiHeadAttention(x, x, w, { mask: { kind: "causal" } });
    const y32 = multiHeadAttention(x, x, w, { mask: { kind: "causal" }, precision: "float32" });
    // |ΔY[i,c]| ≤ Σ_h Σ_p |ΔY_h[i,p]|·|W_O[h·d_V + p, c]| ≤ max_c Σ_h bound_h Σ_p |W_O[h·d_V + p, c]|.
    const dV = 5;
    const perHead = Array.from({ length: 4 }, (_, h) => {
      const g = Math.floor(h / 2);
      return float32AttentionErrorBound(matmul(x, w.queries[h]), matmul(x, w.keys[g]), matmul(x, w.values[g]));
    });
    let bound = 0;
    for (let c = 0; c < w.output.cols; c++) {
      let s = 0;
      for (let h = 0; h < 4; h++) for (let p = 0; p < dV; p++) s += perHead[h] * Math.abs(w.output.get(h * dV + p, c));
      bound = Math.max(bound, s);
    }
    const diff = maxAbsDiff(y32, y64);
    expect(diff).toBeGreaterThan(0);
    expect(diff).toBeLessThanOrEqual(bound);
  });

  it("rejects unsupported combinations and unknown values, naming options.precision", () => {
    const q = rnd(3, 2, "bq");
    const k = rnd(4, 2, "bk");
    const v = rnd(4, 2, "bv");
    expect(() => attention(q, k, v, { precision: "float16" as never })).toThrow(ValueError);
    expect(() => attention(q, k, v, { precision: "float16" as never })).toThrow(/options\.precision/);
    expect(() => streamingAttention(q, k, v, { precision: "float32", kernel: dotKernel((s) => s * s) })).toThrow(
      /options\.precision: expected "float64" unless the kernel is softmax.*got "float32" with kernel "dot"/,
    );
    expect(() => attention(q, k, v, { precision: "float32", kernel: dotKernel((s) => s * s) })).toThrow(ValueError);
  });

  it("any mask in float32 on the fused path (within the bound); float64 where only the scalar kernels exist", () => {
    const q = rnd(30, 8, "mq32");
    const k = rnd(45, 8, "mk32");
    const v = rnd(45, 6, "mv32");
    const mask = { kind: "allowed" as const, sets: Array.from({ length: 30 }, (_, i) => [i, (7 * i) % 45, 44]) };
    const allowed = randomMatrix(30, 45, {}, [3, "dense32"]);
    for (let i = 0; i < allowed.data.length; i++) allowed.data[i] = allowed.data[i] > 0 ? 1 : 0;
    const dense = { kind: "dense" as const, allowed };
    const previous = getKernelBackend();
    try {
      for (const m of [mask, dense]) {
        setKernelBackend("wasm");
        const y64 = attention(q, k, v, { mask: m, onEmptyRow: "zero" });
        const bound = float32AttentionErrorBound(q, k, v, { blockSize: 7 });
        for (const y32 of [
          attention(q, k, v, { mask: m, onEmptyRow: "zero", precision: "float32" }),
          streamingAttention(q, k, v, { mask: m, onEmptyRow: "zero", precision: "float32", blockSize: 7, queryBlockSize: 4 }),
        ]) {
          const diff = maxAbsDiff(y32, y64);
          expect(diff).toBeGreaterThan(0);
          expect(diff).toBeLessThanOrEqual(bound);
        }
        setKernelBackend("scalar");
        const js = attention(q, k, v, { mask: m, onEmptyRow: "zero", precision: "float32" });
        expect(maxAbsDiff(js, attention(q, k, v, { mask: m, onEmptyRow: "zero" }))).toBe(0);
      }
    } finally {
      setKernelBackend(previous);
    }
  });
});
