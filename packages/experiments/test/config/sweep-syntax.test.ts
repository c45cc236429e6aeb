import { describe, expect, it } from "vitest";
import { axisValues, ConfigError, expandSweepExpression } from "@randattn/experiments/internal";
import { catchError } from "../helpers.js";

describe("sweep value mini-syntax", () => {
  it("comprehension `EXPR for k in A..B`", () => {
    expect(expandSweepExpression("2^k for k in 6..12", "x")).toEqual([6, 7, 8, 9, 10, 11, 12].map((k) => 2 ** k));
    expect(expandSweepExpression("10 * k for k in 1..7 step 3", "x")).toEqual([10, 40, 70]);
  });

  it("ranges `A..B [step C]`, inclusive, values from + i·step", () => {
    expect(expandSweepExpression("3..6", "x")).toEqual([3, 4, 5, 6]);
    const tenths = expandSweepExpression("0..1 step 0.1", "x");
    expect(tenths).toHaveLength(11);
    tenths.forEach((v, i) => {
      expect(v).toBe(i * 0.1);
    });
  });

  it("a single expression is one value", () => {
    expect(expandSweepExpression("2^10", "x")).toEqual([1024]);
    expect(expandSweepExpression("sqrt(16) + pi - pi", "x")).toEqual([4]);
  });

  it("object ranges: step, count linear, count log (endpoints exact)", () => {
    expect(axisValues({ from: 1, to: 9, step: 4 }, "a")).toEqual([1, 5, 9]);
    expect(axisValues({ from: 0, to: 1, count: 3 }, "a")).toEqual([0, 0.5, 1]);
    const log = axisValues({ from: 1, to: 1000, count: 4, spacing: "log" }, "a") as number[];
    expect(log[0]).toBe(1);
    expect(log[3]).toBe(1000);
    log.slice(1, 3).forEach((v, i) => {
      expect(v).toBeCloseTo(10 ** (i + 1), 10);
    });
    expect(axisValues({ from: 8, to: 64, count: 4, spacing: "log", integer: true }, "a")).toEqual([8, 16, 32, 64]);
  });

  it("lists are literal (strings stay strings)", () => {
    expect(axisValues(["uniform", "norms", 3, true], "a")).toEqual(["uniform", "norms", 3, true]);
  });

  it("repeated values are rejected (they would duplicate cells)", () => {
    const e = catchError(() => axisValues([4, 8, 4], 'sweep["problem.n"]'));
    expect(e).toBeInstanceOf(ConfigError);
    expect(e.message).toContain('sweep["problem.n"][2]: expected values listed once');
    expect(catchError(() => axisValues({ from: 1, to: 2, count: 5, integer: true }, "a")).message).toContain("values listed once");
  });
});
