import { describe, expect, it } from "vitest";
import { DEEPSEEK_V2, GEMMA3_27B, LLAMA3_70B, type ModelPreset, TABLE3_PRESETS, renderMarkdownTable, table3Rows } from "@randattn/core";

describe("Table 3 from the presets", () => {
  const table = table3Rows();
  const row = (key: string) => {
    const r = table.rows.find((x) => x.key === key);
    if (!r) throw new Error(`no row ${key}`);
    return r.values;
  };

  it("has the paper's specification rows in column order", () => {
    expect(table.header).toEqual(["Parameter", "Llama 3 70B", "Gemma 3 27B", "DeepSeek V2"]);
    expect(row("numLayers")).toEqual([80, 62, 60]);
    expect(row("numHeads")).toEqual([64, 32, 128]);
    expect(row("numKvHeads")).toEqual([8, 16, null]);
    expect(row("dModel")).toEqual([8192, 5376, 5120]);
    expect(row("kvDim")).toEqual([128, 128, 512]);
  });

  it("computes the cache rows from the formulas (ERRATA: both 512 and 576 for DeepSeek V2)", () => {
    expect(row("cachePerTokenPerLayer")).toEqual([2 * 8 * 128, 2 * 16 * 128, 512]);
    expect(row("cachePerTokenPerLayerWithRotaryKey")).toEqual([2 * 8 * 128, 2 * 16 * 128, 512 + 64]);
    expect(row("mhaCachePerTokenPerLayer")).toEqual([2 * 64 * 128, 2 * 32 * 128, 2 * 128 * 128]);
    expect(row("cacheReduction")).toEqual([64 / 8, 32 / 16, (2 * 128 * 128) / 512]);
    expect(row("cachePerToken")).toEqual([80 * 2048, 62 * 4096, 60 * 576]);
    expect(row("embeddingFloats")).toEqual([LLAMA3_70B.vocabSize * 8192, GEMMA3_27B.vocabSize * 5376, DEEPSEEK_V2.vocabSize * 5120]);
    expect(row("cacheBytesAtContext")).toEqual([131072 * 80 * 2048 * 2, 131072 * 62 * 4096 * 2, 131072 * 60 * 576 * 2]);
  });

  it("renders Markdown with separators, '-' for not applicable and × for ratios", () => {
    const md = renderMarkdownTable(table);
    const lines = md.trim().split("\n");
    expect(lines[0]).toBe("| Parameter | Llama 3 70B | Gemma 3 27B | DeepSeek V2 |");
    expect(lines[1]).toBe("| --- | --- | --- | --- |");
    expect(lines).toHaveLength(2 + table.rows.length);
    expect(md).toContain("| Number of key/value heads G | 8 | 16 | - |");
    expect(md).toContain("| 2,048 | 4,096 | 512 |");
    expect(md).toContain("| 2,048 | 4,096 | 576 |");
    expect(md).toContain("| 16,384 | 8,192 | 32,768 |");
    expect(md).toContain("| 8× | 2× | 64× |");
    expect(md).toContain("| 40.00 | 62.00 |");
  });

  it("accepts other presets and options", () => {
    const tiny: ModelPreset = {
      name: "tiny",
      numLayers: 2,
      vocabSize: 10,
      dModel: 8,
      attention: { form: "mqa", dIn: 8, numHeads: 2, headDim: 4 },
      notes: [],
    };
    const t = table3Rows([tiny], { contextLength: 16, dtype: "float32" });
    expect(t.rows.find((r) => r.key === "cachePerTokenPerLayer")?.values).toEqual([8]);
    expect(t.rows.find((r) => r.key === "cacheBytesAtContext")?.values).toEqual([16 * 2 * 8 * 4]);
    expect(TABLE3_PRESETS).toEqual([LLAMA3_70B, GEMMA3_27B, DEEPSEEK_V2]);
  });

  it("rejects bad presets and options", () => {
    expect(() => table3Rows([])).toThrow(/presets: expected a non-empty array/);
    expect(() => table3Rows([{ ...LLAMA3_70B, numLayers: 0 }])).toThrow(/presets\[0\]\.numLayers/);
    expect(() => table3Rows([{ ...LLAMA3_70B, attention: { form: "gqa", dIn: 8, numHeads: 3, numKvHeads: 2, headDim: 4 } }])).toThrow(
      /presets\[0\]\.attention\.numKvHeads: expected a divisor of numHeads = 3, got 2/,
    );
    expect(() => table3Rows(undefined, { contextLength: 0 })).toThrow(/options\.contextLength/);
    expect(() => renderMarkdownTable({ header: ["P", "a"], rows: [{ key: "k", label: "l", values: [1, 2], format: "integer" }] })).toThrow(
      /table\.rows\[0\]\.values: expected length 1/,
    );
  });
});
