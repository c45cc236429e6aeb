import { describe, expect, it } from "vitest";
import { Vocabulary, WordTokenizer, splitWords } from "@randattn/core";

describe("word-level tokenizer (§1)", () => {
  const corpus = ["Attention is all you need.", "Keys, values and queries: a database lookup!", "Ça marche très bien 42 fois."];
  const tok = WordTokenizer.fromCorpus(corpus);

  it("splits on whitespace and punctuation", () => {
    expect(splitWords("Hello, world!  It's 2026.")).toEqual(["Hello", ",", "world", "!", "It", "'", "s", "2026", "."]);
    expect(splitWords("Ça marche très bien")).toEqual(["Ça", "marche", "très", "bien"]);
    expect(splitWords("   ")).toEqual([]);
  });

  it("round-trips: encode(decode(ids)) = ids and the tokens of decode(encode(text)) = tokens of text", () => {
    for (const text of corpus) {
      const ids = tok.encode(text);
      expect(ids).toHaveLength(splitWords(text).length);
      expect(tok.encode(tok.decode(ids))).toEqual(ids);
      expect(tok.tokenize(tok.decode(ids))).toEqual(splitWords(text));
      expect(ids.map((i) => tok.vocabulary.tokenOf(i))).toEqual(splitWords(text));
    }
  });

  it("maps unknown words to <unk> and keeps special tokens whole", () => {
    const unk = tok.specialId("unk") as number;
    expect(tok.encode("all you want")).toEqual([tok.vocabulary.idOf("all"), tok.vocabulary.idOf("you"), unk]);
    const withMarks = new WordTokenizer(tok.vocabulary, { addBos: true, addEos: true });
    const ids = withMarks.encode("you need");
    expect(ids[0]).toBe(tok.specialId("bos"));
    expect(ids.at(-1)).toBe(tok.specialId("eos"));
    expect(withMarks.decode(ids)).toBe("<bos> you need <eos>");
    expect(withMarks.decode(ids, { skipSpecial: true })).toBe("you need");
    expect(tok.encode(withMarks.decode(ids))).toEqual(ids);
  });

  it("rejects bad input", () => {
    expect(() => tok.encode(3 as unknown as string)).toThrow(/text: expected a string, got 3/);
    expect(() => tok.decode([0, tok.vocabSize])).toThrow(
      new RegExp(`ids\\[1\\]: expected an integer in \\[0, ${tok.vocabSize - 1}\\], got ${tok.vocabSize}`),
    );
    expect(() => tok.decode([0.5])).toThrow(/ids\[0\]/);
    const noUnk = new WordTokenizer(new Vocabulary(["a", "b"]));
    expect(() => noUnk.encode("a c")).toThrow(/token: expected a token of the vocabulary/);
    expect(() => new WordTokenizer(new Vocabulary(["a"]), { addBos: true })).toThrow(
      /options\.addBos: expected a vocabulary with a <bos> token/,
    );
    expect(() => new WordTokenizer(["a"] as unknown as Vocabulary)).toThrow(/vocabulary: expected a Vocabulary/);
  });
});
