/** The differences between two JSON values, as `path: old → new` lines (for refusal messages). */

const show = (v: unknown) => (v === undefined ? "(absent)" : JSON.stringify(v));

function pathText(path: readonly (string | number)[]): string {
  let out = "";
  for (const s of path) {
    if (typeof s === "number") out += `[${s}]`;
    else if (/^[A-Za-z_][A-Za-z0-9_]*$/.test(s)) out += out === "" ? s : `.${s}`;
    else out += `[${JSON.stringify(s)}]`;
  }
  return out === "" ? "(root)" : out;
}

/**
 * Lines `path: old → new` for every leaf where `a` and `b` differ (objects compared key by key,
 * arrays of equal length item by item, anything else as a whole), sorted by path.
 */
export function jsonDiff(a: unknown, b: unknown, path: (string | number)[] = []): string[] {
  const isObj = (v: unknown): v is Record<string, unknown> => typeof v === "object" && v !== null && !Array.isArray(v);
  if (isObj(a) && isObj(b)) {
    const keys = [...new Set([...Object.keys(a), ...Object.keys(b)])].sort();
    return keys.flatMap((k) => jsonDiff(a[k], b[k], [...path, k]));
  }
  if (Array.isArray(a) && Array.isArray(b) && a.length === b.length && a.every((x) => typeof x === "object" && x !== null)) {
    return a.flatMap((x, i) => jsonDiff(x, b[i], [...path, i]));
  }
  return JSON.stringify(a) === JSON.stringify(b) ? [] : [`${pathText(path)}: ${show(a)} → ${show(b)}`];
}
