/**
 * `@randattn/core/node` — the parts of the core that need Node's filesystem (kept out of the main
 * entry so bundles for browsers never see `node:` imports).
 */
export * from "./checkpoint.js";
export * from "./captures.js";
