import { getKernelBackend, matmul, matmulTransA, matmulTransB, setKernelBackend, transpose } from "@randattn/core";
import { kernelBackendFor, matmulInto, matmulTransAInto } from "@randattn/core/internal";
import { afterAll, describe, expect, it } from "vitest";
import { U64, componentwiseError, literalProduct, rnd } from "./helpers.js";

// The few-rows kernels (m < 4: x·W of one decoded token, q·Kᵀ of one query) stream B once instead of
// packing it for the SIMD driver; "auto" routes them there. Same componentwise bound as the other
// kernels: sums of the same k products in another order, ≤ 2γ_k(|A||B|)_ij ≤ 1e-12.
const TOL = 1e-12;
const previous = getKernelBackend();
afterAll(() => {
  setKernelBackend(previous);
});

describe("few-rows kernels (m = 1, 2, 3)", () => {
  it("auto sends m < 4 to them (whatever k, n) and m ≥ 4 to the SIMD driver", () => {
    setKernelBackend("auto");
    for (const m of [1, 2, 3]) expect(kernelBackendFor(m, 4096, 4096)).toBe("scalar");
    expect(kernelBackendFor(4, 4096, 4096)).toBe("wasm");
  });

  for (const m of [1, 2, 3]) {
    for (const [k, n] of [
      [1, 1],
      [3, 5],
      [4, 4],
      [5, 9],
      [7, 1],
      [13, 31],
      [258, 67],
    ]) {
      it(`${m}×${k} · ${k}×${n}: A B, A Bᵀ, Aᵀ B and accumulation against the literal loops`, () => {
        setKernelBackend("auto");
        const a = rnd(m, k, "sa", m, k, n);
        const b = rnd(k, n, "sb", m, k, n);
        const { c, abs } = literalProduct(a, b);
        expect(2 * k * U64).toBeLessThan(TOL);
        for (const y of [matmul(a, b), matmulTransB(a, transpose(b)), matmulTransA(transpose(a), b)]) {
          expect(componentwiseError(y.data, c, abs)).toBeLessThan(TOL);
        }
        // accumulate: C0 + A B, with C0 = A B → 2·A B
        const acc = Float64Array.from(c);
        matmulInto(a.data, b.data, acc, m, k, n, true);
        const acc2 = Float64Array.from(c);
        matmulTransAInto(transpose(a).data, b.data, acc2, k, m, n, true);
        const twice = c.map((x) => 2 * x);
        const abs2 = abs.map((x) => 2 * x);
        expect(componentwiseError(acc, twice, abs2)).toBeLessThan(TOL);
        expect(componentwiseError(acc2, twice, abs2)).toBeLessThan(TOL);
        // and overwrite mode really overwrites
        const junk = new Float64Array(m * n).fill(Number.NaN);
        matmulInto(a.data, b.data, junk, m, k, n, false);
        expect(componentwiseError(junk, c, abs)).toBeLessThan(TOL);
      });
    }
  }
});
