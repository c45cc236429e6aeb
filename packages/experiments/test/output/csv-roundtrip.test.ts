import { parse } from "csv-parse/sync";
import { describe, expect, it } from "vitest";
import {
  expandPlan,
  formatNumber,
  type JournalRecord,
  loadConfigObject,
  parseNumber,
  planTasks,
  resultColumns,
  resultsCsv,
  toCsv,
} from "@randattn/experiments/internal";
import { tinyConfig } from "../helpers.js";

describe("CSV output parses back to the same values", () => {
  it("numbers: shortest round-trip text gives back the identical double", () => {
    const xs = [0.1 + 0.2, 1 / 3, 1e-300, 5e-324, 1.7976931348623157e308, 123456789012345680000, -2.5e-7, 2 ** 53 + 2];
    for (const x of xs) expect(parseNumber(formatNumber(x))).toBe(x);
    expect(formatNumber(-0)).toBe("0");
    expect([formatNumber(Number.NaN), formatNumber(Infinity), formatNumber(-Infinity), formatNumber(null)]).toEqual([
      "nan",
      "inf",
      "-inf",
      "",
    ]);
    expect(Number.isNaN(parseNumber("nan"))).toBe(true);
    expect([parseNumber("inf"), parseNumber("-inf"), parseNumber("")]).toEqual([Infinity, -Infinity, null]);
  });

  it("fields with commas, quotes and line breaks survive", () => {
    const rows = [["a,b", 'say "hi"', "two\nlines", "plain"]];
    expect(parse(toCsv(["w", "x", "y", "z"], rows), { columns: false })).toEqual([["w", "x", "y", "z"], ...rows]);
  });

  it("results.csv of a plan parses back to its records", () => {
    const plan = expandPlan(loadConfigObject(tinyConfig(), "/tmp", "c.yaml"));
    const tasks = planTasks(plan);
    const records = new Map<string, JournalRecord>();
    tasks.forEach((t, i) => {
      const failed = i === 3;
      records.set(t.key, {
        type: "task",
        key: t.key,
        index: t.index,
        status: failed ? "failed" : "ok",
        error: failed ? 'ValueError: keys: expected "4×3", got 2×3, oops' : "",
        metrics: {
          rel_frobenius_error: failed ? null : 1 / (i + 3),
          rel_spectral_error: Math.PI * i,
          max_abs_error: Infinity,
          mean_kl_divergence: null,
        },
        flops: 1e21 + i,
        floatsStored: 40 * i,
        wallMs: 1,
        setupMs: 1,
        session: "s",
      });
    });
    const rows = parse(resultsCsv(plan, tasks, records), { columns: true }) as Record<string, string>[];
    expect(Object.keys(rows[0])).toEqual(resultColumns(plan));
    rows.forEach((row, i) => {
      const r = records.get(tasks[i].key)!;
      expect(row.status).toBe(r.status);
      expect(row.error).toBe(r.error);
      expect(parseNumber(row.rel_frobenius_error)).toBe(r.metrics.rel_frobenius_error);
      expect(parseNumber(row.rel_spectral_error)).toBe(r.metrics.rel_spectral_error);
      expect(parseNumber(row.max_abs_error)).toBe(Infinity);
      expect(parseNumber(row.flops)).toBe(r.flops);
      expect(Number(row.trial)).toBe(tasks[i].trial);
      expect(row.cell).toBe(plan.cells[tasks[i].cell].id);
    });
  });
});
