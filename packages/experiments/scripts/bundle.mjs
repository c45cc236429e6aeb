// Bundles, with esbuild, the three pieces of a sweep whose loading time the user waits for (issue 14),
// each into one file that Node loads far faster than the many modules it replaces. Run by the root
// `pnpm run build` after tsc.
//
// - The CLI program: dist/cli/program.js and everything it imports → dist/cli.bundle.js, which the
//   `randattn` entry (dist/cli.js) loads in ≈ 100 ms instead of ≈ 350 ms for ≈ 420 modules: serial
//   time of every command, and on a sweep the main thread's start before any worker exists. Its
//   modules find files next to themselves through import.meta.url (the shipped configs, the worker
//   and parser bundles, package.json files): in the bundle each such use names its own module's
//   path, relative to the bundle (moduleUrl below), so the bundle reads the same files the modules do.
//   mathjs stays outside (the program loads its parser bundle, or mathjs itself, at run time).
// - The sweep worker: dist/run/worker.js and everything it imports (core, sketch, ml-matrix,
//   seedrandom, …) → dist/run/worker.bundle.js. Each worker thread then loads one 1.2 MB module in
//   ≈ 65 ms instead of resolving, reading and compiling ≈ 240 modules in ≈ 260 ms — a sweep on two
//   workers pays that once per worker while both cores are busy.
// - The config expression parser: mathjs's `parse` alone, `create({ parseDependencies })` (mathjs's
//   documented custom build, tree-shaken: ≈ 0.33 MB) → dist/config/expression-parser.bundle.cjs
//   (CommonJS: config/expressions.ts loads it synchronously). ≈ 35 ms instead of the ≈ 400 ms of
//   require("mathjs/number") — serial time on the main thread of every sweep with a sweep expression
//   (`2^k for k in 4..8`), before any worker starts.
//
// Beside each bundle, NAME.json lists every input file with its size and modification time; the
// runtime (platform/bundle.ts, `currentBundle`) uses a bundle only while all of them are unchanged,
// so a later `tsc -b` alone, an edited or upgraded dependency or a copied tree falls back to the
// modules — never stale code. The worker and parser bundles must not use import.meta (a module's
// own URL would then name the bundle's folder), the CLI's only through moduleUrl: this script fails
// when one does.
import { readFileSync, statSync, writeFileSync } from "node:fs";
import { dirname, join, relative, resolve, sep } from "node:path";
import { fileURLToPath } from "node:url";
import { build } from "esbuild";
import { asciiSource } from "./ascii-source.mjs";

const pkg = resolve(dirname(fileURLToPath(import.meta.url)), "..");
const cwd = process.cwd();

/**
 * Bundles `options` (an esbuild entry point or stdin) into `outfile` and writes `outfile`.json
 * beside it: { bundle: its file name, inputs: { path relative to its folder: { bytes, mtimeMs } } }.
 */
async function bundle(what, outfile, options, banner = "") {
  const dir = dirname(outfile);
  const result = await build({
    ...options,
    ...(banner ? { banner: { js: banner } } : {}),
    outfile,
    bundle: true,
    platform: "node",
    target: "node20",
    metafile: true,
    logLevel: "warning",
    legalComments: "none",
  });
  // ASCII only, so V8 keeps the source one byte per character (ascii-source.mjs).
  const text = readFileSync(outfile, "utf8");
  const ascii = asciiSource(text);
  if (ascii !== text) writeFileSync(outfile, ascii);
  if (ascii.slice(banner.length).includes("import.meta")) {
    throw new Error(
      `${outfile}: uses import.meta (a bundled module would resolve paths against the bundle's folder); do not bundle ${what}`,
    );
  }
  // The inputs of the output (those it took code or a re-export from), not every module esbuild
  // looked at: tree-shaking leaves the parser 89 of mathjs's 670 (a stat each at every check).
  const [output] = Object.values(result.metafile.outputs);
  const inputs = {};
  for (const path of Object.keys(output.inputs).sort()) {
    if (path === "<stdin>") continue; // the entry given as text, not a file
    const abs = resolve(cwd, path);
    const s = statSync(abs);
    inputs[relative(dir, abs)] = { bytes: s.size, mtimeMs: s.mtimeMs };
  }
  const name = outfile.slice(dir.length + 1);
  writeFileSync(`${outfile.replace(/\.c?js$/, "")}.json`, `${JSON.stringify({ bundle: name, inputs }, null, 1)}\n`);
  console.log(
    `bundled ${what}: ${Object.keys(inputs).length} modules → ${relative(cwd, outfile)} (${(statSync(outfile).size / 1e6).toFixed(2)} MB)`,
  );
}

// The banner of the CLI bundle: a `require` for the CommonJS packages it holds (commander, ajv, yaml
// … call require("node:fs") and friends, which an ES module lacks), and moduleUrl(path): the URL of
// the module at `path` relative to the bundle — what that module's import.meta.url was.
const cliBanner = [
  'import { createRequire as __randattnCreateRequire } from "node:module";',
  "const require = __randattnCreateRequire(import.meta.url);",
  "const __randattnModuleUrl = (path) => new URL(path, import.meta.url).href;",
  "",
].join("\n");

/** An esbuild plugin: import.meta.url in a module at P becomes __randattnModuleUrl(P relative to `dir`). */
const moduleUrl = (dir) => ({
  name: "module-url",
  setup(b) {
    b.onLoad({ filter: /\.[cm]?js$/ }, (args) => {
      const text = readFileSync(args.path, "utf8");
      if (!text.includes("import.meta.url")) return undefined;
      const path = relative(dir, args.path).split(sep).join("/");
      return { contents: text.replaceAll("import.meta.url", `__randattnModuleUrl(${JSON.stringify(path)})`), loader: "js" };
    });
  },
});

await bundle(
  "the CLI",
  join(pkg, "dist/cli.bundle.js"),
  {
    entryPoints: [join(pkg, "dist/cli/program.js")],
    format: "esm",
    external: ["mathjs", "mathjs/*"],
    plugins: [moduleUrl(join(pkg, "dist"))],
  },
  cliBanner,
);
await bundle("the sweep worker", join(pkg, "dist/run/worker.bundle.js"), {
  entryPoints: [join(pkg, "dist/run/worker.js")],
  format: "esm",
});
await bundle("the expression parser", join(pkg, "dist/config/expression-parser.bundle.cjs"), {
  stdin: {
    contents: 'import { create, parseDependencies } from "mathjs/number";\nexport const parse = create({ parseDependencies }).parse;\n',
    resolveDir: join(pkg, "dist/config"),
    loader: "js",
  },
  format: "cjs",
  mainFields: ["module", "main"],
});
