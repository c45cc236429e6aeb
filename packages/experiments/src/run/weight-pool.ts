/**
 * The N_Q × N_KV attention-weight buffers a worker's runner owns and reuses (issue 14).
 *
 * The KL metric needs P twice per (problem point, trial): the exact reference's and the method's
 * (the exact method forms its own). On the benchmark VM a fresh array's first-touch page faults cost
 * more than forming P (core's scratch.ts): the quickstart wrote 2 × 16 MiB of fresh weights per
 * trial, ≈ 24,000 of its ≈ 48,000 page faults. The runner hands these buffers out — to the reference
 * it keeps and, through `RunContext.weightsBuffer`, to the method — and takes them back when it no
 * longer needs them: the method's after the task's metrics, the reference's when a newer reference
 * forms weights (see execute.ts). A buffer goes back only when the runner lent it (by identity), so
 * weights a method allocated itself, and may keep, are never reused.
 */
import type { Matrix } from "@randattn/core";

/** Floats the pool keeps at most (64 MiB); buffers returned beyond it are left to the collector. */
const MAX_POOLED_FLOATS = 1 << 23;

export class WeightPool {
  /** @param maxFloats Floats kept at most. @default 2²³ (64 MiB) */
  constructor(readonly maxFloats = MAX_POOLED_FLOATS) {}

  private readonly free: Float64Array[] = [];
  private pooled = 0;
  /** The buffers handed out and not yet returned (only these are taken back; weak: one never returned is collected). */
  private readonly lent = new WeakSet<ArrayBufferLike>();

  /** A buffer of exactly n floats: a returned one when there is one, else a fresh one. */
  take(n: number): Float64Array {
    const at = this.free.findIndex((b) => b.length === n);
    let b: Float64Array;
    if (at >= 0) {
      b = this.free[at];
      this.free.splice(at, 1);
      this.pooled -= n;
    } else b = new Float64Array(n);
    this.lent.add(b.buffer);
    return b;
  }

  /** Takes back the buffers under `weights` that this pool lent; the rest are ignored. */
  give(weights: readonly Matrix[] | null | undefined): void {
    for (const m of weights ?? []) {
      const buffer = m.data.buffer;
      if (!this.lent.delete(buffer)) continue;
      const b = new Float64Array(buffer);
      if (this.pooled + b.length > this.maxFloats) continue;
      this.free.push(b);
      this.pooled += b.length;
    }
  }
}
