// A shared property suite run against every operator implementation, over random shapes and
// seeds (fast-check, which draws from pure-rand): shape, agreement with toMatrix() on both sides,
// linearity, determinism, cost monotonicity, and shape errors.
import fc from "fast-check";
import { Matrix, ShapeError, randomMatrix } from "@randattn/core";
import { describe, expect, it } from "vitest";
import { createSketch } from "@randattn/sketch";
import { kinds, naiveMatmul, relDiff } from "./kinds.js";

const arbCase = fc.record({
  rows: fc.integer({ min: 1, max: 20 }),
  cols: fc.integer({ min: 1, max: 20 }),
  other: fc.integer({ min: 1, max: 4 }),
  seed: fc.integer({ min: 0, max: 1e6 }),
  alpha: fc.double({ min: -3, max: 3, noNaN: true }),
});

describe.each(kinds)("$name: properties over random shapes", ({ name, make }) => {
  it("S·A and A·S agree with toMatrix(), are linear, deterministic, and cost grows linearly in the other dimension", () => {
    fc.assert(
      fc.property(arbCase, ({ rows, cols, other, seed, alpha }) => {
        const op = createSketch(make(rows, cols), [seed, name]);
        expect([op.rows, op.cols]).toEqual([rows, cols]);
        const s = op.toMatrix();
        const a = randomMatrix(cols, other, {}, [seed, "a"]);
        const b = randomMatrix(cols, other, {}, [seed, "b"]);
        const sa = op.sketchLeft(a);
        expect([sa.rows, sa.cols]).toEqual([rows, other]);
        expect(relDiff(sa, naiveMatmul(s, a))).toBeLessThanOrEqual(1e-12);
        // linearity: S(αA + B) = α SA + SB
        const comb = new Matrix(
          cols,
          other,
          a.data.map((v, i) => alpha * v + b.data[i]),
        );
        const sb = op.sketchLeft(b);
        const expected = new Matrix(
          rows,
          other,
          sa.data.map((v, i) => alpha * v + sb.data[i]),
        );
        expect(relDiff(op.sketchLeft(comb), expected)).toBeLessThanOrEqual(1e-12);
        const c = randomMatrix(other, rows, {}, [seed, "c"]);
        expect(relDiff(op.sketchRight(c), naiveMatmul(c, s))).toBeLessThanOrEqual(1e-12);
        expect(createSketch(make(rows, cols), [seed, name]).toMatrix().data).toEqual(s.data);
        for (const side of ["left", "right"] as const) {
          const c1 = op.cost(1, side);
          const c3 = op.cost(3, side);
          expect(c1.flops).toBeGreaterThan(0);
          expect(c3.flops).toBeCloseTo(3 * c1.flops, 9);
          expect(c3.floatsStored).toBe(c1.floatsStored);
        }
      }),
      { numRuns: 40, seed: 20260 },
    );
  });

  it("mismatched shapes and non-finite inputs throw typed errors naming the argument", () => {
    fc.assert(
      fc.property(arbCase, ({ rows, cols, other, seed }) => {
        const op = createSketch(make(rows, cols), [seed, name]);
        expect(() => op.sketchLeft(new Matrix(cols + 1, other))).toThrow(ShapeError);
        expect(() => op.sketchLeft(new Matrix(cols + 1, other))).toThrow(
          new RegExp(`^a: expected ${cols}×\\* \\(rows = sketch cols\\), got ${cols + 1}×${other}$`),
        );
        expect(() => op.sketchRight(new Matrix(other, rows + 1))).toThrow(new RegExp(`^a: expected \\*×${rows} \\(cols = sketch rows\\)`));
      }),
      { numRuns: 10, seed: 7 },
    );
    const op = createSketch(make(3, 5), [1]);
    const bad = new Matrix(5, 2);
    bad.data[3] = Number.NaN;
    expect(() => op.sketchLeft(bad)).toThrow(/a: expected finite entries, got NaN at \[1, 1\]/);
    expect(() => op.cost(0, "left")).toThrow(/otherDim: expected an integer ≥ 1, got 0/);
    expect(() => op.cost(2, "up" as "left")).toThrow(/side: expected one of "left", "right", got "up"/);
  });
});
