import seedrandom from "seedrandom";
import { describe, expect, it } from "vitest";
import { ensureKernelMemory, newKernelInstance, packOperandF32, packOperandF64 } from "../../src/kernels/gemm.js";
import { matmulInto, matmulTransBInto } from "../../src/linalg/matmul.js";

// The one-row kernels gemv_{f64,f32}_{g4,seq} (watGemv.ts) replace the JavaScript few-rows kernels
// for a decoded token's projections, so each output must be theirs bit for bit: `_g4` =
// matmulInto on one row (smallRowsMatmul's groups of four), `_seq` = matmulTransBInto on one row
// (smallRowsMatmulTransB's one term at a time), on the packed panels of W (or of Wᵀ); float32: x
// and W rounded to float32, the result rounded. Shapes: k below, at and off a multiple of 4, n off
// the panel width, one panel and many; entries include ±0, tiny and large magnitudes so that a
// different grouping or a fused multiply-add would show in the last bits.
describe("gemv kernels: one-row products with the scalar kernels' bits", () => {
  const K = newKernelInstance();
  ensureKernelMemory(K, 1 << 22);
  const X = 1024;
  const B = 1 << 16;
  const value = (rng: () => number) => {
    const u = rng();
    if (u < 0.03) return 0;
    if (u < 0.06) return -0;
    const mag = 10 ** Math.floor(rng() * 16 - 8); // products over 32 decades: cancellations show any change of order
    return (rng() - 0.5) * mag;
  };
  for (const precision of ["float64", "float32"] as const) {
    for (const transposed of [false, true]) {
      it(`${precision} ${transposed ? "x Wᵀ (seq)" : "x W (g4)"}`, () => {
        const f32 = precision === "float32";
        const NR = f32 ? 8 : 4;
        const rng = seedrandom(`gemv-${precision}-${transposed}`);
        let checked = 0;
        const check = (k: number, n: number, x: Float64Array, w: Float64Array) => {
          const xr = f32 ? x.map(Math.fround) : x;
          const wr = f32 ? w.map(Math.fround) : w;
          const want = new Float64Array(n);
          if (transposed) matmulTransBInto(xr, wr, want, 1, k, n);
          else matmulInto(xr, wr, want, 1, k, n, false);
          const packed = f32 ? packOperandF32(w, transposed, k, n) : packOperandF64(w, transposed, k, n);
          if (packed === undefined) throw new Error("not packable");
          const panels = Math.ceil(n / NR);
          const C = B + packed.panels.byteLength;
          if (f32) K.f32.set(packed.panels as Float32Array, B / 4);
          else K.f64.set(packed.panels as Float64Array, B / 8);
          K.f64.set(xr, X / 8);
          K.f64.fill(Number.NaN, C / 8, C / 8 + panels * NR + 8); // stale output must not survive
          const fn = f32 ? (transposed ? K.gemv_f32_seq : K.gemv_f32_g4) : transposed ? K.gemv_f64_seq : K.gemv_f64_g4;
          fn(X, B, C, k, panels);
          for (let j = 0; j < n; j++) {
            const got = f32 ? Math.fround(K.f64[C / 8 + j]) : K.f64[C / 8 + j];
            const exp = f32 ? Math.fround(want[j]) : want[j];
            if (!Object.is(got, exp)) throw new Error(`k ${k}, n ${n}, column ${j}: ${got} ≠ ${exp}`);
            checked++;
          }
          // nothing written past the last panel
          expect(Number.isNaN(K.f64[C / 8 + panels * NR])).toBe(true);
          return want;
        };
        for (const k of [1, 2, 3, 4, 5, 8, 15, 16, 64, 65, 191, 256]) {
          for (const n of [1, 3, 4, 7, 8, 9, 33, 130]) {
            check(
              k,
              n,
              Float64Array.from({ length: k }, () => value(rng)),
              Float64Array.from({ length: k * n }, () => value(rng)), // k×n, or n×k (Wᵀ stored)
            );
          }
        }
        // A sum whose value depends on the grouping, exactly representable in float32: terms
        // 2⁶⁰, 0, 0, 0, −2⁶⁰, 1, 0, 0 give 0 in groups of four ((−2⁶⁰ + 1) rounds to −2⁶⁰) and 1
        // one term at a time — so each kernel must follow its own scalar kernel's order.
        const terms = [2 ** 60, 0, 0, 0, -(2 ** 60), 1, 0, 0];
        const n = NR + 1;
        const w = new Float64Array(8 * n);
        for (let p = 0; p < 8; p++) for (let j = 0; j < n; j++) w[transposed ? j * 8 + p : p * n + j] = terms[p];
        const y = check(8, n, new Float64Array(8).fill(1), w);
        expect(y[n - 1]).toBe(transposed ? 1 : 0);
        expect(checked).toBe(12 * 195 + NR + 1);
      });
    }
  }
});
