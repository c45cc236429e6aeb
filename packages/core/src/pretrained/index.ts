export * from "./build.js";
export * from "./info.js";
export * from "./model.js";
export { WeightReader } from "./weights.js";
