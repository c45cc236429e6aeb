/**
 * The few pieces of the WebAssembly JavaScript API the kernels use, typed locally: the project
 * compiles with `lib: ["ES2022"]` and Node's types, neither of which declares `WebAssembly`
 * (it lives in lib.dom), and pulling the DOM library into every package would be worse.
 */

/** `WebAssembly.Memory`. */
export interface WasmMemory {
  readonly buffer: ArrayBuffer;
  grow(pages: number): number;
}

/** An opaque compiled `WebAssembly.Module` (structured-cloneable to workers). */
export interface WasmModule {
  readonly __wasmModule?: never;
}

/** `WebAssembly.Instance`. */
export interface WasmInstance {
  readonly exports: Record<string, unknown>;
}

interface WasmNamespace {
  validate(bytes: Uint8Array): boolean;
  Module: new (bytes: Uint8Array) => WasmModule;
  Instance: new (module: WasmModule, imports: Record<string, unknown>) => WasmInstance;
}

/** The global `WebAssembly` object, or undefined in a runtime without it. */
export function wasmApi(): WasmNamespace | undefined {
  const g = globalThis as unknown as { WebAssembly?: WasmNamespace };
  return typeof g.WebAssembly === "object" ? g.WebAssembly : undefined;
}
