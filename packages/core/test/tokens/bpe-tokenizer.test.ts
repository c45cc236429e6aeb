import { describe, expect, it } from "vitest";
import { loadBpeTokenizer } from "@randattn/core";
import { encode as referenceEncode, vocabularySize as referenceVocab } from "gpt-tokenizer/encoding/r50k_base";

const SAMPLES = [
  "Attention is all you need.",
  "  Leading spaces, tabs\tand\nnew lines  ",
  "Ça marche très bien — naïve café, 東京, Москва, 🙂🚀",
  "def softmax(x):\n    return np.exp(x - x.max()) / np.exp(x - x.max()).sum()",
  "",
];

describe("BPE tokenizer (gpt-tokenizer)", () => {
  it("round-trips sample text exactly (cl100k_base default and o200k_base)", async () => {
    for (const encoding of [undefined, "o200k_base"] as const) {
      const tok = await loadBpeTokenizer(encoding ? { encoding } : {});
      expect(tok.encoding).toBe(encoding ?? "cl100k_base");
      for (const text of SAMPLES) {
        const ids = tok.encode(text);
        expect(tok.decode(ids)).toBe(text);
        for (const id of ids) expect(id).toBeLessThan(tok.vocabSize);
      }
      // BPE compresses: fewer tokens than characters on ordinary text.
      expect(tok.encode(SAMPLES[0]).length).toBeLessThan(SAMPLES[0].length / 2);
    }
  });

  it("matches the package's own encoding and reports a vocabulary size equal to the decodable ids", async () => {
    const tok = await loadBpeTokenizer({ encoding: "r50k_base" });
    expect(tok.encode(SAMPLES[2])).toEqual(referenceEncode(SAMPLES[2]));
    expect(tok.tokenCount).toBe(referenceVocab);
    let decodable = 0;
    for (let id = 0; id <= tok.maxTokenId + 8; id++) if (tok.isValidId(id)) decodable++;
    expect(decodable).toBe(tok.tokenCount); // r50k_base has no gaps: ids 0 … 50256
    expect(tok.vocabSize).toBe(tok.maxTokenId + 1);
  });

  it("sizes cl100k_base's embedding table past its special-token gaps", async () => {
    const tok = await loadBpeTokenizer({ encoding: "cl100k_base" });
    expect(tok.maxTokenId).toBeGreaterThanOrEqual(tok.tokenCount - 1);
    expect(tok.isValidId(tok.maxTokenId)).toBe(true);
    for (let id = tok.maxTokenId + 1; id < tok.maxTokenId + 64; id++) expect(tok.isValidId(id)).toBe(false);
  });

  it("handles special-token spellings as configured", async () => {
    const strict = await loadBpeTokenizer();
    expect(() => strict.encode("end <|endoftext|>")).toThrow(/text: expected text without special-token spellings/);
    const lenient = await loadBpeTokenizer({ specialTokens: "text" });
    expect(lenient.decode(lenient.encode("end <|endoftext|>"))).toBe("end <|endoftext|>");
  });

  it("rejects bad ids, text and options", async () => {
    const tok = await loadBpeTokenizer();
    expect(() => tok.decode([1, -1])).toThrow(/ids\[1\]: expected an integer token id in \[0, \d+\] \(cl100k_base\), got -1/);
    expect(() => tok.decode([tok.maxTokenId + 1])).toThrow(/ids\[0\]/);
    expect(() => tok.decode([2.5])).toThrow(/ids\[0\]/);
    const gap = Array.from({ length: tok.maxTokenId }, (_, i) => i).find((i) => !tok.isValidId(i));
    if (gap !== undefined) expect(() => tok.decode([5, gap])).toThrow(/ids\[1\]: expected a token id of cl100k_base/);
    expect(() => tok.encode(null as unknown as string)).toThrow(/text: expected a string, got null/);
    await expect(loadBpeTokenizer({ encoding: "gpt5" as "o200k_base" })).rejects.toThrow(/options\.encoding: expected one of "o200k_base"/);
    await expect(loadBpeTokenizer({ specialTokens: "allow" as "text" })).rejects.toThrow(/options\.specialTokens/);
  });
});
