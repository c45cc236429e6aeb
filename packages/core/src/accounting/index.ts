/**
 * accounting/ — floats stored and FLOPs of attention (Tables 1–3 of Serret (2026) and the study
 * notes), for MHA, GQA, MQA and MLA, and the Table 3 model presets.
 */
export * from "./spec.js";
export * from "./memory.js";
export * from "./flops.js";
export * from "./presets.js";
export * from "./table.js";
export * from "./cost.js";
