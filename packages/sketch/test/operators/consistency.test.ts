// toMatrix()·A = sketchLeft(A) and A·toMatrix() = sketchRight(A) for every kind and orientation.
import { randomMatrix } from "@randattn/core";
import { describe, expect, it } from "vitest";
import { createSketch } from "@randattn/sketch";
import { kinds, naiveMatmul, relDiff } from "./kinds.js";

const shapes: [number, number][] = [
  [1, 1],
  [3, 10], // wide, SRHT pads 10 → 16
  [8, 16], // wide, power of two
  [5, 5],
  [12, 4], // tall (right sketch)
  [33, 7],
];

describe.each(kinds)("$name: applying S equals multiplying by toMatrix()", ({ make }) => {
  it.each(shapes)("%i×%i", (rows, cols) => {
    const op = createSketch(make(rows, cols), [11, "consistency", rows, cols]);
    const s = op.toMatrix();
    expect([s.rows, s.cols]).toEqual([rows, cols]);
    const a = randomMatrix(cols, 6, {}, [11, "A", rows, cols]);
    expect(relDiff(op.sketchLeft(a), naiveMatmul(s, a))).toBeLessThanOrEqual(1e-12);
    const b = randomMatrix(5, rows, {}, [11, "B", rows, cols]);
    expect(relDiff(op.sketchRight(b), naiveMatmul(b, s))).toBeLessThanOrEqual(1e-12);
  });
});
