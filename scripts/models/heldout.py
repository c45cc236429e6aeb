"""The shipped held-out sample models/heldout.txt (issue 10 §4).

The first validation fortunes of corpus.py's split (the same shuffle seed and 90/10 split the
checkpoints were trained with, so no sample was seen in training), up to 6,000 characters, written
in fortune-file format: documents separated by a line holding a single '%'. RandAttn's `model`
problem tokenizes each document with BOS in front, as train.py does.

Run: /usr/bin/python3 scripts/models/corpus.py /tmp/corpus
     /usr/bin/python3 scripts/models/heldout.py /tmp/corpus/valid.txt models/heldout.txt
"""

import sys

DOC_SEP = "\n\x1e\n"  # corpus.py's separator
MAX_CHARS = 6000


def main():
    src, dst = sys.argv[1], sys.argv[2]
    with open(src, encoding="utf-8") as f:
        docs = f.read().split(DOC_SEP)
    out, n = [], 0
    for d in docs:
        if n + len(d) > MAX_CHARS:
            break
        out.append(d)
        n += len(d) + 3
    with open(dst, "w", encoding="utf-8") as f:
        f.write("\n%\n".join(out) + "\n")
    print(f"{len(out)} documents, {n} characters")


if __name__ == "__main__":
    main()
