import { fileURLToPath } from "node:url";
import { defineConfig } from "vitest/config";

// Tests import the workspace packages from source, so `vitest` needs no build for the unit suites.
// (Suites that spawn the CLI or worker threads use the built dist/, which `pnpm test` builds first.)
const src = (p: string) => fileURLToPath(new URL(`./packages/${p}/src/index.ts`, import.meta.url));

export default defineConfig({
  resolve: {
    alias: {
      // (the subpath first: "@randattn/core" would otherwise also match "@randattn/core/node")
      "@randattn/core/node": fileURLToPath(new URL("./packages/core/src/node/index.ts", import.meta.url)),
      "@randattn/core": src("core"),
      "@randattn/sketch": src("sketch"),
      "@randattn/experiments": src("experiments"),
    },
  },
  test: {
    include: ["packages/*/test/**/*.test.ts"],
    testTimeout: 60_000,
    hookTimeout: 60_000,
  },
});
