import { describe, expect, it } from "vitest";
import { Vocabulary, WordTokenizer, splitWords } from "@randattn/core";

describe("Vocabulary.fromSequences / WordTokenizer.fromCorpus", () => {
  const corpus = ["the cat sat on the mat.", "The dog sat.", "a cat, a dog, the end"];

  it("orders specials first, then by count, ties by first occurrence", () => {
    const seqs = corpus.map(splitWords);
    const v = Vocabulary.fromSequences(seqs);
    // Reference ranking written out independently: count every token, stable-sort by count.
    const counts = new Map<string, number>();
    for (const s of seqs) for (const t of s) counts.set(t, (counts.get(t) ?? 0) + 1);
    const expected = [...counts.keys()].sort(
      (a, b) => (counts.get(b) ?? 0) - (counts.get(a) ?? 0) || [...counts.keys()].indexOf(a) - [...counts.keys()].indexOf(b),
    );
    expect(v.tokens).toEqual(["<pad>", "<unk>", "<bos>", "<eos>", ...expected]);
    // By hand: "the" is the only token seen 3 times; "cat" is the first of the tokens seen twice.
    expect(v.tokens.slice(4, 6)).toEqual(["the", "cat"]);
  });

  it("applies minCount and maxSize (specials included in the size)", () => {
    const seqs = corpus.map(splitWords);
    const v = Vocabulary.fromSequences(seqs, { minCount: 2 });
    for (const t of v.tokens.slice(4)) expect(seqs.flat().filter((x) => x === t).length).toBeGreaterThanOrEqual(2);
    expect(v.has("mat")).toBe(false);
    const small = Vocabulary.fromSequences(seqs, { maxSize: 6 });
    expect(small.size).toBe(6);
    expect(small.tokens.slice(4)).toEqual(v.tokens.slice(4, 6));
    const custom = Vocabulary.fromSequences([["x", "y", "x"]], { specialTokens: ["<unk>"] });
    expect(custom.tokens).toEqual(["<unk>", "x", "y"]);
  });

  it("lower-cases the corpus when asked", () => {
    const tok = WordTokenizer.fromCorpus(corpus, { lowercase: true });
    expect(tok.vocabulary.has("The")).toBe(false);
    expect(tok.vocabulary.idOf("the")).toBe(4);
    expect(tok.encode("THE CAT")).toEqual([tok.vocabulary.idOf("the"), tok.vocabulary.idOf("cat")]);
  });

  it("rejects bad options and corpora", () => {
    expect(() => Vocabulary.fromSequences([["a"]], { minCount: 0 })).toThrow(/options\.minCount: expected an integer ≥ 1, got 0/);
    expect(() => Vocabulary.fromSequences([["a"]], { maxSize: 2 })).toThrow(/options\.maxSize: expected an integer ≥ 4, got 2/);
    expect(() => Vocabulary.fromSequences([["a", ""]])).toThrow(/sequences\[0\]\[1\]: expected a non-empty string/);
    expect(() => Vocabulary.fromSequences(["abc" as unknown as string[]])).toThrow(/sequences\[0\]: expected an array of tokens/);
    expect(() => WordTokenizer.fromCorpus("text" as unknown as string[])).toThrow(/texts: expected an array of strings/);
    expect(() => WordTokenizer.fromCorpus(["ok", 5 as unknown as string])).toThrow(/texts\[1\]: expected a string/);
  });
});
