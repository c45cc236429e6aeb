/**
 * Hugging Face checkpoint folders on disk: `config.json`, `model.safetensors` or shards with
 * `model.safetensors.index.json`, optional `tokenizer.json` / `tokenizer_config.json`. Safetensors
 * files are opened with a descriptor; the header is read first, then each tensor with one `readSync`
 * at its offsets — a file is never read whole into memory or into a string.
 */
import { closeSync, existsSync, fstatSync, openSync, readFileSync, readSync, statSync } from "node:fs";
import { join } from "node:path";
import { type PretrainedConfig, parseModelConfig } from "../checkpoint/config.js";
import {
  type ByteSource,
  SHARD_INDEX_FILE,
  SINGLE_FILE,
  SafetensorsFile,
  type TensorStore,
  parseShardIndex,
  safetensorsStore,
} from "../checkpoint/store.js";
import { FormatError, ValueError } from "../errors.js";
import { PretrainedModel } from "../pretrained/model.js";
import { HuggingFaceTokenizer } from "../tokens/huggingface.js";
import { describe } from "../validate.js";

/** A byte source over an open file descriptor. */
class FileSource implements ByteSource {
  readonly size: number;
  constructor(readonly fd: number) {
    this.size = fstatSync(fd).size;
  }
  read(offset: number, length: number): Uint8Array {
    const n = Math.max(0, Math.min(length, this.size - offset));
    const buf = new Uint8Array(n);
    let got = 0;
    while (got < n) {
      const r = readSync(this.fd, buf, got, n - got, offset + got);
      if (r === 0) break;
      got += r;
    }
    return got === n ? buf : buf.subarray(0, got);
  }
}

/** A tensor store over a checkpoint folder, with the descriptors it opened. */
export interface CheckpointStore extends TensorStore {
  /** Closes every file the store opened. */
  close(): void;
}

function readJson(path: string, label: string): unknown {
  let text: string;
  try {
    text = readFileSync(path, "utf8");
  } catch (e) {
    throw new FormatError(label, "a readable file", (e as Error).message);
  }
  try {
    return JSON.parse(text);
  } catch (e) {
    throw new FormatError(label, "JSON", `invalid JSON (${(e as Error).message})`);
  }
}

function checkDir(dir: unknown): asserts dir is string {
  if (typeof dir !== "string" || dir.length === 0) throw new ValueError("dir", "a checkpoint folder path", describe(dir));
  if (!existsSync(dir) || !statSync(dir).isDirectory()) throw new ValueError("dir", "an existing checkpoint folder", dir);
}

/** Opens the safetensors files of a folder (single file or shards). */
export function openCheckpointStore(dir: string): CheckpointStore {
  checkDir(dir);
  const fds: number[] = [];
  const open = (file: string) => {
    const path = join(dir, file);
    if (!existsSync(path)) throw new FormatError(path, "a safetensors file", "absent");
    const fd = openSync(path, "r");
    fds.push(fd);
    return new SafetensorsFile(new FileSource(fd), path);
  };
  const indexPath = join(dir, SHARD_INDEX_FILE);
  const close = () => {
    for (const fd of fds.splice(0)) closeSync(fd);
  };
  try {
    let index: Map<string, string> | undefined;
    if (existsSync(indexPath)) index = parseShardIndex(readFileSync(indexPath, "utf8"), indexPath);
    else if (!existsSync(join(dir, SINGLE_FILE))) {
      throw new FormatError(join(dir, SINGLE_FILE), `a safetensors file (or ${SHARD_INDEX_FILE} with shards)`, "absent");
    }
    return { ...safetensorsStore(dir, open, index), close };
  } catch (e) {
    close();
    throw e;
  }
}

/** Reads and types `DIR/config.json`. @throws FormatError naming the file and field. */
export function readModelConfig(dir: string): PretrainedConfig {
  checkDir(dir);
  const path = join(dir, "config.json");
  if (!existsSync(path)) throw new FormatError(path, "a config.json file", "absent");
  return parseModelConfig(readJson(path, path), path);
}

/** `DIR/tokenizer.json` (with `tokenizer_config.json` when present), or undefined when absent. */
export function readTokenizer(dir: string): HuggingFaceTokenizer | undefined {
  checkDir(dir);
  const path = join(dir, "tokenizer.json");
  if (!existsSync(path)) return undefined;
  const cfgPath = join(dir, "tokenizer_config.json");
  const cfg = existsSync(cfgPath) ? readJson(cfgPath, cfgPath) : {};
  return new HuggingFaceTokenizer(readJson(path, path), cfg, path);
}

/**
 * Loads a Hugging Face checkpoint folder into a runnable model (float64 weights).
 * @param dir folder with config.json and model.safetensors (or shards), optional tokenizer.json.
 * @throws FormatError naming the file, tensor and field for a missing, corrupt or contradictory
 *   file; ValueError when `dir` is not a folder.
 */
export function loadPretrained(dir: string): PretrainedModel {
  const config = readModelConfig(dir);
  const tokenizer = readTokenizer(dir);
  const store = openCheckpointStore(dir);
  try {
    return PretrainedModel.fromStore(config, store, tokenizer);
  } finally {
    store.close();
  }
}
