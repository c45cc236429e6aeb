/**
 * Evaluation of the restricted expression language used in configs (sweep values, custom kernel
 * formulas). Expressions are parsed once in the main thread (config/expressions.ts, with mathjs's
 * parser) and turned into this plain, JSON-serializable tree; evaluating it needs no mathjs and
 * cannot reach anything but the arithmetic below — there is no property access, no assignment,
 * no function definition and no loop, so the work is bounded by the size of the tree.
 */
import { ValueError } from "@randattn/core";

/** Binary operators of the language. */
export type BinaryOp = "+" | "-" | "*" | "/" | "^" | "%" | "<" | ">" | "<=" | ">=" | "==" | "!=";

/** Functions of the language (all pure, all on numbers). */
export const ALLOWED_FUNCTIONS = {
  abs: Math.abs,
  sqrt: Math.sqrt,
  cbrt: Math.cbrt,
  exp: Math.exp,
  expm1: Math.expm1,
  log: (x: number, base?: number) => (base === undefined ? Math.log(x) : Math.log(x) / Math.log(base)),
  log2: Math.log2,
  log10: Math.log10,
  log1p: Math.log1p,
  sin: Math.sin,
  cos: Math.cos,
  tan: Math.tan,
  asin: Math.asin,
  acos: Math.acos,
  atan: Math.atan,
  atan2: Math.atan2,
  sinh: Math.sinh,
  cosh: Math.cosh,
  tanh: Math.tanh,
  floor: Math.floor,
  ceil: Math.ceil,
  round: Math.round,
  sign: Math.sign,
  min: Math.min,
  max: Math.max,
  pow: Math.pow,
} as const satisfies Record<string, (...args: number[]) => number>;

/** Name of an allowed function. */
export type FunctionName = keyof typeof ALLOWED_FUNCTIONS;

/** Number of arguments each function accepts: [min, max]. */
export const FUNCTION_ARITY: Record<FunctionName, readonly [number, number]> = {
  abs: [1, 1],
  sqrt: [1, 1],
  cbrt: [1, 1],
  exp: [1, 1],
  expm1: [1, 1],
  log: [1, 2],
  log2: [1, 1],
  log10: [1, 1],
  log1p: [1, 1],
  sin: [1, 1],
  cos: [1, 1],
  tan: [1, 1],
  asin: [1, 1],
  acos: [1, 1],
  atan: [1, 1],
  atan2: [2, 2],
  sinh: [1, 1],
  cosh: [1, 1],
  tanh: [1, 1],
  floor: [1, 1],
  ceil: [1, 1],
  round: [1, 1],
  sign: [1, 1],
  min: [1, 8],
  max: [1, 8],
  pow: [2, 2],
};

/** Named constants of the language. */
export const CONSTANTS: Readonly<Record<string, number>> = { pi: Math.PI, e: Math.E };

/** A node of a parsed expression: plain data, safe to send to a worker thread. */
export type ExprNode =
  | { t: "num"; v: number }
  | { t: "var"; name: string }
  | { t: "neg"; a: ExprNode }
  | { t: "op"; op: BinaryOp; a: ExprNode; b: ExprNode }
  | { t: "call"; fn: FunctionName; args: ExprNode[] }
  | { t: "cond"; c: ExprNode; a: ExprNode; b: ExprNode };

/** A parsed expression with the variables it may use. */
export interface CompiledExpression {
  /** The text as written in the config. */
  readonly source: string;
  /** The variables the expression may reference, in argument order. */
  readonly variables: readonly string[];
  readonly ast: ExprNode;
}

type Fn = (vars: Float64Array) => number;

function build(node: ExprNode, variables: readonly string[]): Fn {
  switch (node.t) {
    case "num": {
      const v = node.v;
      return () => v;
    }
    case "var": {
      const idx = variables.indexOf(node.name);
      if (idx < 0) throw new ValueError("expression", `one of the variables ${variables.join(", ") || "(none)"}`, node.name);
      return (vars) => vars[idx];
    }
    case "neg": {
      const a = build(node.a, variables);
      return (vars) => -a(vars);
    }
    case "op": {
      const a = build(node.a, variables);
      const b = build(node.b, variables);
      switch (node.op) {
        case "+":
          return (v) => a(v) + b(v);
        case "-":
          return (v) => a(v) - b(v);
        case "*":
          return (v) => a(v) * b(v);
        case "/":
          return (v) => a(v) / b(v);
        case "^":
          return (v) => a(v) ** b(v);
        case "%":
          return (v) => a(v) % b(v);
        case "<":
          return (v) => (a(v) < b(v) ? 1 : 0);
        case ">":
          return (v) => (a(v) > b(v) ? 1 : 0);
        case "<=":
          return (v) => (a(v) <= b(v) ? 1 : 0);
        case ">=":
          return (v) => (a(v) >= b(v) ? 1 : 0);
        case "==":
          return (v) => (a(v) === b(v) ? 1 : 0);
        case "!=":
          return (v) => (a(v) !== b(v) ? 1 : 0);
      }
      throw new ValueError("expression", "a known operator", String((node as { op: unknown }).op));
    }
    case "call": {
      if (!Object.hasOwn(ALLOWED_FUNCTIONS, node.fn)) throw new ValueError("expression", "an allowed function", String(node.fn));
      const f = ALLOWED_FUNCTIONS[node.fn] as (...x: number[]) => number;
      const args = node.args.map((x) => build(x, variables));
      if (args.length === 1) {
        const [a] = args;
        return (v) => f(a(v));
      }
      if (args.length === 2) {
        const [a, b] = args;
        return (v) => f(a(v), b(v));
      }
      return (v) => f(...args.map((g) => g(v)));
    }
    case "cond": {
      const c = build(node.c, variables);
      const a = build(node.a, variables);
      const b = build(node.b, variables);
      return (v) => (c(v) !== 0 ? a(v) : b(v));
    }
  }
  throw new ValueError("expression", "a known node", JSON.stringify(node).slice(0, 40));
}

/**
 * Turns a compiled expression into a function of its variables (closures only — no `eval`,
 * no `new Function`). The returned function may produce a non-finite number; callers check.
 */
export function toFunction(expr: CompiledExpression): (...values: number[]) => number {
  const fn = build(expr.ast, expr.variables);
  const n = expr.variables.length;
  const buf = new Float64Array(n);
  return (...values: number[]) => {
    for (let i = 0; i < n; i++) buf[i] = values[i];
    return fn(buf);
  };
}

/** A one-variable function `f(s)` from a compiled kernel formula (see `compileKernelFormula`). */
export function toUnaryFunction(expr: CompiledExpression): (s: number) => number {
  if (expr.variables.length !== 1)
    throw new ValueError("formula", "an expression in one variable", `variables ${expr.variables.join(", ")}`);
  const fn = build(expr.ast, expr.variables);
  const buf = new Float64Array(1);
  return (s: number) => {
    buf[0] = s;
    return fn(buf);
  };
}
