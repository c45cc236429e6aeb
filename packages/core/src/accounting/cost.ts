/**
 * The one cost record every approximation and factorization returns (issue 9: `{ output, cost, … }`,
 * `{ factors…, cost }`). Costs are ANALYTIC — counted from the algorithm, never measured — so they
 * are reproducible and comparable across machines (docs/ARCHITECTURE.md, "Costs").
 */

/** Work and memory of one operation, counted analytically. */
export interface Cost {
  /** Floating-point operations: a multiply-add counts 2, an exp, a division or a square root 1. */
  flops: number;
  /** Floats the method keeps to answer the queries (its K/V representation + largest intermediate). */
  floatsStored: number;
  /**
   * Random bits consumed by the draw (e.g. 64 per Gaussian from a 53-bit-uniform Box–Muller pair
   * counted as 2 × 32, 1 per Rademacher sign). Absent when the method does not count them.
   */
  randomBits?: number;
  /**
   * Hash evaluations (one per vector per hash function, e.g. an LSH bucket id or a CountSketch
   * row); the work of computing each hash is counted in `flops`. Absent when no hashing is done.
   */
  hashes?: number;
  /**
   * Bits the method's stored state occupies when it is not plain float64 (quantized caches,
   * sign bits, packed indices); `floatsStored` stays the float64-equivalent count. Absent = 64·floatsStored.
   */
  bitsStored?: number;
  /**
   * Kernel entries κ(q_i, k_j) evaluated (each an exp of a dot product for softmax), for methods
   * whose cost is naturally counted in kernel evaluations (Nyström, KDE, sampling); their flops are
   * still in `flops`. Absent when the method does not count them.
   */
  kernelEvaluations?: number;
}
