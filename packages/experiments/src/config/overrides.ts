/**
 * Command-line overrides in Hydra's style: `key.path=value` arguments applied to the parsed config
 * before validation, so an override is checked by exactly the same schema and semantic checks as
 * the file (and a bad one is reported with the same path/expected/actual message).
 *
 * - `trials=10`, `seed=7`, `problem.params.n=1024`, `metrics=[rel_frobenius_error]`;
 * - `sweep.<axis>=…` where the axis name itself contains a dot: `'sweep.rf.numFeatures=[64,128]'`,
 *   `sweep.problem.n=2^k for k in 8..10`;
 * - a method by label or position: `methods.rf.params.numFeatures=64`, `methods[1].params.scheme=uniform`;
 * - a named problem by label or position: `problems.diffuse.params.n=1024`, `sweep.diffuse.d=[16,32]`;
 * - `~key.path` deletes a key (e.g. a fixed param you now want to sweep).
 *
 * Values are YAML flow scalars / sequences / maps (`1024`, `true`, `[64, 128]`, `{from: 1, to: 4}`),
 * parsed with the same restrictions as config files.
 */
import { ConfigError } from "./errors.js";
import { parseConfigText } from "./parse.js";

type Json = Record<string, unknown>;

function splitPath(path: string, source: string, arg: string): (string | number)[] {
  const segments: (string | number)[] = [];
  const parts = path.replace(/\[(\d+)\]/g, ".$1").split(".");
  for (let i = 0; i < parts.length; i++) {
    const p = parts[i];
    if (p === "")
      throw new ConfigError(source, [
        { path: `override ${JSON.stringify(arg)}`, expected: "a dotted key path such as problem.params.n", actual: JSON.stringify(path) },
      ]);
    // A sweep axis is one key whose name has a dot: sweep.<target>.<param>.
    if (segments.length === 1 && segments[0] === "sweep") {
      segments.push(parts.slice(i).join("."));
      break;
    }
    segments.push(/^\d+$/.test(p) ? Number(p) : p);
  }
  return segments;
}

/**
 * Applies `key=value` / `~key` overrides to a parsed config (a deep copy is returned; the input is
 * untouched).
 * @throws ConfigError naming the override for a malformed argument or an unreachable path.
 */
export function applyOverrides(raw: unknown, overrides: readonly string[], source = "<inline>"): unknown {
  if (overrides.length === 0) return raw;
  const root = structuredClone(raw) as Json;
  for (const arg of overrides) {
    const del = arg.startsWith("~");
    const eq = arg.indexOf("=");
    if ((!del && eq <= 0) || (del && eq >= 0)) {
      throw new ConfigError(source, [
        {
          path: `override ${JSON.stringify(arg)}`,
          expected: "key.path=value (e.g. trials=10, problem.params.n=1024) or ~key.path",
          actual: JSON.stringify(arg),
        },
      ]);
    }
    const path = del ? arg.slice(1) : arg.slice(0, eq);
    const segments = splitPath(path, source, arg);
    let value: unknown;
    if (!del) {
      const text = arg.slice(eq + 1);
      value = text === "" ? "" : parseConfigText(text, "yaml", `override ${path}`);
      if (value === null && text.trim() !== "null") value = text;
    }
    let node: unknown = root;
    for (let i = 0; i < segments.length - 1; i++) {
      let seg = segments[i];
      const container = node as Json | unknown[];
      if (Array.isArray(container) && typeof seg === "string") {
        // methods.<label> / problems.<label>: the entry whose label (or method name, when unlabelled) is `seg`.
        const idx = container.findIndex((m) => {
          const e = m as { label?: string; method?: string };
          return (e?.label ?? e?.method) === seg;
        });
        if (idx < 0)
          throw new ConfigError(source, [
            {
              path: `override ${JSON.stringify(arg)}`,
              expected: `a ${segments[i - 1] === "problems" ? "problem" : "method"} label among ${container.map((m) => JSON.stringify((m as { label?: string; method?: string })?.label ?? (m as { method?: string })?.method)).join(", ")}`,
              actual: JSON.stringify(seg),
            },
          ]);
        seg = idx;
      }
      const next = (container as Record<string | number, unknown>)[seg];
      if (next === undefined || next === null) {
        if (del) return root;
        (container as Record<string | number, unknown>)[seg] = {};
      } else if (typeof next !== "object") {
        throw new ConfigError(source, [
          {
            path: `override ${JSON.stringify(arg)}`,
            expected: `${segments.slice(0, i + 1).join(".")} to be a map`,
            actual: JSON.stringify(next),
          },
        ]);
      }
      node = (container as Record<string | number, unknown>)[seg];
    }
    const last = segments[segments.length - 1];
    if (del) delete (node as Record<string | number, unknown>)[last];
    else (node as Record<string | number, unknown>)[last] = value;
  }
  return root;
}
