"""Corpus preparation for the shipped checkpoints (issue 10 §3).

Source: Debian's `fortunes` and `fortunes-min` packages (fortune-mod 1.99.1, Debian
revision 1:1.99.1-7.3), every file in /usr/share/games/fortunes except the two
ASCII-art collections (`art`, `ascii-art`: pictures, not English text). Each
fortune is the text between lines consisting of a single '%'. Overstriking
(char + backspace, used for bold/underline in a few files) is removed. Fortunes are
shuffled with a fixed seed and split 90 % / 10 % into train / validation.

Run with Debian's interpreter: /usr/bin/python3 scripts/models/corpus.py OUTDIR
Writes OUTDIR/train.txt, OUTDIR/valid.txt, OUTDIR/corpus.json (facts, sha256).
"""

import hashlib
import json
import os
import random
import re
import subprocess
import sys

FORTUNE_DIR = "/usr/share/games/fortunes"
EXCLUDED = {"art", "ascii-art"}
SPLIT_SEED = 20261201
VALID_FRACTION = 0.1
# Fortunes longer than this (in characters) are dropped: a handful of very long
# texts (full song lyrics, ASCII tables) would dominate the small corpus.
MAX_CHARS = 1200


def package_version(name):
    out = subprocess.run(
        ["dpkg-query", "-W", "-f=${Version}", name], capture_output=True, text=True
    )
    return out.stdout.strip()


def source_files():
    names = []
    for name in sorted(os.listdir(FORTUNE_DIR)):
        path = os.path.join(FORTUNE_DIR, name)
        if "." in name or os.path.islink(path) or name in EXCLUDED:
            continue
        names.append(name)
    return names


def read_fortunes(path):
    with open(path, "rb") as f:
        text = f.read().decode("utf-8", errors="replace")
    text = re.sub(r".\x08", "", text)  # overstriking: 'X\bX' (bold) / '_\bX' (underline)
    text = text.replace("\r", "")
    items = []
    for block in re.split(r"^%\n", text, flags=re.M):
        block = block.strip("\n")
        if block.strip() and len(block) <= MAX_CHARS:
            items.append(block)
    return items


def main():
    out_dir = sys.argv[1] if len(sys.argv) > 1 else "/tmp/randattn-train/corpus"
    os.makedirs(out_dir, exist_ok=True)
    files = source_files()
    sha_sources = hashlib.sha256()
    fortunes = []
    for name in files:
        path = os.path.join(FORTUNE_DIR, name)
        with open(path, "rb") as f:
            raw = f.read()
        sha_sources.update(name.encode() + b"\0" + raw)
        fortunes.extend(read_fortunes(path))
    rng = random.Random(SPLIT_SEED)
    rng.shuffle(fortunes)
    n_valid = int(len(fortunes) * VALID_FRACTION)
    valid, train = fortunes[:n_valid], fortunes[n_valid:]
    # Documents are separated by a blank line in the text files; the trainer
    # splits on the separator again and puts a BOS token before each document.
    sep = "\n\x1e\n"  # record separator, never present in the fortunes
    train_text = sep.join(train)
    valid_text = sep.join(valid)
    for name, text in (("train.txt", train_text), ("valid.txt", valid_text)):
        with open(os.path.join(out_dir, name), "w", encoding="utf-8") as f:
            f.write(text)
    corpus_sha = hashlib.sha256((train_text + "\n\x1d\n" + valid_text).encode()).hexdigest()
    facts = {
        "packages": {
            "fortunes": package_version("fortunes"),
            "fortunes-min": package_version("fortunes-min"),
        },
        "files": files,
        "num_files": len(files),
        "num_fortunes": len(fortunes),
        "num_train": len(train),
        "num_valid": len(valid),
        "train_chars": len(train_text),
        "valid_chars": len(valid_text),
        "sources_sha256": sha_sources.hexdigest(),
        "corpus_sha256": corpus_sha,
        "split_seed": SPLIT_SEED,
        "max_chars": MAX_CHARS,
    }
    with open(os.path.join(out_dir, "corpus.json"), "w") as f:
        json.dump(facts, f, indent=2)
    print(json.dumps(facts, indent=2))


if __name__ == "__main__":
    main()
