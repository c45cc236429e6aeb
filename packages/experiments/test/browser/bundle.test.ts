/**
 * `@randattn/experiments/browser` bundles with esbuild for `--platform=browser` without any
 * `node:` module, and a sweep run from the bundle in a context with only browser globals gives
 * the same results.csv as the same code in Node (same V8: byte for byte). mathjs is loaded on
 * demand (`loadExpressionParser`) and is left out of the bundle here.
 */
import { webcrypto } from "node:crypto";
import { fileURLToPath } from "node:url";
import { runInNewContext } from "node:vm";
import { gzipSync } from "node:zlib";
import { build } from "esbuild";
import { describe, expect, it } from "vitest";
import { runTinySweep } from "./sweep.js";

const pkg = (p: string) => fileURLToPath(new URL(`../../../${p}`, import.meta.url));

async function bundle(contents: string, minify: boolean) {
  const result = await build({
    bundle: true,
    platform: "browser",
    format: "iife",
    target: "es2022",
    write: false,
    metafile: true,
    logLevel: "silent",
    minify,
    globalName: "randattnBundle",
    alias: {
      "@randattn/core/internal": pkg("core/src/internal.ts"),
      "@randattn/core": pkg("core/src/index.ts"),
      "@randattn/sketch": pkg("sketch/src/index.ts"),
      "@randattn/experiments/browser": pkg("experiments/src/browser.ts"),
    },
    external: ["gpt-tokenizer", "gpt-tokenizer/*", "mathjs", "mathjs/*"],
    stdin: { contents, resolveDir: fileURLToPath(new URL(".", import.meta.url)), loader: "ts", sourcefile: "entry.ts" },
  });
  const text = result.outputFiles[0].text;
  return { text, inputs: Object.keys(result.metafile.inputs), bytes: Buffer.byteLength(text), gzip: gzipSync(text).length };
}

describe("@randattn/experiments/browser", () => {
  it("bundles for the browser without node: modules and runs a sweep with only browser globals, equal to Node", async () => {
    const { text, inputs, bytes, gzip } = await bundle(`export { runTinySweep } from "./sweep.ts";`, true);
    expect(inputs.filter((f) => f.startsWith("node:"))).toEqual([]);
    console.log(
      `browser bundle @randattn/experiments/browser (sweep): ${(bytes / 1024).toFixed(0)} KiB minified, ${(gzip / 1024).toFixed(0)} KiB gzip`,
    );
    const sandbox: Record<string, unknown> = {
      console,
      atob,
      btoa,
      TextEncoder,
      TextDecoder,
      URL,
      performance,
      queueMicrotask,
      setTimeout,
      clearTimeout,
      structuredClone,
      crypto: webcrypto,
    };
    runInNewContext(`${text}\nglobalThis.csv = randattnBundle.runTinySweep();`, sandbox, { timeout: 60_000 });
    for (const name of ["process", "Buffer", "require", "global"]) expect(name in sandbox, name).toBe(false);
    const inNode = runTinySweep();
    expect(inNode.split("\n").length).toBe(1 + 2 * 5 + 1); // header, 2 trials × 5 cells, final newline
    expect(sandbox.csv).toBe(inNode);
  });
});
