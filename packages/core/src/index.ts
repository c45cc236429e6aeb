/**
 * @randattn/core — exact attention in every variant of Serret (2026) and the study notes.
 * Folder layout = architecture: linalg/ (matrix type and kernels), random/ (seeded streams),
 * attention/ (kernel attention, masks, multi-head, GQA, streaming), latent/ (MLA), position/
 * (RoPE, positional encodings), cache/ (KV caches and decoding), layers/ and model/ (norms, FFN,
 * encoder/decoder stacks), tokens/ (vocabulary, tokenizers, embeddings), accounting/ (Tables 1–3),
 * io/ (.npy).
 */
export * from "./errors.js";
export * from "./validate.js";
export * from "./linalg/matrix.js";
export * from "./linalg/matmul.js";
export * from "./linalg/ops.js";
export * from "./random/stream.js";
export * from "./random/init.js";
