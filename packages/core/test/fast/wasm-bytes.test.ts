import { wasmSimdAvailable } from "@randattn/core";
import { kernelWat, wasmKernelBytes } from "@randattn/core/internal";
import { describe, expect, it } from "vitest";
import { assembleKernels } from "../../src/kernels/assemble.js";

// The kernel binary is embedded pre-assembled (so loading is synchronous); it must be exactly what
// wabt assembles from the WAT source today, or someone edited wat.ts without regenerating.
describe("embedded WebAssembly kernels", () => {
  it("equal a fresh wabt assembly of kernelWat() (regenerate with bench/gen-wasm.mjs)", async () => {
    const fresh = await assembleKernels();
    expect(Buffer.from(wasmKernelBytes()).equals(Buffer.from(fresh))).toBe(true);
  });

  it("use SIMD128 only, no relaxed-SIMD (which needs a flag in Node 20)", () => {
    const wat = kernelWat();
    expect(wat).toMatch(/f64x2\.mul/);
    expect(wat).toMatch(/f32x4\.add/);
    expect(wat).not.toMatch(/relaxed/);
    // Node 20 without flags validates the module: SIMD128 is on by default, relaxed-SIMD is not.
    expect(wasmSimdAvailable()).toBe(true);
  });
});
