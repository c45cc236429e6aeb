/** Config errors: every problem found, each with the config path, what was expected and what was found. */
import { ValueError } from "@randattn/core";

/** One problem in a config. */
export interface ConfigIssue {
  /** Path of the bad key, e.g. `methods[1].params.rank` or `sweep["problem.n"][2]`. */
  path: string;
  expected: string;
  actual: string;
}

/** A config that cannot run. `issues` lists every problem; the message has one line per issue. */
export class ConfigError extends ValueError {
  readonly issues: readonly ConfigIssue[];
  readonly source: string;

  constructor(source: string, issues: readonly ConfigIssue[]) {
    const first = issues[0] ?? { path: "config", expected: "a valid config", actual: "an invalid one" };
    const lines = issues.map((i) => `  - ${i.path}: expected ${i.expected}, got ${i.actual}`);
    super(first.path, first.expected, first.actual, `invalid config ${source}:\n${lines.join("\n")}`);
    this.issues = issues;
    this.source = source;
  }
}

/** Formats a list of path segments as `a.b[2]["c.d"]`. */
export function formatPath(segments: readonly (string | number)[]): string {
  let out = "";
  for (const s of segments) {
    if (typeof s === "number" || /^\d+$/.test(s)) out += `[${s}]`;
    else if (/^[A-Za-z_][A-Za-z0-9_]*$/.test(s)) out += out === "" ? s : `.${s}`;
    else out += `[${JSON.stringify(s)}]`;
  }
  return out === "" ? "config" : out;
}
