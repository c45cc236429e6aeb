/**
 * Typed errors of RandAttn. Every public function validates its arguments and throws one of
 * these, naming the argument, what was expected and what was received — so a researcher sees
 * "keys: expected 128×64 (cols = queries.cols = 64), got 128×32" rather than a NaN three calls later.
 */

/** Base class of every error RandAttn throws on purpose. */
export class RandAttnError extends Error {
  /** The argument (or config path) at fault, e.g. `"keys"` or `"sweep.axes[0].values"`. */
  readonly argument: string;
  /** What was expected, in words or as a shape such as `"128×64"`. */
  readonly expected: string;
  /** What was received. */
  readonly actual: string;

  constructor(argument: string, expected: string, actual: string, message?: string) {
    super(message ?? `${argument}: expected ${expected}, got ${actual}`);
    this.name = new.target.name;
    this.argument = argument;
    this.expected = expected;
    this.actual = actual;
  }
}

/** A matrix or tensor has the wrong shape (rows × cols, head count, sequence length…). */
export class ShapeError extends RandAttnError {}

/** A scalar parameter is out of range or of the wrong kind (non-integer head count, s = 0…). */
export class ValueError extends RandAttnError {}

/** An input holds NaN or ±Infinity where finite numbers are required. */
export class NonFiniteError extends RandAttnError {}

/** A computation reached a state with no defined answer (e.g. a fully masked row with `onEmptyRow: "error"`). */
export class NumericalError extends RandAttnError {}

/** Malformed external data: a truncated `.npy` file, a lying header, an unsupported dtype. */
export class FormatError extends RandAttnError {}
