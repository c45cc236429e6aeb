// Bundles the sweep worker's entry (dist/run/worker.js and everything it imports: core, sketch,
// ml-matrix, seedrandom, …) into one file, dist/run/worker.bundle.js, with esbuild. Run by the root
// `pnpm run build` after tsc (issue 14): each worker thread then loads one 1.2 MB module in ≈ 65 ms
// instead of resolving, reading and compiling ≈ 240 modules in ≈ 260 ms — a sweep on two workers
// pays that once per worker while both cores are busy.
//
// Beside it, worker.bundle.json lists every input file with its size and modification time; the
// pool (run/pool.ts, `sweepWorkerUrl`) uses the bundle only while all of them are unchanged, so a
// later `tsc -b` alone, an edited dependency or a copied tree falls back to dist/run/worker.js —
// never stale code. The bundle must not use import.meta (a module's own URL would then name the
// bundle's folder): this script fails when it does.
import { readFileSync, statSync, writeFileSync } from "node:fs";
import { dirname, join, relative, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { build } from "esbuild";

const runDir = resolve(dirname(fileURLToPath(import.meta.url)), "../dist/run");
const entry = join(runDir, "worker.js");
const outfile = join(runDir, "worker.bundle.js");
const result = await build({
  entryPoints: [entry],
  outfile,
  bundle: true,
  platform: "node",
  format: "esm",
  target: "node20",
  metafile: true,
  logLevel: "warning",
  legalComments: "none",
});
const code = readFileSync(outfile, "utf8");
if (code.includes("import.meta")) {
  throw new Error(
    `${outfile}: uses import.meta (a bundled module would resolve paths against the bundle's folder); keep the worker on dist/run/worker.js`,
  );
}
const cwd = process.cwd();
const inputs = {};
for (const path of Object.keys(result.metafile.inputs).sort()) {
  const abs = resolve(cwd, path);
  const s = statSync(abs);
  inputs[relative(runDir, abs)] = { bytes: s.size, mtimeMs: s.mtimeMs };
}
writeFileSync(join(runDir, "worker.bundle.json"), `${JSON.stringify({ bundle: "worker.bundle.js", inputs }, null, 1)}\n`);
console.log(
  `bundled the sweep worker: ${Object.keys(inputs).length} modules → ${relative(cwd, outfile)} (${(statSync(outfile).size / 1e6).toFixed(2)} MB)`,
);
