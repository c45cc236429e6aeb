#!/usr/bin/env node
/**
 * The `randattn` executable. It loads the CLI program (cli/program.ts) from dist/cli.bundle.js —
 * the program and everything it imports in one esbuild bundle, written by the root
 * `pnpm run build` (scripts/bundle.mjs) — while {@link currentBundle} finds that bundle current,
 * else from the modules. Why: Node loads the ≈ 420 modules in ≈ 350 ms and the bundle in ≈ 100 ms
 * (issue 14: a quarter of a 2.5-second quickstart was the main thread starting, before any worker
 * could). So this file imports nothing else at load time.
 *
 * Exit codes are documented in cli/program.ts.
 */
import { realpathSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { currentBundle } from "./platform/bundle.js";

// Compare real paths of files (fileURLToPath decodes %20 and friends, so a checkout or install
// under a path with a space still recognizes itself as the entry point).
function isEntryPoint(): boolean {
  try {
    return process.argv[1] !== undefined && realpathSync(fileURLToPath(import.meta.url)) === realpathSync(process.argv[1]);
  } catch {
    return false;
  }
}

if (isEntryPoint()) {
  const bundle = currentBundle(new URL("./", import.meta.url), "cli.bundle.json");
  const program = (await import(bundle ? bundle.href : "./cli/program.js")) as typeof import("./cli/program.js");
  await program.runCli(process.argv);
}
