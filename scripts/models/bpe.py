"""Pure-Python byte-level BPE (GPT-2 style) trainer, encoder and tokenizer.json writer.

The format is Hugging Face `tokenizers`' tokenizer.json as GPT-2 ships it:
ByteLevel pre-tokenizer (GPT-2 split regex, add_prefix_space false), a BPE model
with `vocab` and `merges`, ByteLevel decoder. Token ids: 0..255 are the 256 bytes
(id = byte value, spelled with GPT-2's bytes_to_unicode table), then one id per
merge in merge order, then the special token `<|endoftext|>` (used as BOS: every
training sequence starts with it; a TemplateProcessing post-processor prepends it,
as Llama 3's tokenizer.json does with <|begin_of_text|>).

Run: /usr/bin/python3 scripts/models/bpe.py CORPUS_DIR OUT_TOKENIZER_JSON [VOCAB_SIZE]
     /usr/bin/python3 scripts/models/bpe.py encode TOKENIZER_JSON TEXT OUT_IDS_JSON
       (ids of each document of TEXT, BOS first, as {"docs": [[...], ...]}, checking that
       decoding gives the text back; input of check_tokenizer.mjs)
"""

import collections
import json
import os
import sys

import regex

# GPT-2's pre-tokenization pattern (tokenizers' ByteLevel use_regex=true).
GPT2_PATTERN = r"""'s|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+"""
SPLIT = regex.compile(GPT2_PATTERN)
SPECIAL = "<|endoftext|>"
DOC_SEP = "\n\x1e\n"


def bytes_to_unicode():
    """GPT-2's reversible byte -> printable unicode character table."""
    bs = list(range(ord("!"), ord("~") + 1)) + list(range(ord("¡"), ord("¬") + 1))
    bs += list(range(ord("®"), ord("ÿ") + 1))
    cs = bs[:]
    n = 0
    for b in range(256):
        if b not in bs:
            bs.append(b)
            cs.append(256 + n)
            n += 1
    return {b: chr(c) for b, c in zip(bs, cs)}


BYTE_CHAR = bytes_to_unicode()
CHAR_BYTE = {c: b for b, c in BYTE_CHAR.items()}


def pretokenize(text):
    """Split with the GPT-2 regex, then map each piece's UTF-8 bytes to byte chars."""
    return ["".join(BYTE_CHAR[b] for b in piece.encode("utf-8")) for piece in SPLIT.findall(text)]


def train(texts, vocab_size):
    """Greedy BPE: repeatedly merge the most frequent adjacent pair (ties: the
    lexicographically smallest pair, so the result is deterministic)."""
    counts = collections.Counter()
    for t in texts:
        counts.update(pretokenize(t))
    words = [list(w) for w in counts]
    freqs = [counts[w] for w in counts]
    pair_counts = collections.Counter()
    where = collections.defaultdict(set)
    for i, w in enumerate(words):
        for a, b in zip(w, w[1:]):
            pair_counts[(a, b)] += freqs[i]
            where[(a, b)].add(i)
    merges = []
    num_merges = vocab_size - 256 - 1
    while len(merges) < num_merges and pair_counts:
        best = max(pair_counts.items(), key=lambda kv: (kv[1], tuple(-ord(c) for c in kv[0][0] + "\0" + kv[0][1])))
        pair = best[0]
        if best[1] < 2:
            break
        merges.append(pair)
        merged = pair[0] + pair[1]
        for i in list(where[pair]):
            w = words[i]
            f = freqs[i]
            for a, b in zip(w, w[1:]):
                pair_counts[(a, b)] -= f
                if pair_counts[(a, b)] <= 0:
                    del pair_counts[(a, b)]
            out = []
            j = 0
            while j < len(w):
                if j + 1 < len(w) and w[j] == pair[0] and w[j + 1] == pair[1]:
                    out.append(merged)
                    j += 2
                else:
                    out.append(w[j])
                    j += 1
            words[i] = out
            for a, b in zip(out, out[1:]):
                pair_counts[(a, b)] += f
                where[(a, b)].add(i)
        del where[pair]
    return merges


class Encoder:
    def __init__(self, vocab, merges):
        self.vocab = vocab
        self.ranks = {tuple(m): r for r, m in enumerate(merges)}
        self.cache = {}

    def bpe(self, word):
        if word in self.cache:
            return self.cache[word]
        parts = list(word)
        while len(parts) > 1:
            best = None
            for k in range(len(parts) - 1):
                r = self.ranks.get((parts[k], parts[k + 1]))
                if r is not None and (best is None or r < best[0]):
                    best = (r, k)
            if best is None:
                break
            a, b = parts[best[1]], parts[best[1] + 1]
            out = []
            k = 0
            while k < len(parts):
                if k + 1 < len(parts) and parts[k] == a and parts[k + 1] == b:
                    out.append(a + b)
                    k += 2
                else:
                    out.append(parts[k])
                    k += 1
            parts = out
        ids = [self.vocab[p] for p in parts]
        self.cache[word] = ids
        return ids

    def encode(self, text, bos=True):
        ids = [self.vocab[SPECIAL]] if bos else []
        for w in pretokenize(text):
            ids.extend(self.bpe(w))
        return ids

    def decode(self, ids):
        inv = {i: t for t, i in self.vocab.items()}
        chars = "".join(inv[i] for i in ids if inv[i] != SPECIAL)
        return bytes(CHAR_BYTE[c] for c in chars).decode("utf-8", errors="replace")


def build_vocab(merges):
    vocab = {BYTE_CHAR[b]: b for b in range(256)}
    for a, b in merges:
        vocab[a + b] = len(vocab)
    vocab[SPECIAL] = len(vocab)
    return vocab


def tokenizer_json(vocab, merges):
    bos_id = vocab[SPECIAL]
    return {
        "version": "1.0",
        "truncation": None,
        "padding": None,
        "added_tokens": [
            {
                "id": bos_id,
                "content": SPECIAL,
                "single_word": False,
                "lstrip": False,
                "rstrip": False,
                "normalized": False,
                "special": True,
            }
        ],
        "normalizer": None,
        "pre_tokenizer": {
            "type": "ByteLevel",
            "add_prefix_space": False,
            "trim_offsets": True,
            "use_regex": True,
        },
        "post_processor": {
            "type": "TemplateProcessing",
            "single": [
                {"SpecialToken": {"id": SPECIAL, "type_id": 0}},
                {"Sequence": {"id": "A", "type_id": 0}},
            ],
            "pair": [
                {"SpecialToken": {"id": SPECIAL, "type_id": 0}},
                {"Sequence": {"id": "A", "type_id": 0}},
                {"SpecialToken": {"id": SPECIAL, "type_id": 1}},
                {"Sequence": {"id": "B", "type_id": 1}},
            ],
            "special_tokens": {SPECIAL: {"id": SPECIAL, "ids": [bos_id], "tokens": [SPECIAL]}},
        },
        "decoder": {
            "type": "ByteLevel",
            "add_prefix_space": True,
            "trim_offsets": True,
            "use_regex": True,
        },
        "model": {
            "type": "BPE",
            "dropout": None,
            "unk_token": None,
            "continuing_subword_prefix": None,
            "end_of_word_suffix": None,
            "fuse_unk": False,
            "byte_fallback": False,
            "ignore_merges": False,
            "vocab": vocab,
            "merges": [f"{a} {b}" for a, b in merges],
        },
    }


def load(path):
    with open(path, encoding="utf-8") as f:
        tj = json.load(f)
    vocab = tj["model"]["vocab"]
    merges = [m.split(" ") for m in tj["model"]["merges"]]
    return Encoder(vocab, merges)


def encode_file(tokenizer_path, text_path, out_path):
    enc = load(tokenizer_path)
    with open(text_path, encoding="utf-8") as f:
        docs = f.read().split(DOC_SEP)
    ids = [enc.encode(d) for d in docs]
    assert all(enc.decode(i) == d for i, d in zip(ids, docs)), "decode(encode(text)) != text"
    with open(out_path, "w") as f:
        json.dump({"docs": ids}, f)
    print(f"{len(docs)} documents, {sum(map(len, ids))} tokens -> {out_path}")


def main():
    if sys.argv[1] == "encode":
        encode_file(*sys.argv[2:5])
        return
    corpus_dir, out_path = sys.argv[1], sys.argv[2]
    vocab_size = int(sys.argv[3]) if len(sys.argv) > 3 else 1024
    with open(f"{corpus_dir}/train.txt", encoding="utf-8") as f:
        docs = f.read().split(DOC_SEP)
    merges = train(docs, vocab_size)
    vocab = build_vocab(merges)
    with open(out_path, "w", encoding="utf-8") as f:
        json.dump(tokenizer_json(vocab, merges), f, ensure_ascii=False, indent=1)
        f.write("\n")
    # tokenizer_config.json as transformers writes it for a PreTrainedTokenizerFast; decoding must not
    # "clean up" spaces before punctuation (the npm library's default would), so say so explicitly.
    config = {
        "add_bos_token": True,
        "bos_token": SPECIAL,
        "clean_up_tokenization_spaces": False,
        "eos_token": SPECIAL,
        "model_max_length": 512,
        "tokenizer_class": "PreTrainedTokenizerFast",
    }
    with open(os.path.join(os.path.dirname(os.path.abspath(out_path)), "tokenizer_config.json"), "w") as f:
        json.dump(config, f, indent=2)
        f.write("\n")
    print(f"vocab {len(vocab)} merges {len(merges)} -> {out_path}")


if __name__ == "__main__":
    main()
