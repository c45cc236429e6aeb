import { describe, expect, it } from "vitest";
import { ValueError } from "@randattn/core";
import {
  compileExpression,
  compileKernelFormula,
  expandSweepExpression,
  MAX_EXPRESSION_LENGTH,
  MAX_RANGE_VALUES,
  toUnaryFunction,
} from "@randattn/experiments/internal";
import { catchError } from "../helpers.js";

const rejected = (text: string, fragment: string) => {
  const e = catchError(() => expandSweepExpression(text, "sweep.x"));
  expect(e).toBeInstanceOf(ValueError);
  expect(e.message.startsWith("sweep.x: expected")).toBe(true);
  expect(e.message).toContain(fragment);
};

describe("config expressions cannot escape the restricted scope", () => {
  it.each([
    ["import({x: 1}, {override: true})", 'function "import"'],
    ['createUnit("foo")', 'function "createUnit"'],
    ['evaluate("1+1")', 'function "evaluate"'],
    ['parse("1")', 'function "parse"'],
    ['compile("1")', 'function "compile"'],
    ["f(x) = x", "function definition"],
    ["x = 3", "assignment"],
    ["cos.constructor", "property or index access"],
    ['cos.constructor("return process")', "a call of a computed function"],
    ['cos["constructor"]("return process")()', "a valid expression"],
    ["[1, 2, 3]", "matrices"],
    ["1; 2", "multiple statements"],
    ['"abc"', "numbers only"],
    ["process", 'unknown name "process"'],
    ["5 cm", 'unknown name "cm"'],
    ["10!", 'operator "!"'],
    ["1:5", "a mathjs range"],
    ["A'", 'operator "\'"'],
  ])("rejects %s", (text, fragment) => rejected(text, fragment));

  it("rejects huge and non-finite values", () => {
    rejected("1e400", "a finite value");
    rejected("2^5000", "a finite value");
    rejected("10^16", "a value of magnitude at most 1000000000000000");
    rejected("2^k for k in 1..2000", "a value of magnitude at most");
    rejected("exp(k) for k in 700..800", "a value of magnitude at most");
    rejected("0/0", "a finite value");
  });

  it("rejects ranges longer than the bound without materializing them", () => {
    const t0 = performance.now();
    rejected("1..1e12", `a range of at most ${MAX_RANGE_VALUES} values`);
    rejected("k for k in 0..1e9 step 0.5", `a range of at most ${MAX_RANGE_VALUES} values`);
    expect(performance.now() - t0).toBeLessThan(1000);
  });

  it("rejects over-long expressions and deep trees", () => {
    rejected("1+".repeat(MAX_EXPRESSION_LENGTH) + "1", `at most ${MAX_EXPRESSION_LENGTH} characters`);
    rejected(Array.from({ length: 100 }, () => "1").join("+"), "terms");
  });

  it("rejects a loop variable that shadows a function or constant", () => {
    rejected("k for exp in 1..3", "a loop variable");
  });

  it("kernel formulas use only s, and must be ≥ 0 and finite", () => {
    expect(catchError(() => compileKernelFormula("exp(q)", "problem.kernel.formula")).message).toContain('unknown name "q"');
    expect(catchError(() => compileKernelFormula("s", "problem.kernel.formula")).message).toContain("f(-1) = -1");
    expect(catchError(() => compileKernelFormula("1/abs(s)", "problem.kernel.formula")).message).toContain(
      'f(0) = Infinity for "1/abs(s)"',
    );
    const f = toUnaryFunction(compileKernelFormula("s > 0 ? s^2 : 0", "k"));
    expect([f(-2), f(3)]).toEqual([0, 9]);
  });

  it("evaluates allowed arithmetic exactly like the plain formula", () => {
    const f = toUnaryFunction(compileExpression("exp(s/2) * cosh(s) + max(s, 1) - log(2, 8)", ["s"], "x"));
    for (const s of [-1.5, 0, 0.3, 2]) expect(f(s)).toBe(Math.exp(s / 2) * Math.cosh(s) + Math.max(s, 1) - Math.log(2) / Math.log(8));
  });
});
