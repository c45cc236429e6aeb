export * from "./config.js";
export * from "./dtype.js";
export * from "./safetensors.js";
export * from "./store.js";
