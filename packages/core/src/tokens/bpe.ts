/**
 * A byte-pair-encoding tokenizer — the kind real LLMs use (§1: "tokenization procedures … ideally
 * encode the smallest set of strings with inherent meaning") — wrapping the `gpt-tokenizer`
 * package (a pure-JS port of OpenAI's tiktoken encodings).
 *
 * Each encoding's rank table is a few MB, so only the requested encoding module is imported, and
 * only when `loadBpeTokenizer` is first called for it (dynamic import): importing @randattn/core
 * does not pay for any tokenizer. `gpt-tokenizer` (≈ 30 MB installed) is an optional peer
 * dependency: install it next to @randattn/core to use BPE; without it `loadBpeTokenizer` throws a
 * ValueError naming the missing package.
 */
import { ValueError } from "../errors.js";
import { assertInteger, assertOneOf, describe, assertOptions } from "../validate.js";
import type { Tokenizer } from "./tokenizer.js";

/** The BPE encodings available. o200k_base: GPT-4o/GPT-5; cl100k_base: GPT-4/3.5; p50k/r50k: GPT-3/GPT-2. */
export type BpeEncodingName = "o200k_base" | "cl100k_base" | "p50k_base" | "r50k_base";

/** Every encoding name accepted by `loadBpeTokenizer`. */
export const BPE_ENCODINGS: readonly BpeEncodingName[] = Object.freeze(["o200k_base", "cl100k_base", "p50k_base", "r50k_base"]);

/** How text that spells a special token (e.g. `"<|endoftext|>"`) is treated by `encode`. */
export type SpecialTokenHandling = "error" | "text";

export interface BpeTokenizerOptions {
  /** The encoding. cl100k_base loads in about half the time of o200k_base. @default "cl100k_base" */
  encoding?: BpeEncodingName;
  /**
   * "error": text containing a special-token spelling is rejected (tiktoken's default — such text
   * usually means prompt injection or a bug); "text": it is encoded as ordinary characters.
   * @default "error"
   */
  specialTokens?: SpecialTokenHandling;
}

/** The part of gpt-tokenizer's `GptEncoding` this wrapper uses. */
export interface BpeEncodingApi {
  readonly vocabularySize: number;
  encode(text: string, options?: { disallowedSpecial?: Set<string> }): number[];
  decode(ids: Iterable<number>): string;
}

// How far above the package's `vocabularySize` to look for special-token ids: encodings leave
// gaps (cl100k_base has 100,264 tokens but ids up to 100,276).
const SPECIAL_ID_SEARCH = 1024;

/** BPE tokenizer over a gpt-tokenizer encoding. Build it with `loadBpeTokenizer`. */
export class BpeTokenizer implements Tokenizer {
  readonly encoding: BpeEncodingName;
  /** Distinct tokens of the encoding (mergeable ranks + special tokens), as the package reports it. */
  readonly tokenCount: number;
  /** Largest valid id; `vocabSize = maxTokenId + 1` rows are needed for an embedding table. */
  readonly maxTokenId: number;
  private readonly api: BpeEncodingApi;
  private readonly specialTokens: SpecialTokenHandling;

  /**
   * Wraps an already loaded encoding (see `loadBpeTokenizer`, which is the usual way in).
   * @param options.specialTokens See `BpeTokenizerOptions.specialTokens`. @default "error"
   * @throws ValueError on an unknown encoding name, an object that is not an encoding, or bad options.
   */
  constructor(encoding: BpeEncodingName, api: BpeEncodingApi, options: Pick<BpeTokenizerOptions, "specialTokens"> = {}) {
    assertOptions(options, "options");
    assertOneOf(encoding, "encoding", BPE_ENCODINGS);
    if (api === null || typeof api !== "object" || typeof api.encode !== "function" || typeof api.decode !== "function") {
      throw new ValueError("api", "a gpt-tokenizer encoding (with encode, decode, vocabularySize)", describe(api));
    }
    assertInteger(api.vocabularySize, "api.vocabularySize");
    const specialTokens = options.specialTokens ?? "error";
    assertOneOf(specialTokens, "options.specialTokens", ["error", "text"] as const);
    this.encoding = encoding;
    this.api = api;
    this.specialTokens = specialTokens;
    this.tokenCount = api.vocabularySize;
    let maxId = api.vocabularySize - 1;
    for (let id = api.vocabularySize; id < api.vocabularySize + SPECIAL_ID_SEARCH; id++) if (this.isValidId(id)) maxId = id;
    this.maxTokenId = maxId;
  }

  /** maxTokenId + 1: the embedding-table rows needed (every id `encode` returns is below it). */
  get vocabSize(): number {
    return this.maxTokenId + 1;
  }

  /** Whether `id` is a token of the encoding (encodings have gaps among the special ids). */
  isValidId(id: number): boolean {
    if (!Number.isInteger(id) || id < 0) return false;
    try {
      this.api.decode([id]);
      return true;
    } catch {
      return false;
    }
  }

  /**
   * BPE token ids of `text`.
   * @throws ValueError when `text` is not a string, or spells a special token with `specialTokens: "error"`.
   */
  encode(text: string): number[] {
    if (typeof text !== "string") throw new ValueError("text", "a string", describe(text));
    if (this.specialTokens === "text") return this.api.encode(text, { disallowedSpecial: new Set() });
    try {
      return this.api.encode(text);
    } catch (e) {
      const msg = e instanceof Error ? e.message : String(e);
      throw new ValueError("text", `text without special-token spellings (or option specialTokens: "text")`, msg);
    }
  }

  /**
   * The text of `ids`. A sequence that ends inside a multi-byte UTF-8 character decodes that
   * character as U+FFFD.
   * @throws ValueError naming `ids[i]` for an id that is not a token of the encoding.
   */
  decode(ids: ArrayLike<number>): string {
    if (ids === null || typeof ids !== "object" || typeof ids.length !== "number")
      throw new ValueError("ids", "an array of token ids", describe(ids));
    const list = Array.from(ids);
    for (let i = 0; i < list.length; i++) {
      const id = list[i];
      if (!Number.isInteger(id) || id < 0 || id > this.maxTokenId) {
        throw new ValueError(`ids[${i}]`, `an integer token id in [0, ${this.maxTokenId}] (${this.encoding})`, describe(id));
      }
    }
    try {
      return this.api.decode(list);
    } catch {
      const bad = list.findIndex((id) => !this.isValidId(id));
      throw new ValueError(
        `ids[${bad}]`,
        `a token id of ${this.encoding} (ids in the gaps between special tokens are unused)`,
        describe(list[bad]),
      );
    }
  }
}

const loaded = new Map<BpeEncodingName, Promise<BpeEncodingApi>>();

/** Whether an import failure means "the package is not installed" (Node, bundlers, browsers). */
function isMissingModule(e: unknown): boolean {
  const code = (e as { code?: unknown } | null)?.code;
  if (code === "ERR_MODULE_NOT_FOUND" || code === "MODULE_NOT_FOUND") return true;
  const msg = e instanceof Error ? e.message : String(e);
  return /Cannot find (module|package)|Failed to resolve module|Failed to fetch dynamically imported module/.test(msg);
}

async function importEncoding(name: BpeEncodingName): Promise<BpeEncodingApi> {
  try {
    return await importEncodingModule(name);
  } catch (e) {
    if (!isMissingModule(e)) throw e;
    throw new ValueError(
      "gpt-tokenizer",
      "the optional peer dependency gpt-tokenizer installed next to @randattn/core (npm install gpt-tokenizer) to load BPE encodings",
      "not installed",
    );
  }
}

async function importEncodingModule(name: BpeEncodingName): Promise<BpeEncodingApi> {
  // One literal specifier per encoding so only the requested rank table is loaded.
  switch (name) {
    case "o200k_base":
      return (await import("gpt-tokenizer/encoding/o200k_base")).default;
    case "cl100k_base":
      return (await import("gpt-tokenizer/encoding/cl100k_base")).default;
    case "p50k_base":
      return (await import("gpt-tokenizer/encoding/p50k_base")).default;
    case "r50k_base":
      return (await import("gpt-tokenizer/encoding/r50k_base")).default;
  }
}

/**
 * Loads a BPE encoding (once per process; later calls reuse it) and returns a tokenizer.
 * Needs the optional peer dependency `gpt-tokenizer`.
 * @throws ValueError on an unknown encoding name or bad options, and a ValueError with argument
 *   `"gpt-tokenizer"` when that package is not installed.
 */
export async function loadBpeTokenizer(options: BpeTokenizerOptions = {}): Promise<BpeTokenizer> {
  if (options === null || typeof options !== "object") throw new ValueError("options", "an options object", describe(options));
  const encoding = options.encoding ?? "cl100k_base";
  assertOneOf(encoding, "options.encoding", BPE_ENCODINGS);
  const specialTokens = options.specialTokens ?? "error";
  assertOneOf(specialTokens, "options.specialTokens", ["error", "text"] as const);
  let api = loaded.get(encoding);
  if (!api) {
    api = importEncoding(encoding);
    loaded.set(encoding, api);
    // A failed load (e.g. gpt-tokenizer not installed) is not cached: installing it and retrying works.
    api.catch(() => loaded.delete(encoding));
  }
  return new BpeTokenizer(encoding, await api, { specialTokens });
}
