import { fileURLToPath } from "node:url";
import { defineConfig } from "vitest/config";

// Tests import the workspace packages from source, so `vitest` needs no build for the unit suites.
// (Suites that spawn the CLI or worker threads use the built dist/, which `pnpm test` builds first.)
const srcFile = (p: string, file: string) => fileURLToPath(new URL(`./packages/${p}/src/${file}.ts`, import.meta.url));
const src = (p: string) => srcFile(p, "index");

export default defineConfig({
  resolve: {
    // Order matters: the subpaths before their packages (an alias matches a prefix).
    alias: [
      { find: "@randattn/core/internal", replacement: srcFile("core", "internal") },
      { find: "@randattn/experiments/internal", replacement: srcFile("experiments", "internal") },
      { find: /^@randattn\/core$/, replacement: src("core") },
      { find: /^@randattn\/sketch$/, replacement: src("sketch") },
      { find: /^@randattn\/experiments$/, replacement: src("experiments") },
    ],
  },
  test: {
    include: ["packages/*/test/**/*.test.ts"],
    testTimeout: 60_000,
    hookTimeout: 60_000,
  },
});
