/**
 * Issue 9, "runs in a browser": @randattn/core and @randattn/sketch bundle with esbuild for
 * `--platform=browser` without any `node:` module, and the bundle RUNS in a context that has only
 * browser globals (no `process`, `Buffer`, `require`, `global`) — a bundle can build and still
 * reach for a Node global at run time, which only running it shows. The results equal the same
 * code run in Node (same V8, so bit for bit). Sizes (minified, gzip) are printed.
 */
import { gzipSync } from "node:zlib";
import { fileURLToPath } from "node:url";
import { webcrypto } from "node:crypto";
import { runInNewContext } from "node:vm";
import { type BuildOptions, build } from "esbuild";
import { describe, expect, it } from "vitest";
import { run } from "./entry.js";

const pkg = (p: string) => fileURLToPath(new URL(`../../../${p}`, import.meta.url));

const common: BuildOptions = {
  bundle: true,
  platform: "browser",
  format: "iife",
  target: "es2022",
  write: false,
  metafile: true,
  logLevel: "silent",
  alias: {
    "@randattn/core/internal": pkg("core/src/internal.ts"),
    "@randattn/core": pkg("core/src/index.ts"),
    "@randattn/sketch": pkg("sketch/src/index.ts"),
  },
  // BPE encodings are loaded on demand from the optional peer `gpt-tokenizer`; an app that wants
  // them bundles that package itself.
  external: ["gpt-tokenizer", "gpt-tokenizer/*"],
};

async function bundle(contents: string, minify: boolean) {
  const result = await build({
    ...common,
    minify,
    globalName: "randattnBundle",
    stdin: { contents, resolveDir: fileURLToPath(new URL(".", import.meta.url)), loader: "ts", sourcefile: "browser-entry.ts" },
  });
  const text = result.outputFiles[0].text;
  const nodeInputs = Object.keys(result.metafile.inputs).filter(
    (f) => f.startsWith("node:") || /(^|\/)node_modules\/@types\/node\//.test(f),
  );
  return { text, nodeInputs, bytes: Buffer.byteLength(text), gzip: gzipSync(text).length };
}

/** Only what a browser page or Web Worker has (and the JS built-ins every context has). */
function browserGlobals(): Record<string, unknown> {
  return {
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
}

const kib = (n: number) => `${(n / 1024).toFixed(0)} KiB`;

describe("browser bundles", () => {
  it("esbuild --platform=browser reports no node: import, and any node: import fails the build", async () => {
    await expect(bundle(`import { readFileSync } from "node:fs"; console.log(readFileSync);`, false)).rejects.toThrow(/node:fs/);
    for (const [name, contents] of [
      ["@randattn/core", `export * as core from "@randattn/core";`],
      ["@randattn/sketch", `export * as sketch from "@randattn/sketch";`],
      ["attention alone", `export { attention } from "@randattn/core";`],
    ] as const) {
      const plain = await bundle(contents, false);
      expect(plain.nodeInputs, name).toEqual([]);
      expect(plain.text, name).not.toMatch(/\brequire\(\s*["'](node:)?(fs|zlib|os|url|worker_threads|path|crypto)["']/);
      const min = await bundle(contents, true);
      console.log(`browser bundle ${name}: ${kib(min.bytes)} minified, ${kib(min.gzip)} gzip`);
    }
  });

  it("the bundle runs with only browser globals and equals the same code run in Node", async () => {
    const { text, nodeInputs } = await bundle(`export { run } from "./entry.ts";`, true);
    expect(nodeInputs).toEqual([]);
    const sandbox = browserGlobals();
    runInNewContext(`${text}\nglobalThis.result = randattnBundle.run();`, sandbox, { timeout: 30_000 });
    for (const name of ["process", "Buffer", "require", "global"]) expect(name in sandbox, name).toBe(false);
    const inBrowser = sandbox.result as Record<string, unknown>;
    expect(inBrowser.simd).toBe(true); // the WebAssembly kernels ran, not only the scalar fallback
    const inNode = run();
    expect(JSON.parse(JSON.stringify(inBrowser))).toEqual(JSON.parse(JSON.stringify(inNode)));
    expect(inNode.wasm).not.toEqual(inNode.scalar); // the two backends really differ (last bits)
  });
});
