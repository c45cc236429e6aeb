/**
 * tokens/ — vocabulary, word-level and BPE tokenizers, embedding lookup E ∈ R^{N_T×d}, sinusoidal
 * and learned positional encodings (§1 of Serret (2026)).
 */
export * from "./tokenizer.js";
export * from "./vocabulary.js";
export * from "./word.js";
export * from "./bpe.js";
export * from "./embedding.js";
export * from "./positional.js";
export * from "./huggingface.js";
