// Shared property harness for issue #6 ("Bad input, everywhere public"): a table of public
// functions, each with an argument generator and the shape its result must have, run through one
// invariant (pure-rand style shared property suites):
//
//   every call either returns a finite, correctly shaped result, or throws one of the project's
//   typed errors (a RandAttnError subclass) whose message names the argument — never a TypeError /
//   RangeError from deep inside, a hang, or a silent NaN/±Inf in the output.
//
// Every generated input is counted per family (returned / rejected by error class) and the totals
// are printed and written as JSON at the end of the suite (see `writeSummary`).
import { mkdirSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import fc from "fast-check";
import { afterAll, describe, it } from "vitest";
import { Matrix, RandAttnError } from "@randattn/core";

/** One public function under test. */
export interface Entry {
  /** Family name in the summary (e.g. "attention", "lowrank"). */
  family: string;
  /** Function (or method) name, e.g. "attention(queries, keys, values, options)". */
  name: string;
  /** Argument tuples: valid, edge-case and bad values mixed. */
  args: fc.Arbitrary<readonly unknown[]>;
  /** Calls the function under test. */
  // biome-ignore lint/suspicious/noExplicitAny: the table holds functions of every signature
  call: (...args: any[]) => unknown;
  /** Shape check of a returned value: a problem description, or undefined when it is right. */
  // biome-ignore lint/suspicious/noExplicitAny: as above
  check?: (out: any, args: any[]) => string | undefined;
  /** The result may legitimately hold ±Inf (e.g. an additive mask's −∞). NaN is never allowed. */
  allowInfiniteOutput?: boolean;
  /**
   * IEEE-transparent building block (linalg primitives): NaN/±Inf entries of its inputs may pass
   * through to the result, but finite inputs must still give a finite result.
   */
  passThrough?: boolean;
  /**
   * A reported bug in code this suite may not fix (another helper's file): inputs for which
   * `when` is true are not run but counted as `known` in the summary, with `issue` printed.
   */
  known?: { when: (args: readonly unknown[]) => boolean; issue: string };
  /** Runs for this entry. @default the suite's numRuns */
  numRuns?: number;
}

/** Per-family counters. */
export interface FamilyCounts {
  functions: number;
  generated: number;
  returned: number;
  rejected: number;
  rejectedBy: Record<string, number>;
  /** Inputs skipped because they hit a known, reported bug (see `Entry.known`). */
  known: number;
}

const counts = new Map<string, FamilyCounts>();
const entryNames = new Map<string, string[]>();
const knownIssues = new Set<string>();

function family(name: string): FamilyCounts {
  let c = counts.get(name);
  if (!c) {
    c = { functions: 0, generated: 0, returned: 0, rejected: 0, rejectedBy: {}, known: 0 };
    counts.set(name, c);
  }
  return c;
}

/** A call taking longer than this is reported as a hang (inputs are at most a few dozen rows). */
export const HANG_MS = 5000;

/** Finds the first NaN (or, unless allowed, ±Inf) anywhere in a result; returns its path. */
export function findNonFinite(
  value: unknown,
  allowInf: boolean,
  path = "result",
  depth = 0,
  seen = new Set<unknown>(),
): string | undefined {
  const bad = (v: number): boolean => Number.isNaN(v) || (!allowInf && !Number.isFinite(v));
  if (typeof value === "number") return bad(value) ? `${path} = ${value}` : undefined;
  if (value === null || typeof value !== "object" || depth > 5 || seen.has(value)) return undefined;
  seen.add(value);
  if (value instanceof Matrix) {
    const d = value.data;
    for (let i = 0; i < d.length; i++)
      if (bad(d[i])) return `${path}[${Math.floor(i / Math.max(1, value.cols))}, ${i % Math.max(1, value.cols)}] = ${d[i]}`;
    return undefined;
  }
  if (value instanceof Float64Array || value instanceof Float32Array) {
    for (let i = 0; i < value.length; i++) if (bad(value[i])) return `${path}[${i}] = ${value[i]}`;
    return undefined;
  }
  if (ArrayBuffer.isView(value)) return undefined;
  if (Array.isArray(value)) {
    for (let i = 0; i < value.length; i++) {
      const r = findNonFinite(value[i], allowInf, `${path}[${i}]`, depth + 1, seen);
      if (r) return r;
    }
    return undefined;
  }
  if (value instanceof Map) {
    for (const [k, v] of value) {
      const r = findNonFinite(v, allowInf, `${path}.get(${String(k)})`, depth + 1, seen);
      if (r) return r;
    }
    return undefined;
  }
  for (const [k, v] of Object.entries(value)) {
    if (typeof v === "function") continue;
    const r = findNonFinite(v, allowInf, `${path}.${k}`, depth + 1, seen);
    if (r) return r;
  }
  return undefined;
}

/** "ok" shape check helper: `m` is a Matrix of rows × cols. */
export function shapeIs(m: unknown, rows: number, cols: number, what = "result"): string | undefined {
  if (!(m instanceof Matrix)) return `${what}: expected a Matrix, got ${typeof m}`;
  if (m.rows !== rows || m.cols !== cols) return `${what}: expected ${rows}×${cols}, got ${m.shape}`;
  return undefined;
}

/** Length check helper for vectors. */
export function lengthIs(v: unknown, length: number, what = "result"): string | undefined {
  if (v === null || typeof v !== "object" || typeof (v as ArrayLike<number>).length !== "number") return `${what}: expected a vector`;
  if ((v as ArrayLike<number>).length !== length) return `${what}: expected length ${length}, got ${(v as ArrayLike<number>).length}`;
  return undefined;
}

function render(args: readonly unknown[]): string {
  return args
    .map((a) => {
      if (a instanceof Matrix)
        return `Matrix ${a.shape}${a.data.some((x) => !Number.isFinite(x)) ? " (non-finite)" : ""} max|·|=${a.data.reduce((m, x) => Math.max(m, Math.abs(x)), 0).toExponential(1)}`;
      if (typeof a === "function") return "fn";
      try {
        const s = JSON.stringify(a, (_k, v) =>
          v instanceof Matrix
            ? `Matrix ${v.shape}`
            : typeof v === "number" && !Number.isFinite(v)
              ? String(v)
              : ArrayBuffer.isView(v)
                ? `${v.constructor.name}(${(v as Float64Array).length})`
                : v,
        );
        return s === undefined ? String(a) : s.length > 300 ? `${s.slice(0, 300)}…` : s;
      } catch {
        return String(a);
      }
    })
    .join(", ");
}

/**
 * The invariant for one call. Returns a problem description, or undefined when the call behaved:
 * a finite, correctly shaped result, or a typed error naming its argument.
 */
export function checkCall(entry: Entry, args: readonly unknown[]): string | undefined {
  const c = family(entry.family);
  c.generated++;
  if (entry.known?.when(args)) {
    c.known++;
    knownIssues.add(`${entry.name}: ${entry.known.issue}`);
    return undefined;
  }
  const t0 = performance.now();
  let out: unknown;
  try {
    out = entry.call(...args);
  } catch (e) {
    const ms = performance.now() - t0;
    if (ms > HANG_MS) return `took ${ms.toFixed(0)} ms before throwing (hang)`;
    if (!(e instanceof RandAttnError)) {
      const err = e as Error;
      const where = (err?.stack ?? "").split("\n").slice(1, 4).join(" | ");
      return `crashed with ${err?.name ?? typeof e}: ${err?.message ?? String(e)} at ${where}\n  args: ${render(args)}`;
    }
    if (typeof e.argument !== "string" || e.argument.length === 0 || !e.message.includes(e.argument)) {
      return `${e.name} does not name its argument: argument=${JSON.stringify(e.argument)}, message=${JSON.stringify(e.message)}\n  args: ${render(args)}`;
    }
    if (!e.expected || !e.actual) return `${e.name} lacks expected/actual: ${e.message}\n  args: ${render(args)}`;
    c.rejected++;
    c.rejectedBy[e.name] = (c.rejectedBy[e.name] ?? 0) + 1;
    return undefined;
  }
  const ms = performance.now() - t0;
  if (ms > HANG_MS) return `took ${ms.toFixed(0)} ms (hang)\n  args: ${render(args)}`;
  const nf = findNonFinite(out, entry.allowInfiniteOutput ?? false);
  if (nf && !(entry.passThrough && findNonFinite(args, false, "args")))
    return `returned a non-finite value: ${nf}\n  args: ${render(args)}`;
  const shape = entry.check?.(out, args as unknown[]);
  if (shape) return `wrong result: ${shape}\n  args: ${render(args)}`;
  c.returned++;
  return undefined;
}

export interface SuiteOptions {
  /** Package name in the summary ("core" / "sketch"). */
  pkg: string;
  /** Default runs per entry. */
  numRuns: number;
  /** fast-check seed (fixed so a CI failure reproduces; override with RELIABILITY_SEED). */
  seed?: number;
}

/** Registers one vitest `it` per entry, grouped by family, and the end-of-suite summary. */
export function runSuite(entries: readonly Entry[], opts: SuiteOptions): void {
  const seed = process.env.RELIABILITY_SEED ? Number(process.env.RELIABILITY_SEED) : (opts.seed ?? 20260606);
  const families = [...new Set(entries.map((e) => e.family))];
  for (const f of families) {
    describe(f, () => {
      for (const entry of entries.filter((e) => e.family === f)) {
        family(f).functions++;
        const names = entryNames.get(f) ?? [];
        names.push(entry.name);
        entryNames.set(f, names);
        it(entry.name, () => {
          fc.assert(
            fc.property(entry.args, (args) => {
              const problem = checkCall(entry, args);
              if (problem) throw new Error(`${entry.name}: ${problem}`);
            }),
            { numRuns: entry.numRuns ?? opts.numRuns, seed, endOnFailure: false },
          );
        });
      }
    });
  }
  afterAll(() => writeSummary(opts.pkg));
}

/** Prints the per-family counts and writes them to $RELIABILITY_SUMMARY_DIR (default: the OS temp dir). */
export function writeSummary(pkg: string): void {
  const rows = [...counts.entries()].sort(([a], [b]) => a.localeCompare(b));
  const total = { functions: 0, generated: 0, returned: 0, rejected: 0, known: 0 };
  const lines = [`reliability summary (${pkg}): family | functions | inputs generated | returned | rejected (by error)`];
  for (const [name, c] of rows) {
    total.functions += c.functions;
    total.generated += c.generated;
    total.returned += c.returned;
    total.rejected += c.rejected;
    total.known += c.known;
    const by = Object.entries(c.rejectedBy)
      .map(([k, v]) => `${k} ${v}`)
      .join(", ");
    lines.push(
      `  ${name} | ${c.functions} | ${c.generated} | ${c.returned} | ${c.rejected} (${by})${c.known ? ` | known bug ${c.known}` : ""}`,
    );
  }
  lines.push(
    `  TOTAL | ${total.functions} | ${total.generated} | ${total.returned} | ${total.rejected} | families ${rows.length}${total.known ? ` | known bug ${total.known}` : ""}`,
  );
  for (const k of knownIssues) lines.push(`  known (reported, not fixed here): ${k}`);
  console.log(lines.join("\n"));
  const dir = process.env.RELIABILITY_SUMMARY_DIR ?? join(tmpdir(), "randattn-reliability");
  mkdirSync(dir, { recursive: true });
  const json = {
    package: pkg,
    total: { ...total, families: rows.length },
    knownIssues: [...knownIssues],
    families: Object.fromEntries(rows.map(([n, c]) => [n, { ...c, names: entryNames.get(n) }])),
  };
  writeFileSync(join(dir, `${pkg}.json`), `${JSON.stringify(json, null, 2)}\n`);
}
