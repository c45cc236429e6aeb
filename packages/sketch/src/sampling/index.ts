/** Row sampling of V (approximate matrix multiplication), ratio estimator, top-k baseline. */
export * from "./design.js";
export * from "./matmul.js";
export * from "./values.js";
export * from "./attention.js";
export * from "./topk.js";
export * from "./defensive.js";
