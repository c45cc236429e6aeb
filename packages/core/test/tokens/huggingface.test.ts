import { describe, expect, it } from "vitest";
import { FormatError, HuggingFaceTokenizer } from "@randattn/core";

// Hand-built tokenizer.json files in the two layouts real checkpoints use, with encodings worked
// out by hand from the merges (so the test checks @huggingface/tokenizers reads the format as
// Hugging Face's Rust tokenizers does, not merely that it round-trips).

/** GPT-2's bytes_to_unicode: the printable character standing for each byte. */
function byteChars(): string[] {
  const bs: number[] = [];
  for (let b = 33; b <= 126; b++) bs.push(b);
  for (let b = 161; b <= 172; b++) bs.push(b);
  for (let b = 174; b <= 255; b++) bs.push(b);
  const cs = [...bs];
  let n = 0;
  for (let b = 0; b < 256; b++) {
    if (!bs.includes(b)) {
      bs.push(b);
      cs.push(256 + n++);
    }
  }
  const out = new Array<string>(256);
  bs.forEach((b, i) => {
    out[b] = String.fromCodePoint(cs[i]);
  });
  return out;
}

function byteLevelBpe() {
  const chars = byteChars();
  const vocab: Record<string, number> = {};
  chars.forEach((c, b) => {
    vocab[c] = b;
  });
  const merges = ["h e", "l l", "he ll", "hell o", "Ġ w", "o r", "Ġw or", "l d", "Ġwor ld"];
  merges.forEach((m, i) => {
    vocab[m.replace(" ", "")] = 256 + i;
  });
  vocab["<|endoftext|>"] = 265;
  const bl = { type: "ByteLevel", add_prefix_space: false, trim_offsets: true, use_regex: true };
  return {
    version: "1.0",
    truncation: null,
    padding: null,
    added_tokens: [
      { id: 265, content: "<|endoftext|>", single_word: false, lstrip: false, rstrip: false, normalized: false, special: true },
    ],
    normalizer: null,
    pre_tokenizer: bl,
    post_processor: bl,
    decoder: bl,
    model: {
      type: "BPE",
      dropout: null,
      unk_token: null,
      continuing_subword_prefix: "",
      end_of_word_suffix: "",
      fuse_unk: false,
      byte_fallback: false,
      vocab,
      merges,
    },
  };
}

function sentencePieceBpe() {
  const vocab: Record<string, number> = { "<unk>": 0, "<s>": 1, "</s>": 2 };
  for (let b = 0; b < 256; b++) vocab[`<0x${b.toString(16).toUpperCase().padStart(2, "0")}>`] = 3 + b;
  let id = 259;
  for (const c of ["▁", "h", "e", "l", "o", "w", "r", "d"]) vocab[c] = id++;
  const merges = ["▁ h", "l l", "▁h e", "▁he ll", "▁hell o", "▁ w", "o r", "▁w or", "l d", "▁wor ld"];
  for (const m of merges) vocab[m.replace(" ", "")] = id++;
  const special = (i: number, content: string) => ({
    id: i,
    content,
    single_word: false,
    lstrip: false,
    rstrip: false,
    normalized: false,
    special: true,
  });
  return {
    version: "1.0",
    truncation: null,
    padding: null,
    added_tokens: [special(0, "<unk>"), special(1, "<s>"), special(2, "</s>")],
    normalizer: {
      type: "Sequence",
      normalizers: [
        { type: "Prepend", prepend: "▁" },
        { type: "Replace", pattern: { String: " " }, content: "▁" },
      ],
    },
    pre_tokenizer: null,
    post_processor: {
      type: "TemplateProcessing",
      single: [{ SpecialToken: { id: "<s>", type_id: 0 } }, { Sequence: { id: "A", type_id: 0 } }],
      pair: [{ SpecialToken: { id: "<s>", type_id: 0 } }, { Sequence: { id: "A", type_id: 0 } }, { Sequence: { id: "B", type_id: 1 } }],
      special_tokens: { "<s>": { id: "<s>", ids: [1], tokens: ["<s>"] } },
    },
    decoder: {
      type: "Sequence",
      decoders: [
        { type: "Replace", pattern: { String: "▁" }, content: " " },
        { type: "ByteFallback" },
        { type: "Fuse" },
        { type: "Strip", content: " ", start: 1, stop: 0 },
      ],
    },
    model: {
      type: "BPE",
      dropout: null,
      unk_token: "<unk>",
      continuing_subword_prefix: null,
      end_of_word_suffix: null,
      fuse_unk: true,
      byte_fallback: true,
      vocab,
      merges,
    },
  };
}

describe("HuggingFaceTokenizer (tokenizer.json via @huggingface/tokenizers)", () => {
  it("byte-level BPE (GPT-2 / Llama 3 / Qwen2 layout): merges, Ġ spaces, raw bytes", () => {
    const t = new HuggingFaceTokenizer(byteLevelBpe());
    expect(t.vocabSize).toBe(266);
    // "hello" → he, ll, hell, hello; " world" → Ġw, or, Ġwor, ld, Ġworld
    expect(t.encode("hello world")).toEqual([259, 264]);
    // "hold": only "l d" applies
    expect(t.encode("hold")).toEqual([104, 111, 263]);
    // é is UTF-8 C3 A9: two byte tokens
    expect(t.encode("é")).toEqual([0xc3, 0xa9]);
    expect(t.decode([259, 264, 0xc3, 0xa9])).toBe("hello worldé");
    expect(t.encode("hi<|endoftext|>")).toEqual([104, 105, 265]);
  });

  it("SentencePiece BPE (Llama 2 layout): ▁ prefix, BOS from the template, byte fallback", () => {
    const t = new HuggingFaceTokenizer(sentencePieceBpe());
    const id = (s: string) => sentencePieceBpe().model.vocab[s];
    expect(t.encode("hello world")).toEqual([1, id("▁hello"), id("▁world")]);
    expect(t.encode("hello", { addSpecialTokens: false })).toEqual([id("▁hello")]);
    // é is not in the vocabulary: its UTF-8 bytes <0xC3><0xA9>
    expect(t.encode("hé", { addSpecialTokens: false })).toEqual([id("▁h"), 3 + 0xc3, 3 + 0xa9]);
    expect(t.decode([id("▁h"), 3 + 0xc3, 3 + 0xa9, id("▁world")])).toBe("hé world");
  });

  it("rejects what is not a tokenizer.json with a FormatError", () => {
    expect(() => new HuggingFaceTokenizer(null)).toThrow(FormatError);
    expect(() => new HuggingFaceTokenizer({ model: { type: "NoSuchModel" } })).toThrow(FormatError);
  });
});
