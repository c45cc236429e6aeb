#!/usr/bin/env node
/**
 * Issue 9 packaging check, as a new user would meet the packages: `pnpm pack` core, sketch and
 * experiments; check each tarball's files (LICENSE, CHANGELOG, dist, no tests) and package.json
 * fields; install the three tarballs with npm in a fresh project under a path containing a space;
 * compile a strict TypeScript program against them (every entry point: `@randattn/core`,
 * `@randattn/core/node`, `@randattn/sketch`, `@randattn/experiments`,
 * `@randattn/experiments/browser`); run it; and run the installed `randattn --help` (and
 * `--version` when the CLI has it). Needs the packages built (`pnpm run build`). Exits 1 on failure.
 */
import { execFileSync, spawnSync } from "node:child_process";
import { mkdirSync, mkdtempSync, readFileSync, readdirSync, rmSync, statSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";

const root = fileURLToPath(new URL("..", import.meta.url));
const PACKAGES = ["core", "sketch", "experiments"];
const REQUIRED_FIELDS = [
  "name",
  "version",
  "description",
  "license",
  "repository",
  "homepage",
  "bugs",
  "engines",
  "files",
  "sideEffects",
  "exports",
];
const t0 = performance.now();
const ms = (t) => `${((performance.now() - t) / 1000).toFixed(1)} s`;
const failures = [];
const fail = (m) => {
  failures.push(m);
  console.error(`check-packaging: FAIL — ${m}`);
};
const base = mkdtempSync(join(tmpdir(), "randattn pack "));
const app = join(base, "my app");
const packs = join(base, "tarballs");
mkdirSync(app, { recursive: true });
mkdirSync(packs);
const run = (cmd, args, cwd, extra = {}) => execFileSync(cmd, args, { cwd, encoding: "utf8", stdio: ["ignore", "pipe", "pipe"], ...extra });

try {
  // 1. Pack (pnpm rewrites workspace:* to the versions) and inspect.
  let t = performance.now();
  const license = readFileSync(join(root, "LICENSE"), "utf8");
  const tarballs = [];
  for (const p of PACKAGES) {
    const dir = join(root, "packages", p);
    run("npx", ["-y", "pnpm@12.4.2", "pack", "--pack-destination", packs], dir);
    const pkg = JSON.parse(readFileSync(join(dir, "package.json"), "utf8"));
    const file = readdirSync(packs).find((f) => f.startsWith(`randattn-${p}-`) && !tarballs.includes(join(packs, f)));
    if (!file) throw new Error(`no tarball for ${p}`);
    const tarball = join(packs, file);
    tarballs.push(tarball);
    const list = run("tar", ["-tzf", tarball], packs).split("\n").filter(Boolean);
    const packed = JSON.parse(run("tar", ["-xzOf", tarball, "package/package.json"], packs));
    for (const f of REQUIRED_FIELDS) if (packed[f] === undefined) fail(`${pkg.name}: package.json has no "${f}"`);
    if (JSON.stringify(packed).includes("workspace:")) fail(`${pkg.name}: packed package.json still says workspace:`);
    for (const f of ["package/LICENSE", "package/CHANGELOG.md", "package/README.md", "package/dist/index.js", "package/dist/index.d.ts"]) {
      if (!list.includes(f)) fail(`${pkg.name}: tarball lacks ${f.slice(8)}`);
    }
    if (list.some((f) => /^package\/(test|bench)\//.test(f) || f.endsWith(".tsbuildinfo")))
      fail(`${pkg.name}: tarball holds tests, benches or build info`);
    if (readFileSync(join(dir, "LICENSE"), "utf8") !== license) fail(`${pkg.name}: LICENSE differs from the repository's`);
    console.log(`check-packaging: ${file} ${(statSync(tarball).size / 1024).toFixed(0)} KiB, ${list.length} files`);
  }
  console.log(`check-packaging: packed in ${ms(t)}`);

  // 2. A fresh project under a path with spaces.
  t = performance.now();
  writeFileSync(join(app, "package.json"), JSON.stringify({ name: "my-app", private: true, type: "module" }, null, 2));
  run("npm", ["install", "--no-audit", "--no-fund", "--loglevel=error", ...tarballs, "typescript@~5.9.3", "@types/node@^20.19.0"], app);
  console.log(`check-packaging: npm install in "${app}" in ${ms(t)}`);
  const installed = readdirSync(join(app, "node_modules"));
  if (installed.includes("gpt-tokenizer")) fail("gpt-tokenizer was installed although it is an optional peer dependency");
  if (installed.includes("wabt")) fail("wabt was installed although only core's tests use it");

  // 3. Strict TypeScript against the installed packages, then run it.
  writeFileSync(
    join(app, "tsconfig.json"),
    JSON.stringify(
      {
        compilerOptions: {
          target: "ES2022",
          module: "NodeNext",
          moduleResolution: "NodeNext",
          strict: true,
          noUncheckedIndexedAccess: true,
          exactOptionalPropertyTypes: true,
          skipLibCheck: false,
          types: ["node"],
          outDir: "out",
        },
        include: ["main.ts"],
      },
      null,
      2,
    ),
  );
  writeFileSync(
    join(app, "main.ts"),
    `import { attention, loadBpeTokenizer, randomMatrix, ValueError, type Matrix } from "@randattn/core";
import { encodeNpz, parseNpz } from "@randattn/core/node";
import { randomFeatureAttention, randomizedSvd } from "@randattn/sketch";
import { listMethods } from "@randattn/experiments";
import { executeTask, expandPlan, loadConfigObject, planTasks, taskSpec } from "@randattn/experiments/browser";

const q: Matrix = randomMatrix(32, 8, {}, [1, "q"]);
const k = randomMatrix(32, 8, {}, [1, "k"]);
const v = randomMatrix(32, 4, {}, [1, "v"]);
const y = attention(q, k, v);
const rf = randomFeatureAttention(q, k, v, { numFrequencies: 64 }, [2]);
let err = 0;
for (let i = 0; i < y.data.length; i++) err = Math.max(err, Math.abs((y.data[i] ?? 0) - (rf.output.data[i] ?? 0)));
const svd = randomizedSvd(randomMatrix(20, 10, {}, [3]), { rank: 3 }, [4]);
const back = parseNpz(encodeNpz({ y })).get("y");
const plan = expandPlan(loadConfigObject({ experiment: "t", seed: 1, trials: 1, problem: { generator: "gaussian", params: { n: 16, d: 4 } }, methods: [{ method: "exact" }] }, "/"));
const first = planTasks(plan)[0];
if (!first) throw new Error("no task");
const outcome = executeTask(taskSpec(plan, first));
let bpe = "loaded";
try {
  await loadBpeTokenizer();
} catch (e) {
  bpe = e instanceof ValueError ? \`ValueError(\${e.argument})\` : String(e);
}
console.log(JSON.stringify({ shape: y.shape, rfMaxAbs: err, s: svd.S.length, npz: back?.shape, methods: listMethods().length, task: outcome.status, bpe }));
`,
  );
  t = performance.now();
  const tsc = spawnSync(process.execPath, [join(app, "node_modules/typescript/bin/tsc"), "-p", app], { cwd: app, encoding: "utf8" });
  if (tsc.status !== 0) fail(`strict tsc failed:\n${tsc.stdout}${tsc.stderr}`);
  else console.log(`check-packaging: strict tsc (noUncheckedIndexedAccess, exactOptionalPropertyTypes, skipLibCheck false) in ${ms(t)}`);
  if (tsc.status === 0) {
    const out = JSON.parse(run(process.execPath, [join(app, "out/main.js")], app));
    console.log(`check-packaging: program output ${JSON.stringify(out)}`);
    if (out.task !== "ok" || out.s !== 3 || out.npz?.join("x") !== "32x4" || !(out.rfMaxAbs > 0 && out.rfMaxAbs < 1))
      fail("the program's results are wrong");
    if (out.bpe !== "ValueError(gpt-tokenizer)")
      fail(`loadBpeTokenizer without gpt-tokenizer gave ${out.bpe}, not a ValueError naming gpt-tokenizer`);
  }

  // 4. The installed CLI, from the path with spaces.
  const bin = join(app, "node_modules/.bin/randattn");
  const help = spawnSync(bin, ["--help"], { cwd: app, encoding: "utf8" });
  if (help.status !== 0 || !/Usage: randattn/.test(help.stdout))
    fail(`randattn --help: exit ${help.status}, output ${JSON.stringify(help.stdout.slice(0, 200))} ${help.stderr}`);
  else console.log(`check-packaging: randattn --help prints ${help.stdout.split("\n").length} lines`);
  if (/--version/.test(help.stdout)) {
    const version = spawnSync(bin, ["--version"], { cwd: app, encoding: "utf8" });
    const want = JSON.parse(readFileSync(join(root, "packages/experiments/package.json"), "utf8")).version;
    if (version.stdout.trim() !== want) fail(`randattn --version printed ${JSON.stringify(version.stdout)}, expected ${want}`);
    else console.log(`check-packaging: randattn --version = ${want}`);
  }
} catch (e) {
  fail(e instanceof Error ? `${e.message}${e.stderr ? `\n${e.stderr}` : ""}` : String(e));
} finally {
  rmSync(base, { recursive: true, force: true });
}
console.log(`check-packaging: ${failures.length ? `FAILED (${failures.length})` : "ok"} in ${ms(t0)}`);
process.exitCode = failures.length ? 1 : 0;
