/**
 * Deterministic text for numbers and CSV.
 *
 * Numbers: the shortest decimal that round-trips to the same double (ECMAScript Number::toString,
 * exactly specified by the language, so identical on every machine for the same double), with
 * -0 written as 0 and non-finite values as `nan`, `inf`, `-inf` (what pandas and R read back).
 * Missing values are empty fields. CSV: RFC 4180 via csv-stringify, `\n` line ends, a final newline,
 * fields quoted only when they contain a comma, quote or line break.
 */
import { stringify } from "csv-stringify/sync";

/** Text of a number for results files (see module doc); null/undefined → "". */
export function formatNumber(x: number | null | undefined): string {
  if (x === null || x === undefined) return "";
  if (Number.isNaN(x)) return "nan";
  if (x === Number.POSITIVE_INFINITY) return "inf";
  if (x === Number.NEGATIVE_INFINITY) return "-inf";
  if (x === 0) return "0";
  return String(x);
}

/** Parses a field written by `formatNumber` ("" → null). */
export function parseNumber(text: string): number | null {
  if (text === "") return null;
  if (text === "nan") return Number.NaN;
  if (text === "inf") return Number.POSITIVE_INFINITY;
  if (text === "-inf") return Number.NEGATIVE_INFINITY;
  return Number(text);
}

/** A CSV document: a header row and string rows. */
export function toCsv(header: readonly string[], rows: readonly (readonly string[])[]): string {
  return stringify([header as string[], ...(rows as string[][])], { record_delimiter: "unix", eof: true });
}

/** Display text of a number in tables and figures (4 significant digits). */
export function formatDisplay(x: number | null): string {
  if (x === null) return "–";
  if (!Number.isFinite(x)) return Number.isNaN(x) ? "nan" : x > 0 ? "∞" : "−∞";
  if (x === 0) return "0";
  const a = Math.abs(x);
  // Counts (floats stored, small flop counts) are shown exactly, never rounded to 4 digits.
  if (Number.isInteger(x) && a < 1e6) return String(x);
  if (a >= 1e5 || a < 1e-3) {
    const [m, e] = x.toExponential(3).split("e");
    return `${m}e${Number(e)}`;
  }
  return Number(x.toPrecision(4)).toString();
}

/** `nQueries` → `n_queries` (results.csv column names of params). */
export function snakeCase(name: string): string {
  return name
    .replace(/([a-z0-9])([A-Z])/g, "$1_$2")
    .replace(/[^A-Za-z0-9]+/g, "_")
    .toLowerCase();
}
