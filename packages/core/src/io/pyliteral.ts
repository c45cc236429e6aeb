/**
 * A strict parser for the Python literal subset used by `.npy` headers
 * (`{'descr': '<f8', 'fortran_order': False, 'shape': (3, 4), }`): dicts, tuples, lists,
 * strings, integers, True/False/None. Nothing is evaluated; nesting depth is bounded so a
 * hostile header cannot exhaust the stack.
 */
import { FormatError } from "../errors.js";

/** A parsed Python literal. */
export type PyValue =
  | string
  | number
  | boolean
  | null
  | { readonly kind: "tuple"; readonly items: readonly PyValue[] }
  | { readonly kind: "list"; readonly items: readonly PyValue[] }
  | { readonly kind: "dict"; readonly entries: ReadonlyMap<string, PyValue> };

const MAX_DEPTH = 32;

/**
 * Parses one Python literal spanning all of `text` (surrounding whitespace allowed).
 * @throws FormatError naming `argument`, the position and what was found.
 */
export function parsePythonLiteral(text: string, argument: string): PyValue {
  let pos = 0;
  const expectedText = "a Python literal (dict, tuple, list, string, integer, True, False, None)";
  const fail = (what: string): never => {
    const near = JSON.stringify(text.slice(pos, pos + 20));
    throw new FormatError(argument, expectedText, `${what} at character ${pos} (near ${near})`);
  };
  const skipSpace = () => {
    while (pos < text.length && /\s/.test(text[pos])) pos++;
  };

  const parseString = (): string => {
    const quote = text[pos++];
    let out = "";
    while (pos < text.length && text[pos] !== quote) {
      const ch = text[pos++];
      if (ch === "\n") fail("a line break inside a string");
      if (ch !== "\\") {
        out += ch;
        continue;
      }
      const esc = text[pos++];
      switch (esc) {
        case "\\":
        case "'":
        case '"':
          out += esc;
          break;
        case "n":
          out += "\n";
          break;
        case "t":
          out += "\t";
          break;
        case "x":
        case "u": {
          const len = esc === "x" ? 2 : 4;
          const hex = text.slice(pos, pos + len);
          if (!new RegExp(`^[0-9a-fA-F]{${len}}$`).test(hex)) fail(`a bad \\${esc} escape`);
          out += String.fromCharCode(Number.parseInt(hex, 16));
          pos += len;
          break;
        }
        default:
          fail(`an unsupported escape \\${esc ?? ""}`);
      }
    }
    if (pos >= text.length) fail("an unterminated string");
    pos++;
    return out;
  };

  const parseSequence = (close: string, depth: number): { items: PyValue[]; trailingComma: boolean } => {
    const items: PyValue[] = [];
    let trailingComma = false;
    skipSpace();
    while (text[pos] !== close) {
      items.push(parseValue(depth + 1));
      skipSpace();
      if (text[pos] === ",") {
        pos++;
        trailingComma = true;
        skipSpace();
      } else if (text[pos] !== close) {
        fail(`a missing "," or "${close}"`);
      } else {
        trailingComma = false;
      }
    }
    pos++;
    return { items, trailingComma };
  };

  const parseValue = (depth: number): PyValue => {
    if (depth > MAX_DEPTH) fail(`nesting deeper than ${MAX_DEPTH}`);
    skipSpace();
    if (pos >= text.length) fail("the end of the text");
    const ch = text[pos];
    if (ch === "'" || ch === '"') return parseString();
    if (ch === "(") {
      pos++;
      const { items, trailingComma } = parseSequence(")", depth);
      // Python: "(x)" is x itself; "(x,)" and "()" are tuples.
      if (items.length === 1 && !trailingComma) return items[0];
      return { kind: "tuple", items };
    }
    if (ch === "[") {
      pos++;
      return { kind: "list", items: parseSequence("]", depth).items };
    }
    if (ch === "{") {
      pos++;
      const entries = new Map<string, PyValue>();
      skipSpace();
      while (text[pos] !== "}") {
        skipSpace();
        if (text[pos] !== "'" && text[pos] !== '"') fail("a non-string dict key");
        const key = parseString();
        if (entries.has(key)) fail(`a duplicate key ${JSON.stringify(key)}`);
        skipSpace();
        if (text[pos] !== ":") fail('a missing ":"');
        pos++;
        entries.set(key, parseValue(depth + 1));
        skipSpace();
        if (text[pos] === ",") {
          pos++;
          skipSpace();
        } else if (text[pos] !== "}") {
          fail('a missing "," or "}"');
        }
      }
      pos++;
      return { kind: "dict", entries };
    }
    const word = /^(?:True|False|None)\b/.exec(text.slice(pos));
    if (word) {
      pos += word[0].length;
      return word[0] === "True" ? true : word[0] === "False" ? false : null;
    }
    // Integers, with the "L" suffix Python 2 era headers carry ("(3L, 4L)").
    const int = /^[-+]?\d+L?/.exec(text.slice(pos));
    if (int && !/^[.eE]/.test(text.slice(pos + int[0].length))) {
      pos += int[0].length;
      const value = Number(int[0].replace(/L$/, ""));
      if (!Number.isSafeInteger(value)) fail(`an integer beyond 2^53 (${int[0]})`);
      return value;
    }
    return fail("an unexpected character");
  };

  const value = parseValue(0);
  skipSpace();
  if (pos < text.length) fail("unexpected text after the literal");
  return value;
}
