// Issue #6: the float32 attention paths beyond float32's range. attention32, streamingAttention32
// and fastAttention/attention/streamingAttention with precision "float32" used to return NaN/±∞
// (inputs, logits or scale beyond ≈ 1e19) or a silently wrong 0 (values at 1e-300, which float32
// flushes to 0). They now compute in float64 there (as core's attention already did on its
// JavaScript path), on the fused WebAssembly driver and on the JavaScript loops alike, and equal
// the max-shifted plain-loop reference to float64 accuracy. Inside the range they stay float32.
import {
  type Matrix,
  attention,
  attention32,
  fastAttention,
  float32AttentionErrorBound,
  getKernelBackend,
  setKernelBackend,
  streamingAttention,
  streamingAttention32,
} from "@randattn/core";
import { afterAll, describe, expect, it } from "vitest";
import { allFinite, refAttention, relMaxErr, scaled } from "../reliability/reference.js";
import { U32, rnd } from "./helpers.js";

const previous = getKernelBackend();
afterAll(() => {
  setKernelBackend(previous);
});

/** Every float32 entry point of the fast/ module and of core's attention, on (q, k, v). */
function float32Paths(q: Matrix, k: Matrix, v: Matrix, scale?: number): [string, Matrix][] {
  const o = { scale, blockSize: 5, queryBlockSize: 3 };
  const kernel = scale === undefined ? undefined : { kind: "softmax" as const, scale };
  return [
    ["attention32", attention32(q, k, v, { scale })],
    ["streamingAttention32", streamingAttention32(q, k, v, o)],
    ["fastAttention materialized", fastAttention(q, k, v, { scale, precision: "float32" })],
    ["fastAttention streaming", fastAttention(q, k, v, { ...o, precision: "float32", mode: "streaming" })],
    ["attention", attention(q, k, v, { kernel, precision: "float32" })],
    ["streamingAttention", streamingAttention(q, k, v, { kernel, precision: "float32", blockSize: 5, queryBlockSize: 3 })],
  ];
}

// [N_Q, N_KV, d]: below FUSED_MIN_WORK (JavaScript loops under "auto") and above it (fused driver).
const SIZES: [number, number, number][] = [
  [3, 6, 4],
  [17, 24, 16],
];

// [scale of Q, K, V, what float32 does]
const EXTREMES: [number, number, number, string][] = [
  [1e20, 1e20, 1e20, "logits ≈ 1e40 overflow"],
  [1e150, 1e150, 1e150, "inputs overflow while rounding"],
  [1, 1, 1e-300, "values flush to 0 (the output was 0)"],
  [1e-300, 1e-300, 1e-300, "everything flushes to 0"],
  [1e10, 1e-10, 1e25, "in range per entry, A V near float32's limit"],
];

describe("float32 attention beyond float32's range: float64 instead", () => {
  for (const backend of ["auto", "wasm", "scalar"] as const) {
    for (const [nQ, nKV, d] of SIZES) {
      for (const [sq, sk, sv, what] of EXTREMES) {
        it(`${backend}, ${nQ}×${nKV}×${d}, Q×${sq} K×${sk} V×${sv} (${what})`, () => {
          setKernelBackend(backend);
          const q = scaled(rnd(nQ, d, "q", nQ), sq);
          const k = scaled(rnd(nKV, d, "k", nQ), sk);
          const v = scaled(rnd(nKV, 3, "v", nQ), sv);
          const ref = refAttention(q, k, v);
          for (const [name, y] of float32Paths(q, k, v)) {
            expect(allFinite(y), name).toBe(true);
            expect(relMaxErr(y, ref), name).toBeLessThanOrEqual(1e-12);
          }
        });
      }
      it(`${backend}, ${nQ}×${nKV}×${d}, scale 1e37 (the float32 logits overflow)`, () => {
        setKernelBackend(backend);
        const q = rnd(nQ, d, "q", nQ);
        const k = rnd(nKV, d, "k", nQ);
        const v = rnd(nKV, 3, "v", nQ);
        expect(Math.fround(1e37 * 100)).toBe(Number.POSITIVE_INFINITY);
        const ref = refAttention(q, k, v, { scale: 1e37 });
        for (const [name, y] of float32Paths(q, k, v, 1e37)) {
          expect(allFinite(y), name).toBe(true);
          expect(relMaxErr(y, ref), name).toBeLessThanOrEqual(1e-12);
        }
      });
      it(`${backend}, ${nQ}×${nKV}×${d}, ordinary inputs: still float32 (within the a-priori bound, not float64)`, () => {
        setKernelBackend(backend);
        const q = rnd(nQ, d, "q", nQ);
        const k = rnd(nKV, d, "k", nQ);
        const v = rnd(nKV, 3, "v", nQ);
        const ref = refAttention(q, k, v);
        const bound = float32AttentionErrorBound(q, k, v, { blockSize: 5 });
        for (const [name, y] of float32Paths(q, k, v)) {
          let err = 0;
          for (let i = 0; i < y.data.length; i++) err = Math.max(err, Math.abs(y.data[i] - ref.data[i]));
          expect(err, name).toBeLessThanOrEqual(bound);
          expect(err, name).toBeGreaterThan(1e-13); // a float64 result would be within ≈ 1e-16
        }
      });
    }
  }

  it("the failures being guarded are real: float32 overflows at 1e20² and flushes 1e-300 to 0", () => {
    expect(Math.fround(1e20 * 1e20)).toBe(Number.POSITIVE_INFINITY);
    expect(Math.fround(1e150)).toBe(Number.POSITIVE_INFINITY);
    expect(Math.fround(1e-300)).toBe(0);
  });

  it("float32AttentionErrorBound: the float32 formula inside the range, float64's unit roundoff outside", () => {
    const q = rnd(4, 4, "bq");
    const k = rnd(6, 4, "bk");
    const v = rnd(6, 2, "bv");
    const formula = (qq: Matrix, kk: Matrix, vv: Matrix, u: number): number => {
      let qk = 0;
      for (let i = 0; i < qq.rows; i++)
        for (let j = 0; j < kk.rows; j++) {
          let s = 0;
          for (let p = 0; p < qq.cols; p++) s += Math.abs(qq.data[i * qq.cols + p] * kk.data[j * kk.cols + p]);
          qk = Math.max(qk, s);
        }
      const vmax = Math.max(...vv.data.map(Math.abs));
      // d_QK + 4: the dot product and the float32 shift S − m; + 12: the former 4 and the f32x4 exp (≤ 2 ulp, ×2).
      return vmax * u * (2 * 0.5 * (4 + 4) * qk + 6 + 2 * Math.ceil(6 / 256) + 12);
    };
    expect(float32AttentionErrorBound(q, k, v)).toBeCloseTo(formula(q, k, v, U32), 20);
    const [q2, k2, v2] = [scaled(q, 1e20), scaled(k, 1e20), scaled(v, 1e20)];
    const b2 = float32AttentionErrorBound(q2, k2, v2);
    expect(Math.abs(b2 - formula(q2, k2, v2, 2 ** -53)) / b2).toBeLessThanOrEqual(1e-14);
  });
});
