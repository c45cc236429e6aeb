/**
 * maxAbsScan (kernels/scan.ts): max |x| of large float64 arrays on the kernel module, 256 KiB
 * copied at a time — the value `maxAbsOf`'s JavaScript loop gives, NaN and ±∞ included, wherever
 * they fall (first chunk, a chunk's last entry, the partial last chunk), and for a prefix `len`.
 */
import { withKernelBackend } from "@randattn/core";
import { maxAbsOf, maxAbsScan } from "@randattn/core/internal";
import seedrandom from "seedrandom";
import { describe, expect, it } from "vitest";

const rng = seedrandom("scan");
const gauss = (n: number) => Float64Array.from({ length: n }, () => rng() + rng() + rng() - 1.5);
const CHUNK = 1 << 15;

describe("maxAbsScan equals maxAbsOf", () => {
  it("on sizes around the threshold and the chunk, with a planted maximum and prefixes", () => {
    for (const n of [0, 1, 100, (1 << 14) - 1, 1 << 14, CHUNK - 1, CHUNK, CHUNK + 1, 3 * CHUNK + 17]) {
      const x = gauss(n);
      if (n > 2) x[n - 1] = -7.5; // the largest magnitude, negative, at the very end
      expect(maxAbsScan(x)).toBe(maxAbsOf(x));
      expect(maxAbsScan(x, n >> 1)).toBe(maxAbsOf(x, n >> 1)); // a prefix: the planted entry is outside it
    }
  });

  it.each([
    ["NaN", Number.NaN],
    ["+∞", Number.POSITIVE_INFINITY],
    ["−∞", Number.NEGATIVE_INFINITY],
  ])("gives %s's result wherever it falls", (_, v) => {
    const n = 2 * CHUNK + 5;
    for (const at of [0, CHUNK - 1, CHUNK, n - 1]) {
      const x = gauss(n);
      x[at] = v;
      const want = maxAbsOf(x);
      expect(Number.isNaN(v) ? Number.isNaN(want) : want === Number.POSITIVE_INFINITY).toBe(true);
      expect(Object.is(maxAbsScan(x), want)).toBe(true);
    }
  });

  it("takes the JavaScript loop for float32 arrays and on the scalar backend (the same values)", () => {
    const x = gauss(CHUNK + 3);
    x[5] = 9;
    expect(maxAbsScan(Float32Array.from(x))).toBe(9);
    expect(withKernelBackend("scalar", () => maxAbsScan(x))).toBe(9);
  });
});
