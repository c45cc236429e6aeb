import { getKernelBackend, setKernelBackend } from "@randattn/core";
import { PlaneOps, applyPlaneOps, applyPlaneOpsJs } from "@randattn/core/internal";
import fc from "fast-check";
import seedrandom from "seedrandom";
import { afterAll, describe, expect, it } from "vitest";

// Recorded plane operations (linalg/plane.ts) on the SIMD kernel (kernels/watPlane.ts) against the
// JavaScript loops, bit for bit: the singular vectors of sketch's GKR SVD go through them, and that
// SVD claims ml-matrix's bits. Random sequences mixing rotations (full rows and prefixes, odd and even
// lengths: the kernel's f64x2 pairs and scalar tail), swaps and sign flips, on entries whose
// magnitudes span 2^±30 (a reordered or fused operation moves last bits).
const previous = getKernelBackend();
afterAll(() => setKernelBackend(previous));

/** A deferred record (on a scratch target it is never flushed to). */
function randomOps(rows: number, w: number, count: number, seed: string): PlaneOps {
  const rng = seedrandom(seed);
  const ops = new PlaneOps(new Float64Array(rows * w), rows, w, true);
  for (let q = 0; q < count; q++) {
    const r = rng();
    const j = Math.floor(rng() * (rows - 1));
    if (r < 0.8) {
      const j2 = rng() < 0.5 ? j + 1 : Math.floor(rng() * rows);
      const theta = (rng() - 0.5) * 7;
      ops.rotate(j, j2 === j ? (j + 1) % rows : j2, 1 + Math.floor(rng() * w), Math.cos(theta), Math.sin(theta));
    } else if (r < 0.9) ops.swap(j);
    else ops.negate(j, 1 + Math.floor(rng() * w));
  }
  return ops;
}

function matrix(rows: number, w: number, seed: string): Float64Array {
  const rng = seedrandom(seed);
  return Float64Array.from({ length: rows * w }, () => (rng() - 0.5) * 2 ** Math.round(60 * rng() - 30));
}

describe("applyPlaneOps: the SIMD kernel ≡ the JavaScript loops", () => {
  it("random operation sequences on random shapes (fast-check)", () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 2, max: 40 }),
        fc.integer({ min: 1, max: 70 }),
        fc.integer({ min: 1, max: 400 }),
        fc.nat(),
        (rows, w, count, seed) => {
          const ops = randomOps(rows, w, count, `ops-${seed}`);
          const x0 = matrix(rows, w, `x-${seed}`);
          const want = x0.slice();
          applyPlaneOpsJs(want, w, ops);
          setKernelBackend("wasm");
          const got = x0.slice();
          applyPlaneOps(got, rows, w, ops);
          setKernelBackend(previous);
          expect(got).toEqual(want); // toEqual distinguishes −0 from +0
          // Immediate mode (each operation applied as it comes) gives the same bits.
          const now = x0.slice();
          const immediate = new PlaneOps(now, rows, w, false);
          for (let q = 0; q < ops.count; q++) {
            const d = ops.data.subarray(6 * q, 6 * q + 6);
            if (d[0] === 0) immediate.rotate(d[1], d[2], d[3], d[4], d[5]);
            else if (d[0] === 1) immediate.swap(d[1]);
            else immediate.negate(d[1], d[3]);
          }
          expect(immediate.count).toBe(0);
          expect(now).toEqual(want);
        },
      ),
      { numRuns: 60, seed: 1415 },
    );
  });

  it("a rotation by (c, s) then (c, −s) restores the rows to rounding; an empty record changes nothing", () => {
    const x = matrix(4, 9, "inv");
    const y = x.slice();
    const ops = new PlaneOps(y, 4, 9, true);
    ops.rotate(1, 2, 9, Math.cos(0.3), Math.sin(0.3));
    ops.rotate(1, 2, 9, Math.cos(0.3), -Math.sin(0.3));
    expect(y).toEqual(x); // deferred: nothing applied before flush
    ops.flush();
    // Rows 1 and 2 come back to within a few ulps of the larger of each column's pair; rows 0 and 3 untouched.
    for (let i = 0; i < 9; i++) {
      const scale = Math.max(Math.abs(x[9 + i]), Math.abs(x[18 + i]));
      expect(Math.abs(y[9 + i] - x[9 + i])).toBeLessThanOrEqual(4 * Number.EPSILON * scale);
      expect(Math.abs(y[18 + i] - x[18 + i])).toBeLessThanOrEqual(4 * Number.EPSILON * scale);
      expect(y[i]).toBe(x[i]);
      expect(y[27 + i]).toBe(x[27 + i]);
    }
    const z = x.slice();
    new PlaneOps(z, 4, 9, true).flush();
    expect(z).toEqual(x);
  });
});
