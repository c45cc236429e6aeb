// Checks that @huggingface/tokenizers encodes the validation text exactly as our Python
// BPE encoder (scripts/models/bpe.py) does, i.e. that the tokenizer.json we write is read
// by the npm library the way we meant it.
//
//   node scripts/models/check_tokenizer.mjs TOKENIZER_JSON TOKENIZER_CONFIG VALID_TXT PYTHON_IDS_JSON
//
// TOKENIZER_CONFIG: tokenizer_config.json next to tokenizer.json (clean_up_tokenization_spaces
// false: the library's default `true` would turn " !" into "!" when decoding).
// PYTHON_IDS_JSON: {"docs": [[ids...], ...]} from `bpe.py`'s encoder (with BOS), written by
// `bpe.py encode`. The module is resolved from TOKENIZERS_MODULE (a path to its
// dist/tokenizers.mjs) or as the package name.
import { readFileSync } from "node:fs";

const [tokenizerPath, configPath, textPath, idsPath] = process.argv.slice(2);
const mod = await import(process.env.TOKENIZERS_MODULE ?? "@huggingface/tokenizers");
const tokenizerJson = JSON.parse(readFileSync(tokenizerPath, "utf8"));
const tokenizerConfig = JSON.parse(readFileSync(configPath, "utf8"));
const tokenizer = new mod.Tokenizer(tokenizerJson, tokenizerConfig);
const docs = readFileSync(textPath, "utf8").split("\n\x1e\n");
const expected = JSON.parse(readFileSync(idsPath, "utf8")).docs;
if (docs.length !== expected.length) {
  throw new Error(`document count ${docs.length} != ${expected.length}`);
}
let tokens = 0;
let mismatches = 0;
for (let i = 0; i < docs.length; i++) {
  const ids = tokenizer.encode(docs[i]).ids;
  const want = expected[i];
  tokens += want.length;
  const same = ids.length === want.length && ids.every((t, j) => t === want[j]);
  if (!same) {
    mismatches++;
    if (mismatches <= 3) {
      console.log(`doc ${i}: js ${JSON.stringify(ids.slice(0, 20))} py ${JSON.stringify(want.slice(0, 20))}`);
    }
  }
  const text = tokenizer.decode(ids, { skip_special_tokens: true });
  if (text !== docs[i]) {
    mismatches++;
    if (mismatches <= 3) console.log(`doc ${i}: decode differs`);
  }
}
console.log(`${docs.length} documents, ${tokens} tokens, ${mismatches} mismatches`);
process.exit(mismatches === 0 ? 0 : 1);
