import { getKernelBackend, setKernelBackend, withKernelArithmetic } from "@randattn/core";
import { matmulInto, sequentialMatmulInto, sequentialMatmulJs } from "@randattn/core/internal";
import { enableRelaxedSimd } from "@randattn/core/node";
import fc from "fast-check";
import { afterAll, describe, expect, it } from "vitest";

// sequentialMatmulInto promises more than a rounding bound: every entry is the literal loop's sum
// (s = 0; s += a·b for p = 0…k−1), bit for bit, on the WebAssembly kernel and in JavaScript alike —
// the incremental SVD of sketch's kvcache/latent.ts relies on it to keep committed sweeps' bits.
// The inputs mix magnitudes 2^±40 and signed zeros, so any other association (KC-deep blocks past
// k = 256, the few-row kernels' four-term groups, a fused multiply-add, a +0 start lost on −0 sums)
// changes some entry's bits.
const previous = getKernelBackend();
afterAll(() => {
  setKernelBackend(previous);
});

function literal(A: Float64Array, B: Float64Array, m: number, k: number, n: number): Float64Array {
  const C = new Float64Array(m * n);
  for (let i = 0; i < m; i++)
    for (let j = 0; j < n; j++) {
      let s = 0;
      for (let p = 0; p < k; p++) s += A[i * k + p] * B[p * n + j];
      C[i * n + j] = s;
    }
  return C;
}

/** Entries of wildly different magnitudes (reassociation shows), some −0 and +0. */
function hostile(len: number, seed: number): Float64Array {
  const x = new Float64Array(len);
  let s = seed >>> 0 || 1;
  const next = () => {
    s ^= s << 13;
    s >>>= 0;
    s ^= s >>> 17;
    s ^= s << 5;
    s >>>= 0;
    return s / 2 ** 32;
  };
  for (let i = 0; i < len; i++) {
    const r = next();
    x[i] = r < 0.05 ? -0 : r < 0.08 ? 0 : (next() - 0.5) * 2 ** Math.round(80 * next() - 40);
  }
  return x;
}

const bits = (x: Float64Array) => Array.from(new BigUint64Array(x.buffer, x.byteOffset, x.length));

function check(m: number, k: number, n: number, seed: number): void {
  const A = hostile(m * k, seed);
  const B = hostile(k * n, seed + 7919);
  const want = bits(literal(A, B, m, k, n));
  for (const backend of ["auto", "wasm", "scalar"] as const) {
    setKernelBackend(backend);
    const C = new Float64Array(m * n).fill(Number.NaN); // stale contents must be overwritten
    sequentialMatmulInto(A, B, C, m, k, n);
    expect(bits(C), `${m}×${k}·${k}×${n} on ${backend}`).toEqual(want);
  }
  setKernelBackend(previous);
  const J = new Float64Array(m * n).fill(Number.NaN);
  sequentialMatmulJs(A, B, J, m, k, n);
  expect(bits(J)).toEqual(want);
}

describe("sequentialMatmulInto: the literal loop's sums, bit for bit", () => {
  for (const [m, k, n] of [
    [1, 48, 48], // one row (the few-row kernels' territory in matmulInto)
    [3, 64, 5],
    [256, 48, 48], // W' of the latent cache at N = 256, k = 48
    [64, 49, 48], // U' = [U J]·Vtᵀ
    [37, 300, 9], // deeper than one KC slice
    [5, 1, 4],
    [8, 0, 3], // an empty sum is +0
  ] as const) {
    it(`${m}×${k} · ${k}×${n}`, () => check(m, k, n, m * 1000 + k * 10 + n));
  }

  it("random shapes (fast-check)", () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 1, max: 70 }),
        fc.integer({ min: 0, max: 300 }),
        fc.integer({ min: 1, max: 40 }),
        fc.nat(),
        (m, k, n, seed) => {
          check(m, k, n, seed);
        },
      ),
      { numRuns: 40, seed: 1406 },
    );
  });

  it("is not matmulInto's order: on these inputs the KC-blocked product differs past k = 256", () => {
    // The test's teeth: the general product sums in 256-deep blocks, so it must disagree somewhere.
    const [m, k, n] = [16, 600, 16];
    const A = hostile(m * k, 3);
    const B = hostile(k * n, 5);
    const blocked = new Float64Array(m * n);
    setKernelBackend("wasm");
    matmulInto(A, B, blocked, m, k, n, false);
    setKernelBackend(previous);
    expect(bits(blocked)).not.toEqual(bits(literal(A, B, m, k, n)));
  });

  it("under the opt-in fma arithmetic it keeps the literal sums (JavaScript path)", () => {
    expect(enableRelaxedSimd()).toBe(true); // Node 20: V8's relaxed-SIMD flag, set at run time
    const [m, k, n] = [64, 48, 48];
    const A = hostile(m * k, 11);
    const B = hostile(k * n, 13);
    const C = new Float64Array(m * n);
    withKernelArithmetic("fma", () => sequentialMatmulInto(A, B, C, m, k, n));
    expect(bits(C)).toEqual(bits(literal(A, B, m, k, n)));
  });
});
