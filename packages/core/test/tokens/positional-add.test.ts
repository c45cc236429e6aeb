import { describe, expect, it } from "vitest";
import {
  type Matrix,
  NonFiniteError,
  ShapeError,
  addPositional,
  embedTokens,
  initEmbedding,
  initLearnedPositionalEmbedding,
  randomMatrix,
  sinusoidalPositionalEncoding,
} from "@randattn/core";

describe("adding positional encodings to token embeddings", () => {
  const x = randomMatrix(4, 6, {}, [3, "x"]);
  const pe = sinusoidalPositionalEncoding(10, 6);

  it("adds row offset + i of the table to row i", () => {
    for (const offset of [0, 3, 6]) {
      const y = addPositional(x, pe, { offset });
      for (let i = 0; i < 4; i++) for (let j = 0; j < 6; j++) expect(y.get(i, j)).toBe(x.get(i, j) + pe.get(offset + i, j));
    }
  });

  it("works with a seeded learned table and inside embedTokens", () => {
    const learned = initLearnedPositionalEmbedding(16, 6, {}, [3, "pos"]);
    expect(learned.table.data).toEqual(initLearnedPositionalEmbedding(16, 6, {}, [3, "pos"]).table.data);
    const E = initEmbedding(20, 6, {}, [3, "tok"]);
    const ids = [4, 19, 0];
    const scale = Math.sqrt(6);
    const y = embedTokens(ids, E, { positional: learned, offset: 2, scale });
    for (let i = 0; i < 3; i++)
      for (let j = 0; j < 6; j++) {
        expect(y.get(i, j)).toBe(scale * E.table.get(ids[i], j) + learned.table.get(2 + i, j));
      }
    expect(embedTokens(ids, E).data).toEqual(E.lookup(ids).data);
  });

  it("rejects width mismatches, too-short tables and non-finite inputs", () => {
    expect(() => addPositional(x, sinusoidalPositionalEncoding(10, 5))).toThrow(/positional: expected 4×6 \(cols = x\.cols\), got 10×5/);
    expect(() => addPositional(x, pe, { offset: 7 })).toThrow(
      /positional: expected at least 11 rows \(offset 7 \+ 4 positions\), got 10×6/,
    );
    expect(() => addPositional(x, pe, { offset: 7 })).toThrow(ShapeError);
    const bad = x.clone();
    bad.data[5] = Number.POSITIVE_INFINITY;
    expect(() => addPositional(bad, pe)).toThrow(NonFiniteError);
    expect(() => addPositional(x, [[1]] as unknown as Matrix)).toThrow(/positional: expected a Matrix/);
    expect(() => embedTokens([0], {} as never)).toThrow(/embedding: expected an Embedding/);
  });
});
