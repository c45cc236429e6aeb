import { defineConfig } from "vite";

// A static site: relative asset paths so dist/ works from any folder or file server.
export default defineConfig({
  base: "./",
  build: { target: "es2022", outDir: "dist", emptyOutDir: true, chunkSizeWarningLimit: 2048 },
  worker: { format: "es" },
});
