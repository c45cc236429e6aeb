/**
 * Hugging Face `tokenizer.json` through `@huggingface/tokenizers` (Tokenizers.js, the HF team's
 * pure-JS port: byte-level BPE as GPT-2/Llama 3/Qwen2, SentencePiece-style BPE as Llama 2, WordPiece,
 * Unigram; no dependencies, runs in browsers). Chosen over writing a BPE: it implements the
 * normalizers, pre-tokenizers, added tokens and post-processors of the format.
 */
import { Tokenizer as HfTokenizerImpl } from "@huggingface/tokenizers";
import { FormatError } from "../errors.js";
import { describe } from "../validate.js";
import type { Tokenizer } from "./tokenizer.js";

/** Options of {@link HuggingFaceTokenizer.encode}. */
export interface HfEncodeOptions {
  /** Apply the post-processor (e.g. Llama's BOS). @default true */
  addSpecialTokens?: boolean;
}

/** A tokenizer read from `tokenizer.json` (and optionally `tokenizer_config.json`). */
export class HuggingFaceTokenizer implements Tokenizer {
  readonly vocabSize: number;
  private readonly impl: HfTokenizerImpl;

  /**
   * @param tokenizerJson parsed tokenizer.json. @param tokenizerConfig parsed tokenizer_config.json. @default {}
   * @throws FormatError when the library rejects the file.
   */
  constructor(tokenizerJson: unknown, tokenizerConfig: unknown = {}, label = "tokenizer.json") {
    if (tokenizerJson === null || typeof tokenizerJson !== "object") throw new FormatError(label, "a JSON object", describe(tokenizerJson));
    try {
      this.impl = new HfTokenizerImpl(tokenizerJson as object, (tokenizerConfig ?? {}) as object);
    } catch (e) {
      throw new FormatError(label, "a tokenizer.json that @huggingface/tokenizers reads", (e as Error).message);
    }
    let max = -1;
    for (const id of this.impl.get_vocab(true).values()) max = Math.max(max, id);
    this.vocabSize = max + 1;
  }

  encode(text: string, options: HfEncodeOptions = {}): number[] {
    return this.impl.encode(text, { add_special_tokens: options.addSpecialTokens ?? true }).ids;
  }

  decode(ids: ArrayLike<number>): string {
    return this.impl.decode(Array.from(ids), { skip_special_tokens: false, clean_up_tokenization_spaces: false });
  }

  /** The token strings of `text` (no special tokens). */
  tokenize(text: string): string[] {
    return this.impl.tokenize(text);
  }
}
