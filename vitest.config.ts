import { fileURLToPath } from "node:url";
import { defineConfig } from "vitest/config";

// Tests import the workspace packages from source, so `vitest` needs no build for the unit suites.
// (Suites that spawn the CLI or worker threads use the built dist/, which `pnpm test` builds first.)
// Exact-match patterns, so `@randattn/core` does not also rewrite `@randattn/core/node`.
const entry = (name: string, file: string) => ({ find: new RegExp(`^${name.replace("/", "\\/")}$`), replacement: file });
const file = (p: string) => fileURLToPath(new URL(`./packages/${p}`, import.meta.url));

export default defineConfig({
  resolve: {
    alias: [
      entry("@randattn/core/node", file("core/src/node/index.ts")),
      entry("@randattn/core/internal", file("core/src/internal.ts")),
      entry("@randattn/core", file("core/src/index.ts")),
      entry("@randattn/sketch", file("sketch/src/index.ts")),
      entry("@randattn/experiments/browser", file("experiments/src/browser.ts")),
      entry("@randattn/experiments/internal", file("experiments/src/internal.ts")),
      entry("@randattn/experiments", file("experiments/src/index.ts")),
    ],
  },
  test: {
    include: ["packages/*/test/**/*.test.ts"],
    testTimeout: 60_000,
    hookTimeout: 60_000,
  },
});
