import { Matrix, ShapeError, getKernelBackend, matmul, randomMatrix, setKernelBackend } from "@randattn/core";
import { squaredDistanceBlocks, squaredDistances } from "@randattn/core/internal";
import { afterAll, describe, expect, it } from "vitest";

// squaredDistanceBlocks (issue 14: B packed once for all blocks, D read in place when b.rows is a
// multiple of 8) visits exactly the rows of squaredDistances(a, b), bit for bit, in order, whatever
// the block size, on both backends — also when the visitor itself runs the shared WebAssembly
// kernels or a nested squaredDistanceBlocks between blocks (the packed B lives in an arena of its own).
const previous = getKernelBackend();
afterAll(() => setKernelBackend(previous));

/** The blocks glued back together, with the (i0, rows) sequence the visitor saw. */
function collect(a: Matrix, b: Matrix, blockRows: number, between?: () => void) {
  const out = new Matrix(a.rows, b.rows);
  const seen: [number, number][] = [];
  squaredDistanceBlocks(a, b, blockRows, (i0, block) => {
    expect(block.cols).toBe(b.rows);
    seen.push([i0, block.rows]);
    out.data.set(block.data, i0 * b.rows);
    between?.();
  });
  return { out, seen };
}

const same = (x: Matrix, y: Matrix) => x.data.length === y.data.length && x.data.every((v, i) => Object.is(v, y.data[i]));

describe("squaredDistanceBlocks ≡ squaredDistances", () => {
  for (const backend of ["auto", "scalar"] as const) {
    for (const [m, n, d] of [
      [1, 1, 1],
      [37, 64, 16], // n a multiple of 8: read in place
      [37, 61, 16], // not: compacted
      [130, 1000, 5],
    ]) {
      it(`${backend}: ${m}×${d} against ${n}×${d}, blocks of 1, 7, m and more than m rows`, () => {
        setKernelBackend(backend);
        const a = randomMatrix(m, d, {}, ["blocks", m, n, "a"]);
        const b = randomMatrix(n, d, {}, ["blocks", m, n, "b"]);
        const full = squaredDistances(a, b);
        for (const blockRows of [1, 7, m, m + 5]) {
          const { out, seen } = collect(a, b, blockRows);
          expect(same(out, full)).toBe(true);
          const expected: [number, number][] = [];
          for (let i0 = 0; i0 < m; i0 += blockRows) expected.push([i0, Math.min(blockRows, m - i0)]);
          expect(seen).toEqual(expected);
        }
      });
    }
  }

  it("a visitor may use the shared kernels and nest another squaredDistanceBlocks", () => {
    setKernelBackend("auto");
    const a = randomMatrix(50, 8, {}, ["blocks", "nest", "a"]);
    const b = randomMatrix(72, 8, {}, ["blocks", "nest", "b"]);
    const c = randomMatrix(9, 8, {}, ["blocks", "nest", "c"]);
    const full = squaredDistances(a, b);
    const inner = squaredDistances(c, a);
    const { out } = collect(a, b, 16, () => {
      matmul(randomMatrix(64, 64, {}, [1]), randomMatrix(64, 64, {}, [2])); // the shared kernel memory
      expect(same(collect(c, a, 4).out, inner)).toBe(true); // nested: an arena of its own
    });
    expect(same(out, full)).toBe(true);
  });

  it("bad arguments are ShapeErrors naming them", () => {
    const a = randomMatrix(4, 3, {}, [3]);
    const b = randomMatrix(5, 3, {}, [4]);
    expect(() => squaredDistanceBlocks(a, randomMatrix(5, 2, {}, [5]), 2, () => {})).toThrow(ShapeError);
    for (const blockRows of [0, -1, 1.5, Number.NaN])
      expect(() => squaredDistanceBlocks(a, b, blockRows, () => {})).toThrow(/^blockRows: /);
    expect(() => squaredDistanceBlocks(a, b, 2, () => {}, new Float64Array(9))).toThrow(
      "into: expected a Float64Array of at least 10 floats, got length 9",
    );
  });
});
