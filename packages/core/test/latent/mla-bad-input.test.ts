import { describe, expect, it } from "vitest";
import {
  Matrix,
  NonFiniteError,
  Rope,
  ShapeError,
  ValueError,
  initMlaWeights,
  mergeMla,
  mergedMlaAttention,
  mlaAttention,
  mlaToMultiHead,
  randomMatrix,
} from "@randattn/core";

describe("MLA rejects bad input with typed, named errors", () => {
  const cfg = { dIn: 6, numHeads: 2, latentDim: 3, queryLatentDim: 4, headDim: 2 };
  const w = initMlaWeights(cfg, [17, "bad"]);
  const x = randomMatrix(4, 6, {}, [17, "x"]);

  it("initMlaWeights: bad sizes", () => {
    expect(() => initMlaWeights({ ...cfg, numHeads: 0 }, [1])).toThrow(/config.numHeads: expected an integer ≥ 1, got 0/);
    expect(() => initMlaWeights({ ...cfg, ropeDim: 3 }, [1])).toThrow(/config.ropeDim: expected an even width.*got 3/);
    expect(() => initMlaWeights({ ...cfg, latentDim: 2.5 }, [1])).toThrow(ValueError);
  });

  it("wrong input width or empty sequence", () => {
    expect(() => mlaAttention(randomMatrix(4, 5, {}, [1]), x, w)).toThrow(
      /xQ: expected \*×6 \(cols = d_in = weights.queryDown.rows\), got 4×5/,
    );
    expect(() => mergedMlaAttention(x, new Matrix(0, 6), mergeMla(w))).toThrow(ShapeError);
    expect(() => mergedMlaAttention(x, new Matrix(0, 6), mergeMla(w))).toThrow(/xKV: expected at least 1 row/);
  });

  it("inconsistent weights", () => {
    const badKey = { ...w, keyUp: [w.keyUp[0], randomMatrix(4, 2, {}, [1])] };
    expect(() => mlaAttention(x, x, badKey)).toThrow(/weights.keyUp\[1\]: expected 3×2 \(d_L×d_head\), got 4×2/);
    const fewValues = { ...w, valueUp: [w.valueUp[0]] };
    expect(() => mergeMla(fewValues)).toThrow(/weights.valueUp: expected 2 matrices \(one per head\), got 1/);
    const badOut = { ...w, output: randomMatrix(3, 6, {}, [1]) };
    expect(() => mlaToMultiHead(badOut)).toThrow(/weights.output: expected 4×\* \(rows = H·d_V\), got 3×6/);
    const halfRope = { ...w, keyRope: randomMatrix(6, 2, {}, [1]) };
    expect(() => mlaAttention(x, x, halfRope)).toThrow(/weights.queryRope: expected present/);
    const mergedBad = { ...mergeMla(w), scale: -1 };
    expect(() => mergedMlaAttention(x, x, mergedBad)).toThrow(/merged.scale: expected a number > 0, got -1/);
  });

  it("NaN in inputs or weights", () => {
    const xn = x.clone();
    xn.set(2, 1, Number.NaN);
    expect(() => mlaAttention(xn, x, w)).toThrow(NonFiniteError);
    expect(() => mlaAttention(x, xn, w)).toThrow(/xKV: expected finite entries, got NaN at \[2, 1\]/);
    const wn = { ...w, latentDown: w.latentDown.clone() };
    wn.latentDown.set(0, 0, Number.POSITIVE_INFINITY);
    expect(() => mergeMla(wn)).toThrow(/weights.latentDown: expected finite entries, got Infinity at \[0, 0\]/);
  });

  it("RoPE of the wrong width, bad positions, MHA conversion with a rotary part", () => {
    const wr = initMlaWeights({ ...cfg, ropeDim: 4 }, [17, "rope"]);
    expect(() => mlaAttention(x, x, wr, { rope: new Rope(2) })).toThrow(/options.rope: expected a Rope of dim 4/);
    expect(() => mlaAttention(x, x, w, { rope: new Rope(4) })).toThrow(/options.rope: expected a Rope of dim 2 \(naive RoPE/);
    expect(() => mlaAttention(x, x, wr, { rope: new Rope(4), queryPositions: [0, 1] })).toThrow(
      /options.queryPositions: expected length 4 \(one position per row\), got length 2/,
    );
    expect(() => mlaToMultiHead(wr)).toThrow(/weights.keyRope: expected no decoupled rotary part/);
  });
});
