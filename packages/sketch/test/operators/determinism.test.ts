// Same (distribution, seed) → the same bytes, whatever ran before; a different purpose → different.
import { RandomStream, randomMatrix } from "@randattn/core";
import { describe, expect, it } from "vitest";
import { createSketch, gaussianSketch, sparseSignSketch, srhtSketch } from "@randattn/sketch";
import { kinds } from "./kinds.js";

describe.each(kinds)("$name: determinism", ({ name, make }) => {
  it("same seed → identical toMatrix and sketchLeft bytes, independent of other draws in between", () => {
    const dist = make(6, 20);
    const a = randomMatrix(20, 3, {}, [1, "A"]);
    const first = createSketch(dist, [42, "det", name]);
    const left1 = first.sketchLeft(a);
    // Unrelated randomness and another operator in between must not matter.
    new RandomStream([42, "det", name]).uniform();
    createSketch(dist, [42, "other"]).toMatrix();
    const second = createSketch(dist, [42, "det", name]);
    expect(Buffer.from(second.toMatrix().data.buffer)).toEqual(Buffer.from(first.toMatrix().data.buffer));
    expect(Buffer.from(second.sketchLeft(a).data.buffer)).toEqual(Buffer.from(left1.data.buffer));
    // Repeated application reuses the cached draw.
    expect(first.sketchLeft(a).data).toEqual(left1.data);
  });

  it("a different purpose gives a different operator", () => {
    const dist = make(6, 20);
    const x = createSketch(dist, [42, "det", "a"]).toMatrix();
    const y = createSketch(dist, [42, "det", "b"]).toMatrix();
    expect(x.data).not.toEqual(y.data);
  });
});

// Golden first entries per kind (issue 9: explicit arrays, so a changed stream is a visible diff).
const GOLDEN: Record<string, number[]> = {
  countsketch: [1, 0, 0, 0, 0, 0, 1, 1, 0, 0, 0, 0],
  gaussian: [
    0.2743599867322092, -0.328659833072408, 0.7855268614004949, 0.13561688994096752, 0.7638934102154975, -0.5185401995181098,
    -0.32338325461430917, 0.6489352048627537, -0.0479611121710983, -0.07630087548525087, -0.19321066195712946, -0.15609394571736662,
  ],
  rademacher: [0.5, -0.5, -0.5, -0.5, -0.5, 0.5, -0.5, 0.5, -0.5, 0.5, 0.5, 0.5],
  // biome-ignore lint/suspicious/noApproximativeNumericConstant: the golden value is √(8/4) as computed, one ulp below Math.SQRT2
  "row-sampling (uniform)": [0, 0, 0, 1.414213562373095, 0, 0, 0, 0, 0, 0, 0, 0],
  "row-sampling (weights)": [0, 0, 0, 1.5, 0, 0, 0, 0, 0, 0, 0, 0],
  "sparse-sign": [
    -0.5773502691896258, 0, 0.5773502691896258, 0.5773502691896258, -0.5773502691896258, 0, -0.5773502691896258, 0.5773502691896258,
    0.5773502691896258, 0.5773502691896258, 0, 0.5773502691896258,
  ],
  srht: [-0.5, -0.5, -0.5, -0.5, 0.5, 0.5, -0.5, -0.5, -0.5, -0.5, -0.5, -0.5],
};

describe("operator golden values for key [2026, 'operator']", () => {
  it("first entries of each kind", () => {
    const key = [2026, "operator"] as const;
    const got: Record<string, number[]> = {};
    for (const { name, make } of kinds) got[name] = Array.from(createSketch(make(4, 8), key).toMatrix().data.slice(0, 12));
    expect(got).toEqual(GOLDEN);
  });
});

describe("immutability", () => {
  it("distributions are frozen; operators expose the frozen distribution and seed", () => {
    const dist = srhtSketch(4, 10);
    expect(Object.isFrozen(dist)).toBe(true);
    expect(() => {
      (dist as { rows: number }).rows = 5;
    }).toThrow(TypeError);
    const seed: [number, string] = [1, "s"];
    const op = createSketch(gaussianSketch(3, 9), seed);
    seed[1] = "mutated";
    expect(op.seed).toEqual([1, "s"]);
    expect(Object.isFrozen(op.seed)).toBe(true);
    expect(Object.isFrozen(op.distribution)).toBe(true);
    expect(Object.isFrozen(sparseSignSketch(3, 9))).toBe(true);
  });
});
