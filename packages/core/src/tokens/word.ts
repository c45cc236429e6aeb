/**
 * The word-level tokenizer of §1 of Serret (2026) ("tokens can be taken without loss of
 * generality to be words"): a text is split into runs of letters/digits and single punctuation
 * characters; each piece is looked up in a `Vocabulary`.
 */
import { ValueError } from "../errors.js";
import { assertInteger, describe, assertOptions } from "../validate.js";
import type { Tokenizer } from "./tokenizer.js";
import { type SpecialTokenRole, Vocabulary, type VocabularyBuildOptions } from "./vocabulary.js";

// A word is a run of letters, combining marks, digits and underscores; every other non-space
// character (punctuation, symbols, emoji) is a token of its own.
const WORD_PATTERN = "[\\p{L}\\p{M}\\p{N}_]+|[^\\s\\p{L}\\p{M}\\p{N}_]";

function escapeRegExp(s: string): string {
  return s.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
}

/**
 * Splits text into words and single punctuation characters: `"Hello, world!"` →
 * `["Hello", ",", "world", "!"]`. Whitespace only separates.
 * @throws ValueError unless `text` is a string.
 */
export function splitWords(text: string): string[] {
  if (typeof text !== "string") throw new ValueError("text", "a string", describe(text));
  return text.match(new RegExp(WORD_PATTERN, "gu")) ?? [];
}

export interface WordTokenizerOptions {
  /** Lower-case text before splitting (special tokens are kept as written). @default false */
  lowercase?: boolean;
  /** Prepend the `<bos>` id in `encode` (the vocabulary must have one). @default false */
  addBos?: boolean;
  /** Append the `<eos>` id in `encode` (the vocabulary must have one). @default false */
  addEos?: boolean;
}

export interface WordDecodeOptions {
  /** Drop special tokens (`<pad>`, `<bos>`, `<eos>`, `<unk>`) from the text. @default false */
  skipSpecial?: boolean;
}

/**
 * Word-level tokenizer over a `Vocabulary`. Unknown words map to `<unk>` when the vocabulary has
 * one (else `encode` throws). `decode` joins tokens with single spaces, so
 * `encode(decode(ids))` returns `ids` (the original spacing is not kept).
 */
export class WordTokenizer implements Tokenizer {
  readonly vocabulary: Vocabulary;
  private readonly lowercase: boolean;
  private readonly addBos: boolean;
  private readonly addEos: boolean;
  private readonly pattern: RegExp;

  /** @throws ValueError when addBos/addEos is requested and the vocabulary lacks `<bos>`/`<eos>`. */
  constructor(vocabulary: Vocabulary, options: WordTokenizerOptions = {}) {
    assertOptions(options, "options");
    if (!(vocabulary instanceof Vocabulary)) throw new ValueError("vocabulary", "a Vocabulary", describe(vocabulary));
    this.vocabulary = vocabulary;
    this.lowercase = bool(options.lowercase, "options.lowercase");
    this.addBos = bool(options.addBos, "options.addBos");
    this.addEos = bool(options.addEos, "options.addEos");
    for (const [flag, role] of [
      [this.addBos, "bos"],
      [this.addEos, "eos"],
    ] as const) {
      if (flag && vocabulary.specialId(role) === undefined) {
        throw new ValueError(`options.add${role === "bos" ? "Bos" : "Eos"}`, `a vocabulary with a <${role}> token`, "none");
      }
    }
    // Special tokens are matched whole before the word pattern, so "<eos>" is one token, not "<", "eos", ">".
    const specials = Object.values(vocabulary.specials).sort((a, b) => b.length - a.length);
    const alternatives = [...specials.map(escapeRegExp), WORD_PATTERN];
    this.pattern = new RegExp(alternatives.join("|"), "gu");
  }

  /**
   * Splits a corpus with `splitWords`, builds the vocabulary (see `Vocabulary.fromSequences`) and
   * returns a tokenizer over it.
   */
  static fromCorpus(texts: readonly string[], options: WordTokenizerOptions & VocabularyBuildOptions = {}): WordTokenizer {
    assertOptions(options, "options");
    if (!Array.isArray(texts)) throw new ValueError("texts", "an array of strings", describe(texts));
    const lowercase = bool(options.lowercase, "options.lowercase");
    const sequences = texts.map((t, i) => {
      if (typeof t !== "string") throw new ValueError(`texts[${i}]`, "a string", describe(t));
      return splitWords(lowercase ? t.toLowerCase() : t);
    });
    return new WordTokenizer(Vocabulary.fromSequences(sequences, options), options);
  }

  /** N_T. */
  get vocabSize(): number {
    return this.vocabulary.size;
  }

  /** The tokens of `text` (special-token spellings kept whole, the rest lower-cased if configured). */
  tokenize(text: string): string[] {
    if (typeof text !== "string") throw new ValueError("text", "a string", describe(text));
    const specials = new Set(Object.values(this.vocabulary.specials));
    const pieces = text.match(this.pattern) ?? [];
    return this.lowercase ? pieces.map((p) => (specials.has(p) ? p : p.toLowerCase())) : pieces;
  }

  /** Token ids of `text` (with `<bos>`/`<eos>` if configured). */
  encode(text: string): number[] {
    const ids = this.tokenize(text).map((t) => this.vocabulary.idOf(t));
    if (this.addBos) ids.unshift(this.vocabulary.specialId("bos") as number);
    if (this.addEos) ids.push(this.vocabulary.specialId("eos") as number);
    return ids;
  }

  /**
   * The tokens of `ids` joined by single spaces.
   * @throws ValueError naming `ids[i]` for an id that is not an integer in [0, vocabSize − 1].
   */
  decode(ids: ArrayLike<number>, options: WordDecodeOptions = {}): string {
    assertOptions(options, "options");
    if (ids === null || typeof ids !== "object" || typeof ids.length !== "number")
      throw new ValueError("ids", "an array of token ids", describe(ids));
    const skip = bool(options.skipSpecial, "options.skipSpecial");
    const out: string[] = [];
    for (let i = 0; i < ids.length; i++) {
      assertInteger(ids[i], `ids[${i}]`, 0, this.vocabulary.size - 1);
      if (skip && this.vocabulary.isSpecial(ids[i])) continue;
      out.push(this.vocabulary.tokenOf(ids[i]));
    }
    return out.join(" ");
  }

  /** The id of a special token role, or undefined. */
  specialId(role: SpecialTokenRole): number | undefined {
    return this.vocabulary.specialId(role);
  }
}

function bool(v: unknown, argument: string): boolean {
  if (v === undefined) return false;
  if (typeof v !== "boolean") throw new ValueError(argument, "a boolean", describe(v));
  return v;
}
