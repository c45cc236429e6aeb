/**
 * The restricted expression language of configs.
 *
 * Syntax (documented in README "Sweep values"):
 * - scalar expression: numbers, `+ - * / ^ %`, unary minus, parentheses, comparisons and
 *   `c ? a : b`, the constants `pi` and `e`, and the functions listed in `ALLOWED_FUNCTIONS`
 *   (abs, sqrt, exp, log, tanh, min, max, …);
 * - range: `A..B` or `A..B step C` (inclusive; A, B, C scalar expressions);
 * - comprehension: `EXPR for k in A..B [step C]`, e.g. `2^k for k in 6..12`;
 * - kernel formula: a scalar expression in the one variable `s` (the scaled score), e.g.
 *   `exp(s)`, `s > 0 ? s^2 : 0`, `1 + s + s^2/2`.
 *
 * Security (paper-independent; see README "Reliability"): mathjs is used ONLY as a parser. The
 * parse tree is checked against an allowlist of node types, operators, functions and names, then
 * converted to a plain tree (base/expr-eval.ts) that we evaluate ourselves. So `import`,
 * `createUnit`, `evaluate`/`parse`/`compile`, function definitions, assignments, property access
 * (`cos.constructor`), matrices, strings and units can never run. Text length, tree size, range
 * length and value magnitude are bounded, so no expression can hang or exhaust the runner.
 */
import { ValueError } from "@randattn/core";
import { currentBundle } from "../platform/bundle.js";
import { hasNodeBuiltins, nodeModule, nodeUrl } from "../platform/node.js";
import {
  ALLOWED_FUNCTIONS,
  type BinaryOp,
  CONSTANTS,
  type CompiledExpression,
  type ExprNode,
  FUNCTION_ARITY,
  type FunctionName,
  toFunction,
} from "../base/expr-eval.js";

/** Longest expression text accepted (characters). */
export const MAX_EXPRESSION_LENGTH = 256;
/** Largest parse tree accepted (nodes). */
export const MAX_EXPRESSION_NODES = 128;
/** Most values one range or comprehension may produce. */
export const MAX_RANGE_VALUES = 10_000;
/** Largest magnitude a sweep value may have (keeps `2^k for k in 1..2000` from producing ∞ or absurd sizes). */
export const MAX_SWEEP_MAGNITUDE = 1e15;

const OPERATORS: Record<string, BinaryOp> = {
  add: "+",
  subtract: "-",
  multiply: "*",
  divide: "/",
  pow: "^",
  mod: "%",
  smaller: "<",
  larger: ">",
  smallerEq: "<=",
  largerEq: ">=",
  equal: "==",
  unequal: "!=",
};

// mathjs is loaded (synchronously) only when a config actually contains an expression, so plain
// configs and worker threads never pay for it. In a built tree that is
// dist/config/expression-parser.bundle.cjs — mathjs's `parse` alone (`create({ parseDependencies })`,
// scripts/bundle.mjs), ≈ 35 ms — while `currentBundle` finds it current; else the CommonJS build of
// `mathjs/number`, ≈ 0.4 s (measured on the quickstart: a tenth of the sweep, on the main thread
// before any worker starts; issue 14). Both give the same parse trees (test/config/expression-parser.test.ts).
// Outside Node (a browser) there is no synchronous require: call `loadExpressionParser()` first.
let mathParse: ((text: string) => unknown) | undefined;
function parse(text: string): unknown {
  if (!mathParse) {
    if (!hasNodeBuiltins()) {
      throw new ValueError("expression", "the expression parser loaded first (await loadExpressionParser())", JSON.stringify(text));
    }
    mathParse = loadParserSync(import.meta.url);
  }
  return mathParse(text);
}

type Parse = (text: string) => unknown;

/**
 * mathjs's `parse`, loaded synchronously for the module at `moduleUrl`: the bundle in its folder
 * when current, else `mathjs/number`. Exported for the test that compares the two.
 * @param prefer "bundle" (if current) or "modules". @default "bundle"
 * @internal
 */
export function loadParserSync(moduleUrl: string, prefer: "bundle" | "modules" = "bundle"): Parse {
  const require = nodeModule("expression").createRequire(moduleUrl);
  const bundle =
    prefer === "bundle" && moduleUrl.startsWith("file:") ? currentBundle(new URL("./", moduleUrl), "expression-parser.bundle.json") : null;
  if (bundle) return (require(nodeUrl("expression").fileURLToPath(bundle)) as { parse: Parse }).parse;
  return (require("mathjs/number") as { parse: Parse }).parse;
}

/**
 * Loads mathjs asynchronously so expressions (`"2^k for k in 4..8"`, kernel formulas) work in a
 * runtime without a synchronous `require` (a browser, a Web Worker). Not needed in Node.
 */
export async function loadExpressionParser(): Promise<void> {
  if (mathParse) return;
  const mathjs = (await import("mathjs/number")) as unknown as { parse: (t: string) => unknown };
  mathParse ??= mathjs.parse;
}

interface MathNode {
  type: string;
  value?: unknown;
  name?: string;
  fn?: unknown;
  op?: string;
  args?: MathNode[];
  content?: MathNode;
  condition?: MathNode;
  trueExpr?: MathNode;
  falseExpr?: MathNode;
}

/**
 * Parses `source` as a scalar expression over `variables` and checks it against the allowlist.
 * @param argument config path used in error messages, e.g. `"sweep.problem.n"`.
 * @throws ValueError naming `argument`, what is allowed and the offending construct.
 */
export function compileExpression(source: string, variables: readonly string[], argument: string): CompiledExpression {
  if (typeof source !== "string") throw new ValueError(argument, "an expression string", typeof source);
  if (source.length > MAX_EXPRESSION_LENGTH) {
    throw new ValueError(argument, `an expression of at most ${MAX_EXPRESSION_LENGTH} characters`, `${source.length} characters`);
  }
  if (source.trim() === "") throw new ValueError(argument, "a non-empty expression", JSON.stringify(source));
  let tree: MathNode;
  try {
    tree = parse(source) as unknown as MathNode;
  } catch (e) {
    throw new ValueError(argument, "a valid expression", `${JSON.stringify(source)} (${(e as Error).message})`);
  }
  let nodes = 0;
  const convert = (node: MathNode): ExprNode => {
    if (++nodes > MAX_EXPRESSION_NODES) {
      throw new ValueError(argument, `an expression of at most ${MAX_EXPRESSION_NODES} terms`, JSON.stringify(source));
    }
    switch (node.type) {
      case "ConstantNode":
        if (typeof node.value !== "number") {
          throw new ValueError(argument, "numbers only", `${typeof node.value} constant ${JSON.stringify(node.value)}`);
        }
        return { t: "num", v: node.value };
      case "SymbolNode": {
        const name = String(node.name);
        if (variables.includes(name)) return { t: "var", name };
        if (Object.hasOwn(CONSTANTS, name)) return { t: "num", v: CONSTANTS[name] };
        const allowed = [...variables, ...Object.keys(CONSTANTS)].join(", ");
        throw new ValueError(argument, `only the names ${allowed}`, `unknown name "${name}" in ${JSON.stringify(source)}`);
      }
      case "ParenthesisNode":
        return convert(node.content!);
      case "OperatorNode": {
        const fn = String(node.fn);
        const args = node.args ?? [];
        if ((fn === "unaryMinus" || fn === "unaryPlus") && args.length === 1) {
          const a = convert(args[0]);
          return fn === "unaryMinus" ? { t: "neg", a } : a;
        }
        const op = Object.hasOwn(OPERATORS, fn) ? OPERATORS[fn] : undefined;
        if (op === undefined || args.length !== 2) {
          throw new ValueError(argument, "only + - * / ^ % and comparisons", `operator "${node.op ?? fn}" in ${JSON.stringify(source)}`);
        }
        return { t: "op", op, a: convert(args[0]), b: convert(args[1]) };
      }
      case "FunctionNode": {
        const fnNode = node.fn as MathNode;
        if (fnNode?.type !== "SymbolNode") {
          throw new ValueError(argument, "calls of named functions only", `a call of a computed function in ${JSON.stringify(source)}`);
        }
        const name = String(fnNode.name);
        if (!Object.hasOwn(ALLOWED_FUNCTIONS, name)) {
          throw new ValueError(
            argument,
            `only the functions ${Object.keys(ALLOWED_FUNCTIONS).join(", ")}`,
            `function "${name}" in ${JSON.stringify(source)}`,
          );
        }
        const args = node.args ?? [];
        const [lo, hi] = FUNCTION_ARITY[name as FunctionName];
        if (args.length < lo || args.length > hi) {
          throw new ValueError(argument, `${name} with ${lo === hi ? lo : `${lo} to ${hi}`} argument(s)`, `${args.length} argument(s)`);
        }
        return { t: "call", fn: name as FunctionName, args: args.map(convert) };
      }
      case "ConditionalNode":
        return { t: "cond", c: convert(node.condition!), a: convert(node.trueExpr!), b: convert(node.falseExpr!) };
      default: {
        const what: Record<string, string> = {
          AccessorNode: "property or index access",
          IndexNode: "indexing",
          AssignmentNode: "assignment",
          FunctionAssignmentNode: "function definition",
          BlockNode: "multiple statements",
          ArrayNode: "matrices",
          ObjectNode: "objects",
          RangeNode: "a mathjs range (write A..B instead)",
          RelationalNode: "chained comparisons",
        };
        throw new ValueError(argument, "a plain arithmetic expression", `${what[node.type] ?? node.type} in ${JSON.stringify(source)}`);
      }
    }
  };
  const ast = convert(tree);
  return { source, variables: [...variables], ast };
}

/** Evaluates a closed (variable-free) expression to a finite number. */
export function evaluateScalar(source: string, argument: string): number {
  const f = toFunction(compileExpression(source, [], argument));
  return checkValue(f(), argument, source);
}

function checkValue(v: number, argument: string, source: string): number {
  if (!Number.isFinite(v)) throw new ValueError(argument, "a finite value", `${v} from ${JSON.stringify(source)}`);
  if (Math.abs(v) > MAX_SWEEP_MAGNITUDE) {
    throw new ValueError(argument, `a value of magnitude at most ${MAX_SWEEP_MAGNITUDE}`, `${v} from ${JSON.stringify(source)}`);
  }
  // -0 and 0 must name the same cell.
  return v === 0 ? 0 : v;
}

/** The numbers of an inclusive range `from..to step step`; bounded by MAX_RANGE_VALUES. */
export function rangeValues(from: number, to: number, step: number, argument: string): number[] {
  if (!(step > 0) || !Number.isFinite(step)) throw new ValueError(argument, "a range step > 0", String(step));
  if (to < from) throw new ValueError(argument, "a range with end ≥ start", `${from}..${to}`);
  // The 1e-9 slack keeps `0..1 step 0.1` at 11 values despite rounding in (to − from)/step.
  const count = Math.floor((to - from) / step + 1e-9) + 1;
  if (count > MAX_RANGE_VALUES) {
    throw new ValueError(argument, `a range of at most ${MAX_RANGE_VALUES} values`, `${count} values in ${from}..${to} step ${step}`);
  }
  const out: number[] = [];
  // from + i·step (not a running sum) so every value is the same on every machine and order.
  for (let i = 0; i < count; i++) out.push(from + i * step);
  return out;
}

const COMPREHENSION = /^(.+?)\s+for\s+([A-Za-z_][A-Za-z0-9_]*)\s+in\s+(.+)$/s;
const RANGE = /^(.+?)\.\.(.+?)(?:\s+step\s+(.+))?$/s;

function parseRange(text: string, argument: string): number[] | undefined {
  const m = RANGE.exec(text.trim());
  if (!m) return undefined;
  const from = evaluateScalar(m[1].trim(), argument);
  const to = evaluateScalar(m[2].trim(), argument);
  const step = m[3] === undefined ? 1 : evaluateScalar(m[3].trim(), argument);
  return rangeValues(from, to, step, argument);
}

/**
 * Expands one sweep-axis string (range, comprehension or single expression) into its values.
 * @throws ValueError with `argument` for anything outside the mini-syntax or the bounds.
 */
export function expandSweepExpression(text: string, argument: string): number[] {
  if (typeof text !== "string") throw new ValueError(argument, "a sweep expression string", typeof text);
  if (text.length > MAX_EXPRESSION_LENGTH) {
    throw new ValueError(argument, `an expression of at most ${MAX_EXPRESSION_LENGTH} characters`, `${text.length} characters`);
  }
  const comp = COMPREHENSION.exec(text.trim());
  if (comp) {
    const [, body, variable, rangeText] = comp;
    if (Object.hasOwn(CONSTANTS, variable) || Object.hasOwn(ALLOWED_FUNCTIONS, variable)) {
      throw new ValueError(argument, "a loop variable that is not a constant or function name", variable);
    }
    const range = parseRange(rangeText, argument);
    if (!range) throw new ValueError(argument, "`EXPR for k in A..B [step C]`", JSON.stringify(text));
    const f = toFunction(compileExpression(body.trim(), [variable], argument));
    return range.map((k) => checkValue(f(k), argument, text));
  }
  const range = parseRange(text, argument);
  if (range) return range.map((v) => checkValue(v, argument, text));
  return [evaluateScalar(text, argument)];
}

/** Compiles a custom kernel formula f(s) (the variable is `s`, the scaled score ⟨q,k⟩·scale). */
export function compileKernelFormula(formula: string, argument: string): CompiledExpression {
  const expr = compileExpression(formula, ["s"], argument);
  // Probe a few scores so an obviously broken formula (negative or non-finite) fails at load
  // time, not in every cell; the attention code still checks each value (κ ≥ 0, finite).
  const f = toFunction(expr);
  for (const s of [-1, 0, 0.5, 1]) {
    const v = f(s);
    if (!Number.isFinite(v) || v < 0) {
      throw new ValueError(argument, "a kernel formula with f(s) ≥ 0 and finite", `f(${s}) = ${v} for ${JSON.stringify(formula)}`);
    }
  }
  return expr;
}
