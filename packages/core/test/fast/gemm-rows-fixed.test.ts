import { wasmKernelBytes } from "@randattn/core/internal";
import seedrandom from "seedrandom";
import { describe, expect, it } from "vitest";
import { newKernelInstance } from "../../src/kernels/gemm.js";
import { F32_MR, F32_NR, F64_MR, F64_NR, RA_FIXED_LDA } from "../../src/kernels/wat.js";

// The fixed-stride row-major kernels gemm_*_ra<lda> (wat.ts) and the dispatch in newKernelInstance
// that runs whole row tiles on them and the rest on the general gemm_*_ra: every C entry must be the
// general kernel's, bit for bit (the same sum in the same order), and nothing outside the mc × nc
// block of C may be written. Shapes: mc a multiple of MR and not (the remainder rows), fewer than MR
// rows (general form only), nc with an edge column tile, kc below and equal to lda, acc 0 and 1.
type Raw = Record<string, (...args: number[]) => void> & { memory: WebAssembly.Memory };

const A = 1 << 16;
const B = 1 << 19;
const C = 1 << 21;
const BYTES = 1 << 22;

function fill(mem: Float64Array | Float32Array, from: number, n: number, seed: string): void {
  const rng = seedrandom(seed);
  for (let i = 0; i < n; i++) mem[from + i] = rng() - 0.5;
}

describe("gemm_*_ra<lda>: fixed-stride row-major kernels", () => {
  const raw = new WebAssembly.Instance(new WebAssembly.Module(wasmKernelBytes()), {}).exports as unknown as Raw;
  const disp = newKernelInstance();
  for (const mem of [raw.memory, disp.memory]) mem.grow(Math.ceil((BYTES - mem.buffer.byteLength) / 65536));
  for (const [ty, es, MR, NR] of [
    ["f64", 8, F64_MR, F64_NR],
    ["f32", 4, F32_MR, F32_NR],
  ] as const) {
    for (const lda of RA_FIXED_LDA) {
      for (const [mc, nc, kc, acc] of [
        [4 * 5, 2 * NR, lda, 0],
        [4 * 3 + 3, 2 * NR + 3, Math.min(lda, 5), 1],
        [MR - 1, NR + 1, lda, 0],
        [4 * 2 + 1, NR, lda, 1],
      ]) {
        it(`${ty} lda ${lda}: ${mc}×${nc}, kc ${kc}, acc ${acc} — the general kernel's bits, nothing else written`, () => {
          const ldb = kc + 3; // a panel deeper than the kc used (as K and V slices are)
          const ldc = nc + 5;
          const views = [raw.memory, disp.memory].map((m) => (ty === "f64" ? new Float64Array(m.buffer) : new Float32Array(m.buffer)));
          for (const v of views) {
            fill(v, A / es, mc * lda + 8, `ra-a-${ty}-${lda}`);
            fill(v, B / es, Math.ceil(nc / NR) * NR * ldb, `ra-b-${ty}-${lda}`);
            fill(v, C / es, (mc + 2) * ldc, `ra-c-${ty}-${lda}`);
          }
          const before = views[1].slice(C / es, C / es + (mc + 2) * ldc);
          raw[`gemm_${ty}_ra`](A, lda, B, ldb, C, ldc, mc, nc, kc, acc);
          (ty === "f64" ? disp.gemm_f64_ra : disp.gemm_f32_ra)(A, lda, B, ldb, C, ldc, mc, nc, kc, acc);
          const want = views[0].subarray(C / es, C / es + (mc + 2) * ldc);
          const got = views[1].subarray(C / es, C / es + (mc + 2) * ldc);
          let written = 0;
          for (let i = 0; i < mc + 2; i++) {
            for (let j = 0; j < ldc; j++) {
              const o = i * ldc + j;
              if (i < mc && j < nc) {
                expect(Object.is(got[o], want[o])).toBe(true);
                if (!Object.is(got[o], before[o])) written++;
              } else expect(Object.is(got[o], before[o])).toBe(true);
            }
          }
          expect(written).toBe(mc * nc); // every entry of the block was computed
        });
      }
    }
    it(`${ty}: the fixed form computes whole row tiles only (rows past mc − mc mod MR untouched)`, () => {
      const lda = 64;
      const mc = 2 * MR + 1;
      const nc = NR;
      const ldc = nc;
      const v = ty === "f64" ? new Float64Array(raw.memory.buffer) : new Float32Array(raw.memory.buffer);
      fill(v, A / es, mc * lda, "ra-whole-a");
      fill(v, B / es, NR * lda, "ra-whole-b");
      v.fill(Number.NaN, C / es, C / es + (mc + 1) * ldc);
      raw[`gemm_${ty}_ra${lda}`](A, B, lda, C, ldc, mc, nc, lda, 0);
      for (let o = 0; o < (mc + 1) * ldc; o++) expect(Number.isNaN(v[C / es + o])).toBe(o >= 2 * MR * ldc);
    });
  }
});
