/**
 * A bundle's text with every non-ASCII character written as a `\uXXXX` escape (astral characters as
 * their two UTF-16 halves) — used by bundle.mjs on what esbuild wrote.
 *
 * Why: esbuild escapes strings, templates and identifiers (its default `charset: "ascii"`) but
 * copies comments and regular-expression literals as they are, and one non-ASCII character anywhere
 * makes V8 decode the whole file from UTF-8 and hold it as a two-byte string (5.6 MB for the 2.8 MB
 * CLI bundle): ≈ 9 ms more at every CLI start, and again in every sweep worker (issue 14). A `\uXXXX`
 * means nothing in a comment and the same character in a regular expression (as a surrogate pair
 * with the `u` flag, one code point); outside those esbuild's output is ASCII already.
 */
export function asciiSource(text) {
  let out = "";
  let last = 0;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c < 0x80) continue;
    out += `${text.slice(last, i)}\\u${c.toString(16).padStart(4, "0")}`;
    last = i + 1;
  }
  return last === 0 ? text : out + text.slice(last);
}
