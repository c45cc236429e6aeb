/**
 * The prebuilt esbuild bundles (platform/bundle.ts `currentBundle`; scripts/bundle.mjs): the CLI
 * (cli.ts, the `randattn` entry), the sweep worker (run/pool.ts `sweepWorkerUrl`) and the expression parser (config/expressions.ts
 * `loadParserSync`). Each is used only while every input it was built from is unchanged, so an
 * outdated bundle falls back to the modules instead of running stale code. That a sweep's results do
 * not depend on the worker's entry is byte-identical.test.ts (workers 0, 1 and 2 through the CLI,
 * which takes all three bundles after `pnpm run build`); that the parser bundle parses as mathjs does is below.
 */
import { mkdirSync, mkdtempSync, readFileSync, rmSync, statSync, utimesSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { afterAll, describe, expect, it } from "vitest";
import { loadParserSync } from "../../src/config/expressions.js";
import { currentBundle } from "../../src/platform/bundle.js";
// @ts-expect-error: a build script in plain JavaScript, no declarations
import { asciiSource } from "../../scripts/ascii-source.mjs";

const root = mkdtempSync(join(tmpdir(), "randattn-bundle-"));
afterAll(() => rmSync(root, { recursive: true, force: true }));

/** A run/ folder with a bundle, two inputs (one outside it) and the record bundle.mjs writes. */
function fixture(name: string): { dir: URL; run: string; inputs: string[] } {
  const run = join(root, name, "dist", "run");
  mkdirSync(run, { recursive: true });
  mkdirSync(join(root, name, "dep"), { recursive: true });
  const inputs = [join(run, "worker.js"), join(root, name, "dep", "index.js")];
  writeFileSync(inputs[0], "import '../../dep/index.js';\n");
  writeFileSync(inputs[1], "export const x = 1;\n");
  writeFileSync(join(run, "worker.bundle.js"), "const x = 1;\n");
  const record: Record<string, { bytes: number; mtimeMs: number }> = {};
  for (const [rel, abs] of [
    ["worker.js", inputs[0]],
    ["../../dep/index.js", inputs[1]],
  ]) {
    const s = statSync(abs);
    record[rel] = { bytes: s.size, mtimeMs: s.mtimeMs };
  }
  writeFileSync(join(run, "worker.bundle.json"), JSON.stringify({ bundle: "worker.bundle.js", inputs: record }));
  return { dir: pathToFileURL(`${run}/`), run, inputs };
}

describe("currentBundle", () => {
  it("names the bundle while every input is as recorded", () => {
    const f = fixture("fresh");
    expect(currentBundle(f.dir, "worker.bundle.json")?.href).toBe(pathToFileURL(join(f.run, "worker.bundle.js")).href);
  });

  it("falls back when an input was rewritten (a later tsc -b: new modification time, same size)", () => {
    const f = fixture("touched");
    const later = new Date(statSync(f.inputs[1]).mtimeMs + 5000);
    utimesSync(f.inputs[1], later, later);
    expect(currentBundle(f.dir, "worker.bundle.json")).toBeNull();
  });

  it("falls back when an input changed size, or is gone", () => {
    const f = fixture("edited");
    const { mtime } = statSync(f.inputs[0]);
    writeFileSync(f.inputs[0], "import '../../dep/index.js'; // edited\n");
    utimesSync(f.inputs[0], mtime, mtime); // same time, other size
    expect(currentBundle(f.dir, "worker.bundle.json")).toBeNull();
    const g = fixture("removed");
    rmSync(g.inputs[1]);
    expect(currentBundle(g.dir, "worker.bundle.json")).toBeNull();
  });

  it("falls back without a bundle, without a record, or with a record it cannot read", () => {
    const a = fixture("no-bundle");
    rmSync(join(a.run, "worker.bundle.js"));
    expect(currentBundle(a.dir, "worker.bundle.json")).toBeNull();
    const b = fixture("no-record");
    rmSync(join(b.run, "worker.bundle.json"));
    expect(currentBundle(b.dir, "worker.bundle.json")).toBeNull();
    const c = fixture("corrupt");
    writeFileSync(join(c.run, "worker.bundle.json"), readFileSync(join(c.run, "worker.bundle.json"), "utf8").slice(0, 20));
    expect(currentBundle(c.dir, "worker.bundle.json")).toBeNull();
    const d = fixture("empty");
    writeFileSync(join(d.run, "worker.bundle.json"), JSON.stringify({ bundle: "worker.bundle.js", inputs: {} }));
    expect(currentBundle(d.dir, "worker.bundle.json")).toBeNull();
  });
});

describe("the built worker bundle", () => {
  const dist = new URL("../../dist/run/", import.meta.url);
  it("is current after the build, lists the worker's own modules, and uses no import.meta", () => {
    const record = JSON.parse(readFileSync(new URL("worker.bundle.json", dist), "utf8")) as { inputs: Record<string, unknown> };
    const paths = Object.keys(record.inputs);
    expect(paths).toContain("worker.js");
    expect(paths).toContain("execute.js");
    expect(paths.some((p) => p.includes("core/dist/attention/"))).toBe(true);
    expect(currentBundle(dist, "worker.bundle.json")?.pathname.endsWith("/worker.bundle.js")).toBe(true);
    expect(readFileSync(new URL("worker.bundle.js", dist), "utf8")).not.toContain("import.meta");
  });
});

describe("the built CLI bundle", () => {
  const dist = new URL("../../dist/", import.meta.url);
  it("is current after the build, holds the program, and uses import.meta only in its banner", () => {
    const record = JSON.parse(readFileSync(new URL("cli.bundle.json", dist), "utf8")) as { inputs: Record<string, unknown> };
    const paths = Object.keys(record.inputs);
    expect(paths).toContain("cli/program.js");
    expect(paths).toContain("run/runner.js");
    expect(paths.some((p) => p.includes("/mathjs/"))).toBe(false); // loaded at run time (its own bundle)
    expect(currentBundle(dist, "cli.bundle.json")?.pathname.endsWith("/cli.bundle.js")).toBe(true);
    const text = readFileSync(new URL("cli.bundle.js", dist), "utf8");
    const banner = text.indexOf("const __randattnModuleUrl");
    expect(banner).toBeGreaterThan(0);
    expect(text.slice(text.indexOf("\n", banner)).includes("import.meta")).toBe(false);
    // Each module's import.meta.url became its own path, relative to the bundle.
    expect(text).toContain('__randattnModuleUrl("run/pool.js")');
    expect(text).toContain('__randattnModuleUrl("cli/program.js")');
  });

  it("finds the files its modules find: the shipped configs, the exit codes", async () => {
    const fromBundle = (await import(new URL("cli.bundle.js", dist).href)) as typeof import("../../src/cli/program.js");
    const fromModules = (await import(new URL("cli/program.js", dist).href)) as typeof import("../../src/cli/program.js");
    expect(fromBundle.SHIPPED_CONFIGS).toBe(fromModules.SHIPPED_CONFIGS);
    expect(statSync(join(fromBundle.SHIPPED_CONFIGS, "quickstart.yaml")).isFile()).toBe(true);
    expect(fromBundle.EXIT).toEqual(fromModules.EXIT);
    expect(fromBundle.buildProgram).not.toBe(fromModules.buildProgram); // two module instances
  });

  it("is chosen by an entry that loads nothing else first", () => {
    // dist/cli.js may import only node built-ins and platform/bundle.js, which imports only
    // platform/builtin.js, which imports nothing: everything else comes from the bundle (or, when it
    // is outdated, from cli/program.js).
    const imports = (file: string) =>
      [...readFileSync(new URL(file, dist), "utf8").matchAll(/^import\b.*?(?:from )?"([^"]+)";$/gm)].map((m) => m[1]).sort();
    expect(imports("cli.js")).toEqual(["./platform/bundle.js", "node:fs", "node:url"]);
    expect(imports("platform/bundle.js")).toEqual(["./builtin.js"]);
    expect(readFileSync(new URL("platform/builtin.js", dist), "utf8")).not.toMatch(/^import\b/m);
  });
});

describe("the built expression-parser bundle", () => {
  const dist = new URL("../../dist/config/", import.meta.url);
  const distModule = new URL("expressions.js", dist).href;

  it("is current after the build, holds mathjs's parser alone, and is what a built tree loads", () => {
    const record = JSON.parse(readFileSync(new URL("expression-parser.bundle.json", dist), "utf8")) as { inputs: Record<string, unknown> };
    const paths = Object.keys(record.inputs);
    expect(paths.some((p) => p.endsWith("mathjs/lib/esm/expression/parse.js"))).toBe(true);
    // Tree-shaken: no arithmetic beyond what the parser needs (the full mathjs/number has ≈ 670 inputs).
    expect(paths.some((p) => p.endsWith("mathjs/lib/esm/function/algebra/derivative.js"))).toBe(false);
    expect(paths.length).toBeLessThan(200);
    expect(currentBundle(dist, "expression-parser.bundle.json")?.pathname.endsWith("/expression-parser.bundle.cjs")).toBe(true);
    // Two module instances: the bundle's parse is not mathjs/number's.
    expect(loadParserSync(distModule)).not.toBe(loadParserSync(distModule, "modules"));
  });

  it("parses to the same trees, and rejects with the same messages, as mathjs/number", () => {
    const fromBundle = loadParserSync(distModule);
    const fromModules = loadParserSync(distModule, "modules");
    const outcome = (parse: (t: string) => unknown, text: string) => {
      try {
        return JSON.stringify(parse(text));
      } catch (e) {
        return `throws ${(e as Error).message}`;
      }
    };
    const texts = [
      "2^k",
      "-3 + 4 * 5 / 2 % 3",
      "s > 0 ? s^2 : 0",
      "1 + s + s^2/2",
      "exp(s) * tanh(s) / sqrt(2)",
      "max(1, min(2, abs(-3)))",
      "pi * e",
      "1e3 - 2.5e-2",
      "a <= b != (c >= d)",
      // Constructs the allowlist rejects (config/expressions.ts) must reach it as the same nodes.
      "cos.constructor",
      "[1, 2]",
      "x = 3",
      "f(x) = x^2",
      '"text"',
      "2 cm",
      "1:3",
      // Syntax errors.
      "2 +",
      "(1",
      "1 ? 2",
    ];
    const seen = new Set<string>();
    for (const text of texts) {
      const want = outcome(fromModules, text);
      seen.add(want.startsWith("throws") ? "error" : "tree");
      expect(outcome(fromBundle, text), text).toBe(want);
    }
    expect(seen).toEqual(new Set(["error", "tree"]));
  });
});

describe("ASCII bundles (scripts/ascii-source.mjs: V8 holds a source with one non-ASCII character as two bytes per character)", () => {
  const isAscii = (t: string) => [...t].every((c) => c.charCodeAt(0) < 0x80);

  it("escapes every non-ASCII character, and the code means what it meant: comments, regular expressions with and without the u flag, astral characters", () => {
    // The regular expressions meet text from outside the escaped source (the argument), as the
    // CLI's LaTeX and label rewriting meet a sweep's labels.
    const code = [
      "/** κ(q, k) = exp(⟨q, k⟩) — a comment */",
      'const a = s.replace(/±/g, "pm").replace(/ ‖.*$/, "").replace(/[−–]/g, "-");',
      "const b = [/😀+/u.test(s), /^😀$/u.test(s.slice(-2)), /^.$/.test(s.slice(-2)), /^.$/u.test(s.slice(-2))];",
      'const c = s.replace(/Ŷ/g, "Y").replace(/₂/g, "2").replace(/∞/g, "inf");',
      "return [a, b, c, /[à-ÿ]/.test(s), /é/.test(s)];",
    ].join("\n");
    const input = "x – 1 ± é Ŷ₂∞ ‖ tail 😀";
    const escaped: string = asciiSource(code);
    expect(isAscii(escaped)).toBe(true);
    expect(escaped).not.toBe(code);
    const run = (src: string) => new Function("s", src)(input) as unknown[];
    const expected = ["x - 1 pm é Ŷ₂∞", [true, true, false, true], "x – 1 ± é Y2inf ‖ tail 😀", true, true];
    expect(run(code)).toEqual(expected); // the code itself, as written
    expect(run(escaped)).toEqual(expected);
    const plain = "const x = 1; // ASCII\n";
    expect(asciiSource(plain)).toBe(plain);
  });

  it("the built bundles are ASCII", () => {
    for (const file of ["cli.bundle.js", "run/worker.bundle.js", "config/expression-parser.bundle.cjs"]) {
      expect(isAscii(readFileSync(new URL(`../../dist/${file}`, import.meta.url), "utf8")), file).toBe(true);
    }
  });
});
