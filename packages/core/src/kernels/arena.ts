/**
 * A kernel arena: an instance of the kernel module with a WebAssembly memory of its own, for a
 * caller that keeps operands resident across many products (issue 14: a model's prefill at the
 * shipped sizes spent as much time copying activations and weight panels into and out of the
 * shared kernel memory, and converting float64 ↔ float32 around each float32 product, as in the
 * products themselves).
 *
 * The shared instance (`getKernels`) cannot hold data across calls: the GEMM driver and the fused
 * softmax driver lay out its memory from `KERNEL_RESERVED_BYTES` on, at sizes set by each call.
 * An arena's memory belongs to its owner alone, so it holds
 *  - permanent regions (`place`): e.g. a model's weights packed once into the GEMM's panels, never
 *    copied again;
 *  - a frame (`frame`): temporaries laid out by the owner for one call (activations chained from one
 *    product to the next in place, read and written by the owner's JavaScript loops through the
 *    typed views).
 * Views (`f64`, `f32`) are valid until the memory grows: `place` and `frame` may grow it, nothing
 * else does, so an owner takes its views after laying out the frame.
 *
 * One arena per owner and thread (an owner used from a worker needs its own); the memory is
 * released with the arena (garbage-collected with its owner). Single-threaded, synchronous use.
 */
import { type Kernels, ensureKernelMemory, newKernelInstance } from "./gemm.js";
import { KERNEL_RESERVED_BYTES } from "./wat.js";

/** Alignment of every region: a cache line (the kernels need 16 bytes). */
const ALIGN = 64;
const roundUp = (x: number, m: number) => Math.ceil(x / m) * m;

export class KernelArena {
  /** The instance's kernels and views (refreshed when `place`/`frame` grow the memory). */
  readonly k: Kernels;
  /** First byte after the permanent regions. */
  private top = roundUp(KERNEL_RESERVED_BYTES, ALIGN);

  constructor() {
    this.k = newKernelInstance();
  }

  /**
   * Copies `data` into a new permanent region and returns its byte address. Do not call while a
   * frame is in use: the frame starts after the permanent regions.
   */
  place(data: Float64Array | Float32Array): number {
    const addr = this.top;
    this.top = roundUp(addr + data.byteLength, ALIGN);
    ensureKernelMemory(this.k, this.top);
    (data instanceof Float64Array ? this.k.f64 : this.k.f32).set(data as never, addr / data.BYTES_PER_ELEMENT);
    return addr;
  }

  /**
   * Lays out a frame of regions after the permanent ones (sizes in bytes) and returns their byte
   * addresses, each `ALIGN`-aligned; the memory is grown now, so the views stay valid until the next
   * `place` or `frame`. A new frame reuses the same bytes (contents are not cleared).
   */
  frame(sizes: readonly number[]): number[] {
    const out: number[] = [];
    let a = this.top;
    for (const s of sizes) {
      out.push(a);
      a = roundUp(a + s, ALIGN);
    }
    ensureKernelMemory(this.k, a);
    return out;
  }

  /** Bytes of memory the arena holds now. */
  get bytes(): number {
    return this.k.memory.buffer.byteLength;
  }
}
