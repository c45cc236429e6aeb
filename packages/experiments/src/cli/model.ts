/**
 * `randattn model forward | generate | info` — run a local Hugging Face checkpoint on the exact
 * core (issue 10 §2; the flags are a contract used by other tools, keep them exactly):
 *
 *   randattn model forward --model DIR --tokens IDS.npy --out OUT [--dump q,k,v,weights,latent] [--layers 0,2]
 *   randattn model generate --model DIR --prompt "text" --max-new-tokens 32 [--tokens IDS.npy]
 *   randattn model info --model DIR
 *
 * `forward` writes OUT/logits.npy (N × vocab, float64) and, per dumped layer l and tensor t,
 * OUT/layer{l}.{t}.npy: q, qPre, weights are heads × N × ·; k, kPre, v are KV heads × N × d (H for
 * MLA); latent is N × d_L and also writes layer{l}.rotaryKey.npy (N × d_R); hidden is N × d.
 * Exit codes: 0 ok, 2 bad arguments or bad input files (typed errors name file, tensor, field), 4 I/O.
 */
import { join } from "node:path";
import { type CaptureTensor, FormatError, RandAttnError, ValueError, modelInfo } from "@randattn/core";
import { loadPretrained, openCheckpointStore, readModelConfig, readNpyFile, writeForwardNpy } from "@randattn/core/node";
import { type Command, InvalidArgumentError } from "commander";

/** Tensors `--dump` accepts. */
export const DUMP_TENSORS = ["q", "qPre", "k", "kPre", "v", "weights", "latent", "hidden"] as const;
type DumpTensor = (typeof DUMP_TENSORS)[number];

function list<T extends string>(name: string, allowed?: readonly T[]) {
  return (value: string): T[] => {
    const items = value
      .split(",")
      .map((s) => s.trim())
      .filter((s) => s.length > 0);
    if (items.length === 0) throw new InvalidArgumentError(`${name} must list at least one item`);
    if (allowed)
      for (const i of items)
        if (!allowed.includes(i as T))
          throw new InvalidArgumentError(`${name}: expected some of ${allowed.join(", ")}, got ${JSON.stringify(i)}`);
    return items as T[];
  };
}

function layerList(value: string): number[] {
  return list("--layers")(value).map((s) => {
    if (!/^\d+$/.test(s)) throw new InvalidArgumentError(`--layers: expected non-negative integers, got ${JSON.stringify(s)}`);
    return Number(s);
  });
}

function positiveInt(value: string): number {
  if (!/^\d+$/.test(value)) throw new InvalidArgumentError("--max-new-tokens must be a non-negative integer");
  return Number(value);
}

/** Token ids from a 1-D (or 1 × N) integer .npy file. */
export function readTokenIds(path: string): number[] {
  const a = readNpyFile(path);
  if (!/^[<>|]?[iu][1248]$/.test(a.dtype)) {
    throw new FormatError(`${path}: dtype`, "integer token ids (int32 or int64)", a.dtype);
  }
  const n = a.shape.length === 1 ? a.shape[0] : a.shape.length === 2 && a.shape[0] === 1 ? a.shape[1] : -1;
  if (n <= 0) throw new FormatError(`${path}: shape`, "(N,) or (1, N) with N ≥ 1", `(${a.shape.join(", ")})`);
  return Array.from(a.data);
}

function fail(e: unknown): never {
  if (e instanceof RandAttnError) {
    process.stderr.write(`error: ${e.message}\n`);
    process.exit(2);
  }
  process.stderr.write(`error: ${(e as Error)?.stack ?? String(e)}\n`);
  process.exit(4);
}

const CAPTURE_OF: Record<DumpTensor, CaptureTensor[]> = {
  q: ["q"],
  qPre: ["qPre"],
  k: ["k"],
  kPre: ["kPre"],
  v: ["v"],
  weights: ["weights"],
  latent: ["latent", "rotaryKey"],
  hidden: ["hidden"],
};

interface ForwardFlags {
  model: string;
  tokens: string;
  out: string;
  dump?: DumpTensor[];
  layers?: number[];
}

function forwardCommand(flags: ForwardFlags): void {
  const ids = readTokenIds(flags.tokens);
  const model = loadPretrained(flags.model);
  const layers = flags.layers;
  if (layers) {
    for (const l of layers)
      if (l >= model.numLayers) throw new ValueError("--layers", `layer indices in [0, ${model.numLayers})`, String(l));
  }
  const dump = flags.dump ?? [];
  if (dump.includes("latent") && model.config.family !== "deepseek_v2") {
    throw new ValueError("--dump", "latent only for an MLA model (DeepseekV2ForCausalLM)", model.config.architecture);
  }
  const tensors = [...new Set(dump.flatMap((t) => CAPTURE_OF[t]))];
  const out = model.forward(ids, dump.length ? { capture: { layers, tensors } } : {});
  const files = writeForwardNpy(flags.out, out).length;
  process.stdout.write(`wrote ${files} file(s) to ${flags.out}: logits ${out.logits.rows}×${out.logits.cols}\n`);
}

interface GenerateFlags {
  model: string;
  prompt?: string;
  maxNewTokens: number;
  tokens?: string;
  json?: boolean;
}

function generateCommand(flags: GenerateFlags): void {
  const model = loadPretrained(flags.model);
  let prompt: number[];
  if (flags.tokens) prompt = readTokenIds(flags.tokens);
  else if (flags.prompt !== undefined) {
    if (!model.tokenizer)
      throw new FormatError(join(flags.model, "tokenizer.json"), "a tokenizer.json for --prompt (or pass --tokens IDS.npy)", "absent");
    prompt = model.tokenizer.encode(flags.prompt);
  } else throw new ValueError("--prompt", "a prompt text (or --tokens IDS.npy)", "neither given");
  const ids = model.generate(prompt, { maxNewTokens: flags.maxNewTokens });
  const text = model.tokenizer?.decode(ids);
  if (flags.json) {
    process.stdout.write(`${JSON.stringify({ prompt_ids: prompt, new_ids: ids, text: text ?? null })}\n`);
    return;
  }
  process.stdout.write(text !== undefined ? `${text}\n` : `${ids.join(" ")}\n`);
}

function infoCommand(flags: { model: string; json?: boolean }): void {
  const config = readModelConfig(flags.model);
  const info = modelInfo(config);
  const store = openCheckpointStore(flags.model);
  let stored = 0;
  try {
    for (const name of store.names()) stored += store.shape(name).reduce((a, b) => a * b, 1);
  } finally {
    store.close();
  }
  if (flags.json) {
    process.stdout.write(`${JSON.stringify({ ...info, storedParameters: stored }, null, 2)}\n`);
    return;
  }
  const gib = (b: number) => (b >= 2 ** 30 ? `${(b / 2 ** 30).toFixed(2)} GiB` : `${(b / 2 ** 20).toFixed(2)} MiB`);
  const rows: [string, string][] = [
    ["architecture", `${info.architecture} (${info.attention})`],
    ["layers", String(info.numLayers)],
    ["hidden size", String(info.hiddenSize)],
    ["heads / KV heads", `${info.numHeads} / ${info.numKvHeads}`],
    ["vocabulary", String(info.vocabSize)],
    [
      "parameters",
      `${info.parameters.toLocaleString("en-US")}${stored !== info.parameters ? ` (checkpoint tensors: ${stored.toLocaleString("en-US")})` : ""}`,
    ],
    ["float64 weights", gib(info.float64Bytes)],
    [
      "KV-cache floats per token, per layer",
      `${info.kvFloatsPerTokenPerLayer} (MHA with the same heads: ${info.mhaFloatsPerTokenPerLayer}, ratio ${(info.kvFloatsPerTokenPerLayer / info.mhaFloatsPerTokenPerLayer).toFixed(3)})`,
    ],
    ["KV-cache floats per token, all layers", String(info.kvFloatsPerToken)],
  ];
  for (const [k, v] of rows) process.stdout.write(`${k.padEnd(38)} ${v}\n`);
}

const guard =
  <T>(f: (flags: T) => void) =>
  (flags: T) => {
    try {
      f(flags);
    } catch (e) {
      fail(e);
    }
  };

/** Adds `model forward | generate | info` to the program. */
export function addModelCommand(program: Command): void {
  const model = program
    .command("model")
    .description("run a local Hugging Face checkpoint (Llama, Qwen2, GPT-2, DeepSeek-V2) on the exact core");
  model
    .command("forward")
    .description("logits (and chosen per-layer tensors) of the token ids in IDS.npy, written as .npy files")
    .requiredOption("--model <dir>", "checkpoint folder (config.json, model.safetensors or shards)")
    .requiredOption("--tokens <ids.npy>", "int32/int64 token ids, shape (N,) or (1, N)")
    .requiredOption("--out <dir>", "output folder: logits.npy and layer{l}.{tensor}.npy")
    .option("--dump <tensors>", `comma-separated: ${DUMP_TENSORS.join(",")}`, list("--dump", DUMP_TENSORS))
    .option("--layers <list>", "comma-separated layer indices to dump (default: all)", layerList)
    .action(guard(forwardCommand));
  model
    .command("generate")
    .description("greedy continuation with the KV / latent cache")
    .requiredOption("--model <dir>", "checkpoint folder (with tokenizer.json for --prompt)")
    .option("--prompt <text>", "prompt text (encoded with the checkpoint's tokenizer.json)")
    .option("--max-new-tokens <n>", "tokens to generate", positiveInt, 32)
    .option("--tokens <ids.npy>", "prompt token ids instead of --prompt")
    .option("--json", "print { prompt_ids, new_ids, text } as JSON")
    .action(guard(generateCommand));
  model
    .command("info")
    .description("architecture, sizes, parameter count and KV-cache floats per token (Table 3 style)")
    .requiredOption("--model <dir>", "checkpoint folder")
    .option("--json", "machine-readable output")
    .action(guard(infoCommand));
}
