/**
 * A work buffer lent to one caller at a time and kept between calls, for temporaries a hot function
 * forms afresh on every call (a sweep's attention weights for a reference value, a sketch's scores
 * over its sampled keys) and drops before it returns.
 *
 * Why (issue 14, measured on the benchmark VM, stop 34): a fresh `Float64Array` of more than a few
 * pages comes from `mmap`, and every 4 KiB page of it costs a page fault on first write — 8–15 µs
 * each there, i.e. ≈ 20–30 ns per float64 written, several times the cost of computing an entry of
 * QKᵀ and its exp at d = 64. A quickstart sweep spent ≈ 0.5 s of its ≈ 3.4 s of CPU in the kernel,
 * nearly half of its faults in copying N × N weight matrices out of the kernel memory into fresh
 * arrays. A buffer that is reused is faulted in once.
 *
 * Rules: the buffer never escapes — what the caller returns is computed from it, never a view of
 * it; its contents on entry are whatever the last user left; a nested use while it is lent (a
 * kernel callback that calls back into the same function) gets a fresh array, as does a request
 * above `maxFloats`, so that a huge one-off problem does not stay resident for the life of the
 * thread. One lender per call site and thread (module state: each worker has its own).
 */
export class Scratch {
  private buffer = new Float64Array(0);
  private busy = false;

  /** @param maxFloats Largest request served from the kept buffer (larger ones get a fresh array). */
  constructor(readonly maxFloats: number) {}

  /**
   * `use(b)` with a Float64Array `b` of at least `n` entries — the kept buffer (grown when needed)
   * when it is free and `n ≤ maxFloats`, else a fresh zeroed array — and its result.
   */
  lend<T>(n: number, use: (b: Float64Array) => T): T {
    if (this.busy || n > this.maxFloats) return use(new Float64Array(n));
    if (this.buffer.length < n) this.buffer = new Float64Array(n);
    this.busy = true;
    try {
      return use(this.buffer);
    } finally {
      this.busy = false;
    }
  }
}
