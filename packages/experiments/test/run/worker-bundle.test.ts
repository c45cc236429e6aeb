/**
 * The sweep worker's esbuild bundle (run/pool.ts `sweepWorkerUrl`, `currentBundle`;
 * scripts/bundle-worker.mjs): used only while every input it was built from is unchanged, so an
 * outdated bundle falls back to the modules instead of running stale code. That a sweep's results do
 * not depend on the entry is byte-identical.test.ts (workers 0, 1 and 2 through the CLI, which takes
 * the bundle after `pnpm run build`).
 */
import { mkdirSync, mkdtempSync, readFileSync, rmSync, statSync, utimesSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { afterAll, describe, expect, it } from "vitest";
import { currentBundle } from "../../src/run/pool.js";

const root = mkdtempSync(join(tmpdir(), "randattn-bundle-"));
afterAll(() => rmSync(root, { recursive: true, force: true }));

/** A run/ folder with a bundle, two inputs (one outside it) and the record bundle-worker.mjs writes. */
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
    expect(currentBundle(f.dir)?.href).toBe(pathToFileURL(join(f.run, "worker.bundle.js")).href);
  });

  it("falls back when an input was rewritten (a later tsc -b: new modification time, same size)", () => {
    const f = fixture("touched");
    const later = new Date(statSync(f.inputs[1]).mtimeMs + 5000);
    utimesSync(f.inputs[1], later, later);
    expect(currentBundle(f.dir)).toBeNull();
  });

  it("falls back when an input changed size, or is gone", () => {
    const f = fixture("edited");
    const { mtime } = statSync(f.inputs[0]);
    writeFileSync(f.inputs[0], "import '../../dep/index.js'; // edited\n");
    utimesSync(f.inputs[0], mtime, mtime); // same time, other size
    expect(currentBundle(f.dir)).toBeNull();
    const g = fixture("removed");
    rmSync(g.inputs[1]);
    expect(currentBundle(g.dir)).toBeNull();
  });

  it("falls back without a bundle, without a record, or with a record it cannot read", () => {
    const a = fixture("no-bundle");
    rmSync(join(a.run, "worker.bundle.js"));
    expect(currentBundle(a.dir)).toBeNull();
    const b = fixture("no-record");
    rmSync(join(b.run, "worker.bundle.json"));
    expect(currentBundle(b.dir)).toBeNull();
    const c = fixture("corrupt");
    writeFileSync(join(c.run, "worker.bundle.json"), readFileSync(join(c.run, "worker.bundle.json"), "utf8").slice(0, 20));
    expect(currentBundle(c.dir)).toBeNull();
    const d = fixture("empty");
    writeFileSync(join(d.run, "worker.bundle.json"), JSON.stringify({ bundle: "worker.bundle.js", inputs: {} }));
    expect(currentBundle(d.dir)).toBeNull();
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
    expect(currentBundle(dist)?.pathname.endsWith("/worker.bundle.js")).toBe(true);
    expect(readFileSync(new URL("worker.bundle.js", dist), "utf8")).not.toContain("import.meta");
  });
});
