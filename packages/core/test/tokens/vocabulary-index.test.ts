import { describe, expect, it } from "vitest";
import { SPECIAL_TOKENS, ValueError, Vocabulary } from "@randattn/core";

describe("Vocabulary: index ↔ token", () => {
  const tokens = ["<pad>", "<unk>", "the", "cat", "sat", "."];
  const vocab = new Vocabulary(tokens);

  it("maps every index to its token and back", () => {
    expect(vocab.size).toBe(tokens.length);
    tokens.forEach((t, i) => {
      expect(vocab.tokenOf(i)).toBe(t);
      expect(vocab.idOf(t)).toBe(i);
      expect(vocab.has(t)).toBe(true);
    });
    expect(vocab.tokens).toEqual(tokens);
  });

  it("detects the conventional special tokens and falls back on <unk>", () => {
    expect(vocab.specialId("pad")).toBe(0);
    expect(vocab.specialId("unk")).toBe(1);
    expect(vocab.specialId("bos")).toBeUndefined();
    expect(vocab.specials).toEqual({ pad: SPECIAL_TOKENS.pad, unk: SPECIAL_TOKENS.unk });
    expect(vocab.idOf("dog")).toBe(1);
    expect(vocab.isSpecial(0)).toBe(true);
    expect(vocab.isSpecial(2)).toBe(false);
  });

  it("honours explicit special-token roles", () => {
    const v = new Vocabulary(["[PAD]", "[UNK]", "a"], { specials: { pad: "[PAD]", unk: "[UNK]" } });
    expect(v.specialId("unk")).toBe(1);
    expect(v.idOf("zzz")).toBe(1);
  });

  it("throws on unknown tokens without <unk>, bad ids and bad token lists", () => {
    const noUnk = new Vocabulary(["a", "b"]);
    expect(() => noUnk.idOf("c")).toThrow(/token: expected a token of the vocabulary .*got "c"/);
    expect(() => vocab.tokenOf(6)).toThrow(/id: expected an integer in \[0, 5\], got 6/);
    expect(() => vocab.tokenOf(-1)).toThrow(ValueError);
    expect(() => vocab.tokenOf(1.5)).toThrow(ValueError);
    expect(() => new Vocabulary([])).toThrow(/tokens: expected a non-empty array of strings/);
    expect(() => new Vocabulary(["a", "b", "a"])).toThrow(/tokens\[2\]: expected distinct tokens/);
    expect(() => new Vocabulary(["a", ""])).toThrow(/tokens\[1\]: expected a non-empty string/);
    expect(() => new Vocabulary(["a", 3 as unknown as string])).toThrow(/tokens\[1\]/);
    expect(() => new Vocabulary(["a"], { specials: { unk: "<unk>" } })).toThrow(
      /options\.specials\.unk: expected a token of the vocabulary/,
    );
  });
});
