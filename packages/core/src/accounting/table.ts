/**
 * Table 3 of Serret (2026), regenerated from the presets: every figure is computed by the
 * accounting formulas (memory.ts), and the extra rows (cache sizes, reduction factors, bytes)
 * are the study notes' "Memory comparison" made explicit.
 */
import { ValueError } from "../errors.js";
import { assertInteger, assertOneOf, describe, assertOptions } from "../validate.js";
import {
  type StorageDtype,
  attentionWeightFloats,
  bytesPerElement,
  kvCacheFloatsPerToken,
  mhaEquivalentCacheFloatsPerToken,
  modelKvCacheBytes,
} from "./memory.js";
import type { ModelPreset } from "./presets.js";
import { TABLE3_PRESETS } from "./presets.js";
import { resolveAttentionSpec } from "./spec.js";

/** How a row's numbers are printed. */
export type CellFormat = "integer" | "ratio" | "gib";

/** One row of a table: a label and one value per model (`null` = not applicable, printed "-"). */
export interface TableRow {
  /** Stable identifier, e.g. `"cachePerTokenPerLayer"`. */
  readonly key: string;
  /** Human label for the first column. */
  readonly label: string;
  readonly values: readonly (number | null)[];
  readonly format: CellFormat;
}

/** A table: column headers (models) and rows. */
export interface AccountingTable {
  /** First header cell ("Parameter") followed by one header per model. */
  readonly header: readonly string[];
  readonly rows: readonly TableRow[];
}

export interface Table3Options {
  /** Context length N_tokens for the whole-model cache size row. @default 131072 */
  contextLength?: number;
  /** Storage dtype of the whole-model cache size row. @default "bfloat16" */
  dtype?: StorageDtype;
}

/**
 * Table 3 rows for `presets` (default: Llama 3 70B, Gemma 3 27B, DeepSeek V2): the paper's
 * specification rows, then the computed per-token-per-layer cache (Table 3 convention, i.e.
 * DeepSeek-V2's latent only), the cache with the rotary key (ERRATA: 576), the MHA-equivalent
 * cache 2·H·d_head, the reduction factor, the whole-model cache and the attention weight floats.
 */
export function table3Rows(presets: readonly ModelPreset[] = TABLE3_PRESETS, options: Table3Options = {}): AccountingTable {
  assertOptions(options, "options");
  if (!Array.isArray(presets) || presets.length === 0)
    throw new ValueError("presets", "a non-empty array of ModelPreset", describe(presets));
  const contextLength = options.contextLength ?? 131_072;
  assertInteger(contextLength, "options.contextLength");
  const dtype = options.dtype ?? "bfloat16";
  bytesPerElement(dtype);
  presets.forEach((p, i) => {
    if (p === null || typeof p !== "object") throw new ValueError(`presets[${i}]`, "a ModelPreset", describe(p));
    assertInteger(p.numLayers, `presets[${i}].numLayers`);
    assertInteger(p.vocabSize, `presets[${i}].vocabSize`);
    assertInteger(p.dModel, `presets[${i}].dModel`);
    resolveAttentionSpec(p.attention, `presets[${i}].attention`);
  });
  const specs = presets.map((p) => resolveAttentionSpec(p.attention));
  const row = (key: string, label: string, format: CellFormat, f: (p: ModelPreset, i: number) => number | null): TableRow => ({
    key,
    label,
    format,
    values: presets.map(f),
  });
  const latentOnly = (p: ModelPreset) => kvCacheFloatsPerToken(p.attention, { includeRotaryKey: false });
  const rows: TableRow[] = [
    row("numLayers", "Number of layers", "integer", (p) => p.numLayers),
    row("numHeads", "Number of heads N_heads", "integer", (_p, i) => specs[i].numHeads),
    row("numKvHeads", "Number of key/value heads G", "integer", (_p, i) => (specs[i].form === "mla" ? null : specs[i].numKvHeads)),
    row("dModel", "Hidden dimension d_in = d_out", "integer", (p) => p.dModel),
    row("kvDim", "KV dimension d_head = d_QK (d_L for MLA)", "integer", (_p, i) =>
      specs[i].form === "mla" ? specs[i].latentDim : specs[i].headDim,
    ),
    row("ropeDim", "Decoupled rotary dimension d_R", "integer", (_p, i) => (specs[i].form === "mla" ? specs[i].ropeDim : null)),
    row("vocabSize", "Vocabulary size N_T", "integer", (p) => p.vocabSize),
    row("embeddingFloats", "Embedding floats N_T·d", "integer", (p) => p.vocabSize * p.dModel),
    row("cachePerTokenPerLayer", "KV cache floats / token / layer (Table 3: MLA latent only)", "integer", latentOnly),
    row("cachePerTokenPerLayerWithRotaryKey", "KV cache floats / token / layer incl. rotary key", "integer", (p) =>
      kvCacheFloatsPerToken(p.attention),
    ),
    row("mhaCachePerTokenPerLayer", "Same layer as MHA: 2·N_heads·d_head", "integer", (p) => mhaEquivalentCacheFloatsPerToken(p.attention)),
    row(
      "cacheReduction",
      "Cache reduction vs MHA (latent only)",
      "ratio",
      (p) => mhaEquivalentCacheFloatsPerToken(p.attention) / latentOnly(p),
    ),
    row("cachePerToken", "KV cache floats / token, all layers", "integer", (p) => p.numLayers * kvCacheFloatsPerToken(p.attention)),
    row("cacheBytesAtContext", `KV cache at ${contextLength.toLocaleString("en-US")} tokens, ${dtype} (GiB)`, "gib", (p) =>
      modelKvCacheBytes(p.attention, contextLength, p.numLayers, dtype),
    ),
    row("attentionWeightsPerLayer", "Attention weight floats / layer", "integer", (p) => attentionWeightFloats(p.attention)),
  ];
  return { header: ["Parameter", ...presets.map((p) => p.name)], rows };
}

function formatCell(v: number | null, format: CellFormat): string {
  if (v === null) return "-";
  switch (format) {
    case "integer":
      return v.toLocaleString("en-US", { maximumFractionDigits: 0 });
    case "ratio":
      return `${v.toLocaleString("en-US", { maximumFractionDigits: 2 })}×`;
    case "gib":
      return (v / 2 ** 30).toLocaleString("en-US", { minimumFractionDigits: 2, maximumFractionDigits: 2 });
  }
}

/**
 * Renders a table as GitHub Markdown: numbers with thousands separators (en-US), ratios with a
 * trailing ×, byte rows in GiB (2 decimals), `null` as "-".
 */
export function renderMarkdownTable(table: AccountingTable): string {
  if (table === null || typeof table !== "object" || !Array.isArray(table.header) || !Array.isArray(table.rows)) {
    throw new ValueError("table", "an AccountingTable { header, rows }", describe(table));
  }
  const width = table.header.length;
  const lines = [`| ${table.header.join(" | ")} |`, `| ${table.header.map(() => "---").join(" | ")} |`];
  const rows: readonly TableRow[] = table.rows;
  rows.forEach((r, i) => {
    if (r.values.length !== width - 1)
      throw new ValueError(`table.rows[${i}].values`, `length ${width - 1} (one per model)`, `length ${r.values.length}`);
    assertOneOf(r.format, `table.rows[${i}].format`, ["integer", "ratio", "gib"] as const);
    lines.push(`| ${r.label} | ${r.values.map((v) => formatCell(v, r.format)).join(" | ")} |`);
  });
  return `${lines.join("\n")}\n`;
}
