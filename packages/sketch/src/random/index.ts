/** Samplers on core's seeded streams: gaussian, rademacher, uniform, categorical (alias; with / without replacement). */
export * from "./probabilities.js";
export * from "./samplers.js";
export * from "./categorical.js";
