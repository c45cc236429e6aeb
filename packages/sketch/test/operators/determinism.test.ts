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

describe("operator snapshots for key [2026, 'operator']", () => {
  it("first entries of each kind", () => {
    const key = [2026, "operator"] as const;
    const snap: Record<string, number[]> = {};
    for (const { name, make } of kinds) snap[name] = Array.from(createSketch(make(4, 8), key).toMatrix().data.slice(0, 12));
    expect(snap).toMatchSnapshot();
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
