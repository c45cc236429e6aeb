import { Matrix, getKernelBackend, matmul, matmulTransA, matmulTransB, setKernelBackend, transpose } from "@randattn/core";
import {
  gemmWasm,
  gemmWasmPacked,
  gemmWasmPacked32,
  matmulInto,
  matmulTransAInto,
  matmulTransBInto,
  packOperandF32,
  packOperandF64,
} from "@randattn/core/internal";
import { afterAll, describe, expect, it } from "vitest";
import { SHAPES, U64, componentwiseError, literalProduct, rnd } from "./helpers.js";

// Float64 SIMD kernels vs the literal loops and vs the scalar kernels. Both are sums of the same k
// products in different orders, so each entry differs by ≤ 2γ_k (|A||B|)_ij ≈ 2k·u₆₄ (Higham Thm 3.5);
// the 1e-12 componentwise tolerance sits above that for k ≤ 1e3 and far below any bug.
const TOL = 1e-12;
const previous = getKernelBackend();
afterAll(() => {
  setKernelBackend(previous);
});

function both<T>(f: () => T): { wasm: T; scalar: T } {
  setKernelBackend("wasm");
  const wasm = f();
  setKernelBackend("scalar");
  const scalar = f();
  return { wasm, scalar };
}

describe("float64 WebAssembly kernels agree with the scalar reference to 1e-12", () => {
  for (const [m, k, n] of SHAPES) {
    it(`${m}×${k} · ${k}×${n}: A B, A Bᵀ, Aᵀ B`, () => {
      const a = rnd(m, k, "a", m, k, n);
      const b = rnd(k, n, "b", m, k, n);
      const { c, abs } = literalProduct(a, b);
      expect(2 * k * U64).toBeLessThan(TOL);
      const bt = transpose(b);
      const at = transpose(a);
      const r = both(() => [matmul(a, b), matmulTransB(a, bt), matmulTransA(at, b)]);
      for (let v = 0; v < 3; v++) {
        expect(componentwiseError(r.wasm[v].data, c, abs)).toBeLessThan(TOL);
        expect(componentwiseError(r.wasm[v].data, r.scalar[v].data, abs)).toBeLessThan(TOL);
      }
    });
  }

  it("accumulate mode adds into C (matmulInto, matmulTransAInto)", () => {
    const [m, k, n] = [23, 41, 19];
    const a = rnd(m, k, "acc-a");
    const b = rnd(k, n, "acc-b");
    const c0 = rnd(m, n, "acc-c");
    const { c, abs } = literalProduct(a, b);
    const at = transpose(a);
    const expected = c.map((x, i) => x + c0.data[i]);
    const absC = abs.map((x, i) => x + Math.abs(c0.data[i]));
    setKernelBackend("wasm");
    const out1 = c0.data.slice();
    matmulInto(a.data, b.data, out1, m, k, n, true);
    const out2 = c0.data.slice();
    matmulTransAInto(at.data, b.data, out2, k, m, n, true);
    expect(componentwiseError(out1, expected, absC)).toBeLessThan(TOL);
    expect(componentwiseError(out2, expected, absC)).toBeLessThan(TOL);
  });

  it("splits a C larger than the WebAssembly buffer into row chunks (9×2 · 2×120000)", () => {
    const [m, k, n] = [9, 2, 120_000];
    const a = rnd(m, k, "chunk-a");
    const b = rnd(k, n, "chunk-b");
    const { wasm, scalar } = both(() => matmul(a, b));
    const { abs } = literalProduct(a, b);
    expect(componentwiseError(wasm.data, scalar.data, abs)).toBeLessThan(TOL);
  });

  it("handles empty operands: 0 rows, 0 columns, k = 0 (C = 0)", () => {
    setKernelBackend("wasm");
    expect(matmul(new Matrix(0, 3), rnd(3, 4, "e1")).shape).toBe("0×4");
    expect(matmul(rnd(3, 2, "e2"), new Matrix(2, 0)).shape).toBe("3×0");
    const c = new Float64Array(6).fill(7);
    matmulInto(new Float64Array(0), new Float64Array(0), c, 2, 0, 3, false);
    expect(Array.from(c)).toEqual([0, 0, 0, 0, 0, 0]);
    const c2 = new Float64Array(6).fill(7);
    matmulTransBInto(new Float64Array(0), new Float64Array(0), c2, 2, 0, 3);
    expect(Array.from(c2)).toEqual([0, 0, 0, 0, 0, 0]);
  });
});

describe("weights packed once (packOperandF64 + gemmWasmPacked) give gemmWasm's bits", () => {
  // Same products, same sequential sum over p per entry, so equal bit for bit — on edge tiles
  // (m, n off the 4×4 tile), with accumulation, transposed B, and over several row chunks.
  const same = (a: Float64Array, b: Float64Array) => a.length === b.length && a.every((x, i) => Object.is(x, b[i]));
  for (const [m, k, n] of [
    [1, 1, 1],
    [5, 3, 7],
    [9, 64, 130],
    [128, 64, 384],
    [37, 256, 1024],
    [3000, 17, 600], // C chunk of 2^20 floats: two row chunks
  ] as const) {
    it(`${m}×${k} · ${k}×${n}`, () => {
      const a = rnd(m, k, "pa", m, k, n).data;
      const b = rnd(k, n, "pb", m, k, n).data;
      const bt = transpose(new Matrix(k, n, b)).data;
      const c0 = rnd(m, n, "pc", m, k, n).data;
      for (const acc of [false, true]) {
        const want = Float64Array.from(c0);
        gemmWasm("float64", false, false, a, b, want, m, k, n, acc);
        const got = Float64Array.from(c0);
        gemmWasmPacked(a, packOperandF64(b, false, k, n)!, got, m, acc);
        expect(same(got, want), `acc ${acc}`).toBe(true);
        const gotT = Float64Array.from(c0);
        gemmWasmPacked(a, packOperandF64(bt, true, k, n)!, gotT, m, acc);
        expect(same(gotT, want), `transB, acc ${acc}`).toBe(true);
      }
    });
  }
  it("packs only one-block shapes (k ≤ 256, n ≤ 1024)", () => {
    expect(packOperandF64(new Float64Array(257 * 4), false, 257, 4)).toBeUndefined();
    expect(packOperandF64(new Float64Array(4 * 1025), false, 4, 1025)).toBeUndefined();
  });
});

describe("float32 weights packed once (packOperandF32 + gemmWasmPacked32) give gemmWasm float32's bits", () => {
  // The pretrained models' float32 option: the same float32 products and the same sequential
  // float32 sum over p per entry as gemmWasm("float32", …) (rounded inputs, 8-column panels), so
  // equal bit for bit on edge tiles (m off 4, n off 8), transposed B and several row chunks.
  const same = (a: Float64Array, b: Float64Array) => a.length === b.length && a.every((x, i) => Object.is(x, b[i]));
  for (const [m, k, n] of [
    [1, 1, 1],
    [5, 3, 7],
    [9, 64, 130],
    [128, 64, 48],
    [128, 192, 64],
    [37, 256, 1024],
    [3000, 17, 600],
  ] as const) {
    it(`${m}×${k} · ${k}×${n}`, () => {
      const a = rnd(m, k, "qa", m, k, n).data;
      const b = rnd(k, n, "qb", m, k, n).data;
      const bt = transpose(new Matrix(k, n, b)).data;
      const want = new Float64Array(m * n);
      gemmWasm("float32", false, false, a, b, want, m, k, n, false);
      // A float64 product would differ: the check sees float32 arithmetic, not just equality.
      const c64 = new Float64Array(m * n);
      gemmWasm("float64", false, false, a, b, c64, m, k, n, false);
      if (k > 1) expect(same(want, c64)).toBe(false);
      const got = new Float64Array(m * n).fill(Number.NaN);
      gemmWasmPacked32(a, packOperandF32(b, false, k, n)!, got, m);
      expect(same(got, want)).toBe(true);
      const gotT = new Float64Array(m * n).fill(Number.NaN);
      gemmWasmPacked32(a, packOperandF32(bt, true, k, n)!, gotT, m);
      expect(same(gotT, want), "transB").toBe(true);
    });
  }
  it("packs only one-block shapes (k ≤ 256, n ≤ 1024)", () => {
    expect(packOperandF32(new Float64Array(257 * 4), false, 257, 4)).toBeUndefined();
    expect(packOperandF32(new Float64Array(4 * 1025), false, 4, 1025)).toBeUndefined();
  });
});
