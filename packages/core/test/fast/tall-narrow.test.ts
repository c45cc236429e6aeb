import { getKernelBackend, setKernelBackend } from "@randattn/core";
import { gemmWasmRowsF64, tallNarrowMatmulInto } from "@randattn/core/internal";
import { afterAll, describe, expect, it } from "vitest";
import { componentwiseError, literalProduct, rnd } from "./helpers.js";

// The tall-narrow product of issue 14 (B packed once, A read in place by gemm_f64_ra over the full
// depth) against the literal loop: the same k products in another order, so each entry is within
// 2γ_k (|A||B|)_ij (Higham Thm 3.5) — the suite's 1e-12 componentwise bound. Shapes cover an edge
// tile in rows and columns (m, n not multiples of 4), a final short row chunk (m not a multiple of
// the chunk), k = 1 and the range finder's depth 512.
const TOL = 1e-12;
const previous = getKernelBackend();
afterAll(() => {
  setKernelBackend(previous);
});

describe("gemmWasmRowsF64 / tallNarrowMatmulInto", () => {
  for (const [m, k, n] of [
    [1030, 512, 74],
    [257, 3, 5],
    [64, 1, 8],
    [999, 700, 13],
  ] as const) {
    it(`${m}×${k} · ${k}×${n} matches the literal product to 1e-12 componentwise`, () => {
      const a = rnd(m, k, "tn-a", m, k);
      const b = rnd(k, n, "tn-b", k, n);
      const { c, abs } = literalProduct(a, b);
      const out = new Float64Array(m * n).fill(Number.NaN); // stale contents must be overwritten
      gemmWasmRowsF64(a.data, b.data, out, m, k, n);
      expect(componentwiseError(out, c, abs)).toBeLessThan(TOL);
      for (const backend of ["wasm", "scalar"] as const) {
        setKernelBackend(backend);
        const o2 = new Float64Array(m * n).fill(Number.NaN);
        tallNarrowMatmulInto(a.data, b.data, o2, m, k, n);
        expect(componentwiseError(o2, c, abs)).toBeLessThan(TOL);
      }
    });
  }
});
