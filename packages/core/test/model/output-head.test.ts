import { describe, expect, it } from "vitest";
import {
  Matrix,
  NonFiniteError,
  NumericalError,
  ShapeError,
  ValueError,
  greedyToken,
  initEmbedding,
  initOutputHead,
  outputLogits,
  outputProbabilities,
  randomMatrix,
} from "@randattn/core";
import { relDiff } from "./helpers.js";

describe("output head: logits over the vocabulary and softmax", () => {
  const d = 5;
  const V = 7;
  const E = initEmbedding(V, d, {}, [101, "E"]);
  const h = randomMatrix(3, d, {}, [101, "h"]);
  it("tied: logits[i, v] = ⟨h_i, E_v⟩", () => {
    const lit = Matrix.from(3, V, (i, v) => {
      let s = 0;
      for (let j = 0; j < d; j++) s += h.get(i, j) * E.table.get(v, j);
      return s;
    });
    expect(relDiff(outputLogits(h, initOutputHead(d, V, { tied: true }, [1]), E).data, lit.data)).toBeLessThan(1e-14);
  });
  it("untied with bias: logits = h W + b", () => {
    const head = { ...initOutputHead(d, V, { tied: false }, [101, "W"]), bias: Float64Array.from({ length: V }, (_, v) => v / 10) };
    const W = head.weight as Matrix;
    const lit = Matrix.from(3, V, (i, v) => {
      let s = head.bias[v];
      for (let j = 0; j < d; j++) s += h.get(i, j) * W.get(j, v);
      return s;
    });
    expect(relDiff(outputLogits(h, head).data, lit.data)).toBeLessThan(1e-14);
  });
  it("softmax rows: exp(ℓ_v)/Σ exp(ℓ), finite for logits of ±1e4; greedy = argmax, lowest index on ties", () => {
    const logits = Matrix.fromArray([
      [1, 2, 3],
      [1e4, -1e4, 1e4],
    ]);
    const p = outputProbabilities(logits);
    const z = Math.exp(1) + Math.exp(2) + Math.exp(3);
    expect(relDiff(p.row(0), [Math.exp(1) / z, Math.exp(2) / z, Math.exp(3) / z])).toBeLessThan(1e-15);
    expect(Array.from(p.row(1))).toEqual([0.5, 0, 0.5]);
    expect(greedyToken(logits, 0)).toBe(2);
    expect(greedyToken(logits, 1)).toBe(0);
  });
  it("bad input", () => {
    expect(() => outputLogits(h, initOutputHead(d, V, { tied: true }, [1]))).toThrow(
      "embedding: expected the token Embedding (the head is tied), got undefined",
    );
    expect(() => outputLogits(randomMatrix(2, 4, {}, [1]), initOutputHead(d, V, { tied: true }, [1]), E)).toThrow(ShapeError);
    expect(() => outputLogits(randomMatrix(2, 4, {}, [1]), initOutputHead(d, V, { tied: false }, [1]))).toThrow(
      "head.weight: expected 4×* (rows = hidden.cols), got 5×7",
    );
    const bad = { ...initOutputHead(d, V, { tied: false }, [1]), weight: Matrix.from(d, V, () => Number.NaN) };
    expect(() => outputLogits(h, bad)).toThrow(NumericalError);
    expect(() => outputProbabilities(Matrix.fromArray([[Number.NaN]]))).toThrow(NonFiniteError);
    expect(() => greedyToken(Matrix.zeros(2, 3), 2)).toThrow("row: expected an integer in [0, 1], got 2");
    expect(() => initOutputHead(0, V, { tied: true }, [1])).toThrow(ValueError);
  });
});
