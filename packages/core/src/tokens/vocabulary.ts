/**
 * The vocabulary of §1 of Serret (2026): an ordered set T = (T_i) of the N_T distinct tokens; a
 * text is represented by the indices of its tokens. Indices are 0-based here (T_i is row i of the
 * embedding matrix E).
 */
import { ValueError } from "../errors.js";
import { assertInteger, describe, assertOptions } from "../validate.js";

/** Roles of the special tokens a vocabulary may carry. */
export type SpecialTokenRole = "pad" | "unk" | "bos" | "eos";

/** The conventional spellings of the special tokens. */
export const SPECIAL_TOKENS: Readonly<Record<SpecialTokenRole, string>> = Object.freeze({
  pad: "<pad>",
  unk: "<unk>",
  bos: "<bos>",
  eos: "<eos>",
});

const ROLES: readonly SpecialTokenRole[] = ["pad", "unk", "bos", "eos"];

export interface VocabularyOptions {
  /**
   * Which tokens play the special roles. A role mapped to a string must name a token of the
   * vocabulary. @default every role of `SPECIAL_TOKENS` whose spelling is present in `tokens`
   */
  specials?: Partial<Record<SpecialTokenRole, string>>;
}

export interface VocabularyBuildOptions {
  /** Keep only tokens seen at least this many times. @default 1 */
  minCount?: number;
  /** At most this many entries in total, special tokens included. @default unlimited */
  maxSize?: number;
  /** Special tokens placed first (ids 0, 1, …), in this order. @default ["<pad>", "<unk>", "<bos>", "<eos>"] */
  specialTokens?: readonly string[];
}

function assertToken(token: unknown, argument: string): asserts token is string {
  if (typeof token !== "string" || token.length === 0) throw new ValueError(argument, "a non-empty string", describe(token));
}

/** An ordered, duplicate-free list of tokens with index ↔ token maps and optional special tokens. */
export class Vocabulary {
  private readonly list: readonly string[];
  private readonly index: ReadonlyMap<string, number>;
  private readonly specialIds: Readonly<Partial<Record<SpecialTokenRole, number>>>;

  /**
   * @param tokens T_0 … T_{N_T−1}: non-empty, distinct strings.
   * @throws ValueError on an empty list, a non-string or empty token, a duplicate, or a special
   *   role naming a token that is not in the list.
   */
  constructor(tokens: readonly string[], options: VocabularyOptions = {}) {
    assertOptions(options, "options");
    if (!Array.isArray(tokens) || tokens.length === 0) throw new ValueError("tokens", "a non-empty array of strings", describe(tokens));
    const index = new Map<string, number>();
    tokens.forEach((t, i) => {
      assertToken(t, `tokens[${i}]`);
      const prev = index.get(t);
      if (prev !== undefined)
        throw new ValueError(`tokens[${i}]`, `distinct tokens (${JSON.stringify(t)} is already tokens[${prev}])`, JSON.stringify(t));
      index.set(t, i);
    });
    const specialIds: Partial<Record<SpecialTokenRole, number>> = {};
    const requested = options.specials;
    for (const role of ROLES) {
      if (requested && role in requested) {
        const t = requested[role];
        if (t === undefined) continue;
        const id = index.get(t as string);
        if (id === undefined) throw new ValueError(`options.specials.${role}`, "a token of the vocabulary", describe(t));
        specialIds[role] = id;
      } else if (!requested) {
        const id = index.get(SPECIAL_TOKENS[role]);
        if (id !== undefined) specialIds[role] = id;
      }
    }
    this.list = Object.freeze([...tokens]);
    this.index = index;
    this.specialIds = Object.freeze(specialIds);
  }

  /**
   * Builds a vocabulary from tokenized sequences: the special tokens first, then the tokens by
   * decreasing count, ties broken by first occurrence (so the result is deterministic).
   * @throws ValueError on bad options or a non-string token.
   */
  static fromSequences(sequences: Iterable<readonly string[]>, options: VocabularyBuildOptions = {}): Vocabulary {
    assertOptions(options, "options");
    const minCount = options.minCount ?? 1;
    assertInteger(minCount, "options.minCount");
    const maxSize = options.maxSize ?? Number.MAX_SAFE_INTEGER;
    const specials = options.specialTokens ?? ROLES.map((r) => SPECIAL_TOKENS[r]);
    if (!Array.isArray(specials)) throw new ValueError("options.specialTokens", "an array of strings", describe(specials));
    assertInteger(maxSize, "options.maxSize", Math.max(1, specials.length));
    if (sequences === null || typeof (sequences as Iterable<unknown>)[Symbol.iterator] !== "function") {
      throw new ValueError("sequences", "an iterable of token arrays", describe(sequences));
    }
    const counts = new Map<string, number>();
    let s = 0;
    for (const seq of sequences) {
      if (!Array.isArray(seq)) throw new ValueError(`sequences[${s}]`, "an array of tokens", describe(seq));
      seq.forEach((t, i) => {
        assertToken(t, `sequences[${s}][${i}]`);
        counts.set(t, (counts.get(t) ?? 0) + 1);
      });
      s++;
    }
    const specialSet = new Set(specials);
    // Map iteration order is insertion order = first occurrence; a stable sort keeps it for ties.
    const ranked = [...counts.entries()].filter(([t, c]) => c >= minCount && !specialSet.has(t)).sort((a, b) => b[1] - a[1]);
    const tokens = [...specials, ...ranked.slice(0, maxSize - specials.length).map(([t]) => t)];
    return new Vocabulary(tokens);
  }

  /** N_T, the number of tokens. */
  get size(): number {
    return this.list.length;
  }

  /** The tokens in index order (frozen). */
  get tokens(): readonly string[] {
    return this.list;
  }

  /** Whether `token` is in the vocabulary. */
  has(token: string): boolean {
    return this.index.has(token);
  }

  /**
   * The index of `token`; the `<unk>` index for an unknown token when the vocabulary has one.
   * @throws ValueError for an unknown token without an `<unk>` fallback.
   */
  idOf(token: string): number {
    const id = this.index.get(token);
    if (id !== undefined) return id;
    const unk = this.specialIds.unk;
    if (unk !== undefined) return unk;
    throw new ValueError("token", "a token of the vocabulary (there is no <unk> to fall back on)", describe(token));
  }

  /**
   * The token at index `id`.
   * @throws ValueError unless `id` is an integer in [0, size − 1].
   */
  tokenOf(id: number): string {
    assertInteger(id, "id", 0, this.list.length - 1);
    return this.list[id];
  }

  /** The id of a special token role, or undefined when the vocabulary has none. */
  specialId(role: SpecialTokenRole): number | undefined {
    return this.specialIds[role];
  }

  /** Whether `id` is one of the special tokens. */
  isSpecial(id: number): boolean {
    for (const role of ROLES) if (this.specialIds[role] === id) return true;
    return false;
  }

  /** The special tokens present, as role → token. */
  get specials(): Readonly<Partial<Record<SpecialTokenRole, string>>> {
    const out: Partial<Record<SpecialTokenRole, string>> = {};
    for (const role of ROLES) {
      const id = this.specialIds[role];
      if (id !== undefined) out[role] = this.list[id];
    }
    return out;
  }
}
