import { wasmSimdAvailable } from "@randattn/core";
import { fmaKernelWat, kernelWat, wasmFmaKernelBytes, wasmKernelBytes } from "@randattn/core/internal";
import { describe, expect, it } from "vitest";
import { assembleFmaKernels, assembleKernels } from "../../src/kernels/assemble.js";

// The kernel binaries are embedded pre-assembled (so loading is synchronous); they must be exactly
// what wabt assembles from the WAT source today, or someone edited wat.ts without regenerating.
describe("embedded WebAssembly kernels", () => {
  it("equal a fresh wabt assembly of kernelWat() (regenerate with bench/gen-wasm.mjs)", async () => {
    const fresh = await assembleKernels();
    expect(Buffer.from(wasmKernelBytes()).equals(Buffer.from(fresh))).toBe(true);
  });

  it("the opt-in fused module equals a fresh assembly of fmaKernelWat()", async () => {
    const fresh = await assembleFmaKernels();
    expect(Buffer.from(wasmFmaKernelBytes()).equals(Buffer.from(fresh))).toBe(true);
  });

  it("use SIMD128 only, no relaxed-SIMD (which needs a flag in Node 20)", () => {
    const wat = kernelWat();
    expect(wat).toMatch(/f64x2\.mul/);
    expect(wat).toMatch(/f32x4\.add/);
    expect(wat).not.toMatch(/relaxed/);
    // Node 20 without flags validates the module: SIMD128 is on by default, relaxed-SIMD is not.
    expect(wasmSimdAvailable()).toBe(true);
  });

  it("the fused module holds the GEMM macro-kernels only, each tile update one relaxed_madd", () => {
    const wat = fmaKernelWat();
    const names = [...wat.matchAll(/\(export "([a-z0-9_]+)"\)/g)].map((m) => m[1]);
    const main = new Set([...kernelWat().matchAll(/\(export "([a-z0-9_]+)"\)/g)].map((m) => m[1]));
    expect(names.length).toBeGreaterThan(4);
    for (const n of names) {
      expect(n).toMatch(/^gemm_f(32|64)(_ra[0-9]*)?$/);
      expect(main.has(n)).toBe(true);
    }
    expect(wat).toMatch(/\(import "kernels" "memory"/);
    expect(wat).toMatch(/relaxed_madd/);
    expect(wat).not.toMatch(/x[24]\.mul/); // no separate multiply left in any tile update
  });
});
