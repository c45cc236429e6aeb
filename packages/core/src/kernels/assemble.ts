/**
 * Assembles the kernel WAT (`wat.ts`) into a WebAssembly binary with the `wabt` npm package.
 * Used by the drift test (the embedded bytes in `kernelBytes.ts` must equal a fresh assembly)
 * and by `packages/core/bench/gen-wasm.mjs`, which rewrites `kernelBytes.ts`. Not used at run
 * time: wabt's initialisation is asynchronous, while the matmul API is synchronous, so the
 * library instantiates the pre-assembled bytes instead.
 */
import wabtInit from "wabt";
import { fmaKernelWat, kernelWat } from "./wat.js";

/**
 * Assembles `kernelWat()` with only the SIMD128 feature enabled — relaxed-SIMD is left off so an
 * accidental relaxed instruction fails here rather than on a Node 20 without the flag.
 */
export function assembleKernels(): Promise<Uint8Array> {
  return assemble("randattn-kernels.wat", kernelWat(), false);
}

/**
 * Assembles `fmaKernelWat()` — the opt-in fused-multiply-add GEMM module — with relaxed-SIMD on
 * (its `relaxed_madd` needs it); embedded as `kernelBytesFma.ts`.
 */
export function assembleFmaKernels(): Promise<Uint8Array> {
  return assemble("randattn-kernels-fma.wat", fmaKernelWat(), true);
}

async function assemble(file: string, wat: string, relaxed: boolean): Promise<Uint8Array> {
  const wabt = await wabtInit();
  const mod = wabt.parseWat(file, wat, { simd: true, relaxed_simd: relaxed });
  try {
    mod.validate();
    return mod.toBinary({ canonicalize_lebs: true }).buffer.slice();
  } finally {
    mod.destroy();
  }
}

/** Base64 of a byte array (the form embedded in `kernelBytes.ts`). */
export function toBase64(bytes: Uint8Array): string {
  return Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString("base64");
}
