import { ShapeError, getKernelBackend, matmul32, matmulTransA32, matmulTransB32, setKernelBackend, transpose } from "@randattn/core";
import { matmul32Into, matmulTransB32Into } from "@randattn/core/internal";
import { afterAll, describe, expect, it } from "vitest";
import { SHAPES, U32, componentwiseError, literalProduct, rnd } from "./helpers.js";

// Float32 products: inputs rounded to float32 (relative u each), k float32 products and sums.
// Componentwise bound (Higham Thm 3.5 with the input rounding): |C₃₂ − C| ≤ (γ_k + 2u + u²)|A||B|
// ≤ (k + 3)·u·(|A||B|)_ij for k·u ≪ 1, u = 2⁻²⁴, plus one final rounding of C (≤ u·|C| ≤ u·|A||B|).
const bound = (k: number) => (k + 4) * U32;
const previous = getKernelBackend();
afterAll(() => {
  setKernelBackend(previous);
});

describe("float32 kernels: within the float32 rounding bound of the exact product", () => {
  for (const backend of ["wasm", "scalar"] as const) {
    for (const [m, k, n] of SHAPES) {
      it(`${backend} ${m}×${k} · ${k}×${n}: A B, A Bᵀ, Aᵀ B within (k + 4)·u·|A||B|`, () => {
        setKernelBackend(backend);
        const a = rnd(m, k, "a32", m, k, n);
        const b = rnd(k, n, "b32", m, k, n);
        const { c, abs } = literalProduct(a, b);
        for (const out of [matmul32(a, b), matmulTransB32(a, transpose(b)), matmulTransA32(transpose(a), b)]) {
          expect(componentwiseError(out.data, c, abs)).toBeLessThan(bound(k));
        }
      });
    }
  }

  it("really computes in float32 on the WebAssembly path (error well above float64 rounding)", () => {
    setKernelBackend("wasm");
    const a = rnd(40, 200, "f32-a");
    const b = rnd(200, 30, "f32-b");
    const { c, abs } = literalProduct(a, b);
    expect(componentwiseError(matmul32(a, b).data, c, abs)).toBeGreaterThan(1e-10);
  });

  it("writes float32 outputs and accumulates", () => {
    setKernelBackend("wasm");
    const a = rnd(9, 7, "acc32-a");
    const b = rnd(7, 5, "acc32-b");
    const { c, abs } = literalProduct(a, b);
    const out = new Float32Array(45).fill(1);
    matmul32Into(a.data, b.data, out, 9, 7, 5, true);
    expect(
      componentwiseError(
        out,
        c.map((x) => x + 1),
        abs.map((x) => x + 1),
      ),
    ).toBeLessThan(bound(7));
    const out2 = new Float32Array(45);
    matmulTransB32Into(a.data, transpose(b).data, out2, 9, 7, 5);
    expect(componentwiseError(out2, c, abs)).toBeLessThan(bound(7));
  });

  it("rejects mismatched shapes naming b, the expected and the actual shape", () => {
    expect(() => matmul32(rnd(3, 4, "x"), rnd(5, 2, "y"))).toThrow(ShapeError);
    expect(() => matmul32(rnd(3, 4, "x"), rnd(5, 2, "y"))).toThrow(/b: expected rows = 4 \(from a 3×4\), got 5×2/);
    expect(() => matmulTransB32(rnd(3, 4, "x"), rnd(5, 2, "y"))).toThrow(/b: expected cols = 4/);
    expect(() => matmulTransA32(rnd(3, 4, "x"), rnd(5, 2, "y"))).toThrow(/b: expected rows = 3/);
    expect(() => matmul32([[1]] as never, rnd(1, 1, "z"))).toThrow(/a: expected a Matrix/);
  });
});
