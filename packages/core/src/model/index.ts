/** Models of §3.3: encoder-only, decoder-only and encoder–decoder stacks, output head, greedy generation with KV cache. */
export * from "./config.js";
export * from "./input.js";
export * from "./head.js";
export * from "./stacks.js";
export * from "./generate.js";
