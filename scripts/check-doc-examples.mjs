#!/usr/bin/env node
/**
 * Type-checks (strict) and runs every `@example` block of the packages' TSDoc against the BUILT
 * packages (`pnpm run build` first), as a user's file importing `@randattn/*` would, and fails when
 * a main entry point has no example. Examples are written to packages/experiments/.tmp/doc-examples
 * (inside a package, so the workspace links resolve every `@randattn/*` entry) and removed after.
 */
import { spawnSync } from "node:child_process";
import { mkdirSync, readFileSync, readdirSync, rmSync, statSync, writeFileSync } from "node:fs";
import { join, relative } from "node:path";
import { fileURLToPath } from "node:url";

const root = fileURLToPath(new URL("..", import.meta.url));
/** Entry points that must carry an @example (name → the package that exports it). */
const REQUIRED = [
  "attention",
  "streamingAttention",
  "multiHeadAttention",
  "randomMatrix",
  "parseNpy",
  "kvCacheFloatsPerToken",
  "readNpyFile",
  "parallelMultiHeadAttention",
  "randomFeatureAttention",
  "sampledAttention",
  "randomizedSvd",
  "rangeFinder",
  "createSketch",
  "compressLatent",
  "loadConfigObject",
  "runPlan",
  "browser.ts (module)",
];
const t0 = performance.now();
const files = [];
const walk = (dir) => {
  for (const f of readdirSync(dir)) {
    const p = join(dir, f);
    if (statSync(p).isDirectory()) walk(p);
    else if (p.endsWith(".ts")) files.push(p);
  }
};
for (const p of ["core", "sketch", "experiments"]) walk(join(root, "packages", p, "src"));

const examples = [];
for (const file of files) {
  const text = readFileSync(file, "utf8");
  for (const m of text.matchAll(/\/\*\*((?:(?!\*\/)[\s\S])*?)\*\/\s*(?:export\s+(?:async\s+)?(?:function|class|const)\s+(\w+))?/g)) {
    const doc = m[1];
    for (const ex of doc.matchAll(/@example\s*\n\s*\*\s*```ts\n([\s\S]*?)\n\s*\*\s*```/g)) {
      const code = ex[1]
        .split("\n")
        .map((l) => l.replace(/^\s*\* ?/, ""))
        .join("\n");
      const name = m[2] ?? `${file.split("/").pop()} (module)`;
      examples.push({ name, file: relative(root, file), code });
    }
  }
}
const missing = REQUIRED.filter((n) => !examples.some((e) => e.name === n));
const dir = join(root, "packages/experiments/.tmp/doc-examples");
rmSync(dir, { recursive: true, force: true });
mkdirSync(dir, { recursive: true });
examples.forEach((e, i) => {
  e.stem = `ex${String(i).padStart(2, "0")}-${e.name.replace(/\W+/g, "-")}`;
  writeFileSync(join(dir, `${e.stem}.ts`), `// ${e.file}: @example of ${e.name}\n${e.code}\nexport {};\n`);
});
writeFileSync(
  join(dir, "tsconfig.json"),
  JSON.stringify({
    compilerOptions: {
      target: "ES2022",
      module: "NodeNext",
      moduleResolution: "NodeNext",
      strict: true,
      skipLibCheck: true,
      types: ["node"],
      outDir: "out",
      rootDir: ".",
    },
    include: ["*.ts"],
  }),
);
let failed = missing.length > 0;
if (missing.length) console.error(`check-doc-examples: FAIL — no @example on: ${missing.join(", ")}`);
const tsc = spawnSync(process.execPath, [join(root, "node_modules/typescript/bin/tsc"), "-p", dir], { encoding: "utf8" });
if (tsc.status !== 0) {
  console.error(`check-doc-examples: FAIL — the examples do not type-check:\n${tsc.stdout}${tsc.stderr}`);
  failed = true;
} else {
  for (const e of examples) {
    const r = spawnSync(process.execPath, [join(dir, "out", `${e.stem}.js`)], { encoding: "utf8", timeout: 60_000, cwd: dir });
    if (r.status !== 0) {
      console.error(`check-doc-examples: FAIL — ${e.name} (${e.file}) exited ${r.status}:\n${r.stderr}`);
      failed = true;
    } else {
      console.log(`  ${e.name}: ${r.stdout.trim().replace(/\n/g, " | ")}`);
      const wrong = commentMismatches(e.code, r.stdout);
      if (wrong.length > 0) {
        console.error(`check-doc-examples: FAIL — ${e.name} (${e.file}) prints what its comments do not say:\n${wrong.join("\n")}`);
        failed = true;
      }
    }
  }
}
rmSync(join(root, "packages/experiments/.tmp"), { recursive: true, force: true });

/**
 * The values a `console.log(…); // 4 "3×4" true — why` line promises (leading numbers, quoted
 * strings, true/false; the words after them are commentary), checked against the line the
 * example printed. Examples print one line per console.log, in order.
 */
function commentMismatches(code, stdout) {
  const logs = code.split("\n").filter((l) => /^\s*console\.log\(/.test(l));
  const lines = stdout.trimEnd().split("\n");
  if (logs.length !== lines.length) return [`${logs.length} console.log calls but ${lines.length} printed lines`];
  const wrong = [];
  logs.forEach((log, i) => {
    const comment = log.match(/\);\s*\/\/\s*(.*)$/)?.[1];
    if (!comment) return;
    const expected = [];
    for (const m of comment.matchAll(/"([^"]*)"|(\S+)/g)) {
      const token = m[1] ?? m[2].replace(/[:,;]$/, "");
      if (m[1] === undefined && !/^(-?\d+(\.\d+)?(e-?\d+)?|true|false)$/.test(token)) break;
      expected.push(token);
    }
    const printed = lines[i].split(/\s+/).slice(0, expected.length);
    if (expected.length > 0 && printed.join(" ") !== expected.join(" "))
      wrong.push(`  printed "${lines[i]}", comment says "${expected.join(" ")}"`);
  });
  return wrong;
}
console.log(
  `check-doc-examples: ${examples.length} examples (${REQUIRED.length} required entry points) ${failed ? "FAILED" : "type-check and run"} in ${((performance.now() - t0) / 1000).toFixed(1)} s`,
);
process.exitCode = failed ? 1 : 0;
