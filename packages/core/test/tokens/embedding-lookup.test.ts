import { describe, expect, it } from "vitest";
import { Embedding, Matrix, NonFiniteError, ShapeError, ValueError, initEmbedding, randomMatrix } from "@randattn/core";

describe("Embedding lookup (§1: token T_i ↦ row E_i)", () => {
  const table = randomMatrix(7, 5, {}, [1, "embedding-test"]);
  const emb = new Embedding(table);

  it("is row selection", () => {
    const ids = [3, 0, 6, 3, 1];
    const x = emb.lookup(ids);
    expect(x.rows).toBe(ids.length);
    expect(x.cols).toBe(5);
    for (let i = 0; i < ids.length; i++) for (let j = 0; j < 5; j++) expect(x.get(i, j)).toBe(table.get(ids[i], j));
    expect(emb.lookup(new Int32Array([6])).data).toEqual(table.row(6));
    expect(emb.lookup([]).shape).toBe("0×5");
    expect([emb.vocabSize, emb.dim]).toEqual([7, 5]);
    // A copy: writing to the result leaves E untouched.
    x.data[0] = 1e9;
    expect(table.get(3, 0)).not.toBe(1e9);
  });

  it("rejects out-of-range and non-integer ids with a clear error", () => {
    expect(() => emb.lookup([0, 7])).toThrow(/ids\[1\]: expected an integer token id in \[0, 6\] \(vocabSize = 7\), got 7/);
    expect(() => emb.lookup([-1])).toThrow(ValueError);
    expect(() => emb.lookup([1.5])).toThrow(/ids\[0\]/);
    expect(() => emb.lookup([Number.NaN])).toThrow(/ids\[0\]/);
    expect(() => emb.lookup(null as unknown as number[])).toThrow(/ids: expected an array of token ids/);
  });

  it("validates the table", () => {
    expect(() => new Embedding(new Matrix(0, 4))).toThrow(ShapeError);
    expect(() => new Embedding([[1, 2]] as unknown as Matrix)).toThrow(/table: expected a Matrix/);
    const bad = Matrix.fromArray([[1, Number.NaN]]);
    expect(() => new Embedding(bad)).toThrow(NonFiniteError);
    expect(new Embedding(bad, { allowNonFinite: true }).vocabSize).toBe(1);
  });

  it("initEmbedding is seeded and has N(0, std²) entries", () => {
    const a = initEmbedding(200, 50, {}, [7, "E"]);
    const b = initEmbedding(200, 50, {}, [7, "E"]);
    expect(a.table.data).toEqual(b.table.data);
    expect(initEmbedding(200, 50, {}, [8, "E"]).table.data).not.toEqual(a.table.data);
    const std = 0.5;
    const e = initEmbedding(200, 50, { std }, [7, "E"]);
    const n = e.table.data.length;
    let sum = 0;
    let sq = 0;
    for (const v of e.table.data) {
      sum += v;
      sq += v * v;
    }
    // Mean has sd std/√n; the sample variance of n normals has sd σ²·√(2/n): 5-sigma bounds.
    expect(Math.abs(sum / n)).toBeLessThan((5 * std) / Math.sqrt(n));
    expect(Math.abs(sq / n - std * std)).toBeLessThan(5 * std * std * Math.sqrt(2 / n));
    expect(() => initEmbedding(0, 4, {}, [1])).toThrow(/vocabSize: expected an integer ≥ 1, got 0/);
    expect(() => initEmbedding(4, 4, { std: -1 }, [1])).toThrow(/options\.std: expected a number > 0/);
  });
});
