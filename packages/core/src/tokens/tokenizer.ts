/**
 * The interface shared by RandAttn's tokenizers (§1 of Serret (2026)): a text becomes the
 * sequence of indices of its tokens in an ordered vocabulary T = (T_i), and back.
 */

/** Text ↔ token ids. Ids are 0-based indices into a vocabulary of `vocabSize` entries. */
export interface Tokenizer {
  /**
   * Number of rows an embedding table E ∈ R^{N_T×d} needs for this tokenizer: every id that
   * `encode` can return is < vocabSize.
   */
  readonly vocabSize: number;
  /** The token ids of `text`. */
  encode(text: string): number[];
  /** The text of a sequence of ids. */
  decode(ids: ArrayLike<number>): string;
}
