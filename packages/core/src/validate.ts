/**
 * Argument checks shared by every public function. Each throws a typed error naming the
 * argument, the expected and the actual value (see errors.ts).
 */
import { NonFiniteError, ShapeError, ValueError } from "./errors.js";
import { Matrix } from "./matrix.js";

/** Throws unless `m` is a `Matrix`. */
export function assertMatrix(m: unknown, argument: string): asserts m is Matrix {
  if (!(m instanceof Matrix)) {
    const actual = m === null ? "null" : Array.isArray(m) ? "an array (wrap it with Matrix.fromArray)" : typeof m;
    throw new ShapeError(argument, "a Matrix", actual);
  }
}

/**
 * Checks `m` is a Matrix with the given rows and/or cols (undefined = any).
 * `why` is appended to the expectation, e.g. `"cols = queries.cols"`.
 */
export function assertShape(m: unknown, argument: string, rows?: number, cols?: number, why?: string): asserts m is Matrix {
  assertMatrix(m, argument);
  if ((rows !== undefined && m.rows !== rows) || (cols !== undefined && m.cols !== cols)) {
    const exp = `${rows ?? "*"}×${cols ?? "*"}${why ? ` (${why})` : ""}`;
    throw new ShapeError(argument, exp, m.shape);
  }
}

/** Throws `ShapeError` when the matrix has no rows or no columns. */
export function assertNonEmpty(m: Matrix, argument: string): void {
  if (m.rows === 0 || m.cols === 0) throw new ShapeError(argument, "at least 1 row and 1 column", m.shape);
}

/** Throws `NonFiniteError` naming the first NaN/±Inf entry. */
export function assertFinite(m: Matrix | ArrayLike<number>, argument: string): void {
  const data = m instanceof Matrix ? m.data : m;
  // The common case in a monomorphic loop (this function sees every array kind, which made its own
  // loop ≈ 6 ns per entry — 47 ms on a 16384 × 512 latent, issue 14); the loop below names the entry.
  if (data instanceof Float64Array && allFiniteF64(data)) return;
  for (let i = 0; i < data.length; i++) {
    const v = data[i];
    if (!Number.isFinite(v)) {
      const where = m instanceof Matrix && m.cols > 0 ? `[${Math.floor(i / m.cols)}, ${i % m.cols}]` : `[${i}]`;
      throw new NonFiniteError(argument, "finite entries", `${v} at ${where}`);
    }
  }
}

/** Whether every entry is finite (x − x is 0 exactly for finite x, NaN for ±∞ and NaN). */
function allFiniteF64(data: Float64Array): boolean {
  // four independent sums, so the adds overlap instead of waiting on one another
  let a0 = 0;
  let a1 = 0;
  let a2 = 0;
  let a3 = 0;
  const n = data.length;
  let i = 0;
  for (; i + 3 < n; i += 4) {
    a0 += data[i] - data[i];
    a1 += data[i + 1] - data[i + 1];
    a2 += data[i + 2] - data[i + 2];
    a3 += data[i + 3] - data[i + 3];
  }
  for (; i < n; i++) a0 += data[i] - data[i];
  return a0 + a1 + a2 + a3 === 0;
}

/**
 * Throws `ShapeError` unless `v` is an array or typed array (optionally of the given length) —
 * the run-time check behind every `ArrayLike<number>` argument.
 */
export function assertVector(v: unknown, argument: string, length?: number, why?: string): asserts v is ArrayLike<number> {
  if (v === null || typeof v !== "object" || typeof (v as ArrayLike<number>).length !== "number") {
    throw new ShapeError(argument, length === undefined ? "an array of numbers" : `an array of ${length} numbers`, describe(v));
  }
  if (length !== undefined && (v as ArrayLike<number>).length !== length) {
    throw new ShapeError(argument, `length ${length}${why ? ` (${why})` : ""}`, `length ${(v as ArrayLike<number>).length}`);
  }
}

/**
 * Throws `ShapeError` unless `into` — a caller's buffer for a result (`into` arguments) — is
 * undefined or a Float64Array of at least `n` entries (longer is fine: its first n are used).
 * `what` says where n comes from (e.g. "N_Q·N_KV").
 */
export function assertOutputBuffer(into: unknown, n: number, argument = "into", what?: string): asserts into is Float64Array | undefined {
  if (into === undefined) return;
  const expected = `a Float64Array of at least ${n} floats${what ? ` (${what})` : ""}`;
  if (!(into instanceof Float64Array)) throw new ShapeError(argument, expected, into?.constructor?.name ?? describe(into));
  if (into.length < n) throw new ShapeError(argument, expected, `length ${into.length}`);
}

/** Throws `ShapeError` unless `parts` is a non-empty array of Matrix. */
export function assertMatrixList(parts: unknown, argument: string, minLength = 1): asserts parts is readonly Matrix[] {
  if (!Array.isArray(parts)) throw new ShapeError(argument, "an array of Matrix", describe(parts));
  if (parts.length < minLength) throw new ValueError(argument, `at least ${minLength} matri${minLength === 1 ? "x" : "ces"}`, "none");
  for (let i = 0; i < parts.length; i++) assertMatrix(parts[i], `${argument}[${i}]`);
}

/** Integer ≥ `min` (default 1). */
export function assertInteger(value: unknown, argument: string, min = 1, max = Number.MAX_SAFE_INTEGER): asserts value is number {
  if (typeof value !== "number" || !Number.isInteger(value) || value < min || value > max) {
    const range = max === Number.MAX_SAFE_INTEGER ? `an integer ≥ ${min}` : `an integer in [${min}, ${max}]`;
    throw new ValueError(argument, range, describe(value));
  }
}

/** Finite real number, optionally > 0. */
export function assertNumber(
  value: unknown,
  argument: string,
  opts: { positive?: boolean; min?: number; max?: number } = {},
): asserts value is number {
  if (typeof value !== "number" || !Number.isFinite(value)) throw new ValueError(argument, "a finite number", describe(value));
  if (opts.positive && !(value > 0)) throw new ValueError(argument, "a number > 0", describe(value));
  if (opts.min !== undefined && value < opts.min) throw new ValueError(argument, `a number ≥ ${opts.min}`, describe(value));
  if (opts.max !== undefined && value > opts.max) throw new ValueError(argument, `a number ≤ ${opts.max}`, describe(value));
}

/** `value` is one of `allowed`. */
export function assertOneOf<T extends string>(value: unknown, argument: string, allowed: readonly T[]): asserts value is T {
  if (typeof value !== "string" || !(allowed as readonly string[]).includes(value)) {
    throw new ValueError(argument, `one of ${allowed.map((a) => `"${a}"`).join(", ")}`, describe(value));
  }
}

/**
 * An optional options object: `undefined` (= all defaults) or a non-null, non-array object. The
 * one rule for every public function's options bag (issue #6): `null`, a number, a string or an
 * array is a `ValueError` naming the argument, never a `TypeError` from reading `options.x` or a
 * silent "no options". Call it before the first read of the options.
 */
export function assertOptions(value: unknown, argument = "options"): asserts value is object | undefined {
  if (value === undefined) return;
  if (value === null || typeof value !== "object" || Array.isArray(value)) {
    throw new ValueError(argument, "an options object (or undefined)", describe(value));
  }
}

/**
 * A REQUIRED options object (issue 9: every public function taking a seed takes `(inputs…, options,
 * seed)`): a non-null, non-array object; `undefined`, `null`, a number, a string or an array is a
 * `ValueError` naming the argument.
 */
export function assertRequiredOptions(value: unknown, argument = "options"): asserts value is object {
  if (value === null || typeof value !== "object" || Array.isArray(value)) {
    throw new ValueError(argument, "an options object", describe(value));
  }
}

/** `value` checked by `assertOptions`, with `undefined` as `{}`. */
export function optionsObject<T extends object>(value: T | null | undefined, argument = "options"): T {
  assertOptions(value, argument);
  return value ?? ({} as T);
}

/** Short description of a value for error messages. */
export function describe(value: unknown): string {
  if (typeof value === "string") return JSON.stringify(value);
  if (typeof value === "number" || typeof value === "boolean" || value === undefined || value === null) return String(value);
  if (value instanceof Matrix) return `Matrix ${value.shape}`;
  if (Array.isArray(value)) return `array of length ${value.length}`;
  return typeof value;
}
