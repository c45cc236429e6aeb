import { describe, expect, it } from "vitest";
import {
  KVCache,
  Matrix,
  NonFiniteError,
  ShapeError,
  ValueError,
  createLayerCache,
  decoderLayer,
  decoderLayerStep,
  encoderLayer,
  initDecoderLayer,
  initEncoderLayer,
  resolveLayerConfig,
} from "@randattn/core";

describe("layer configs reject bad values naming the field", () => {
  it("head counts", () => {
    expect(() => initEncoderLayer({ dModel: 8, numHeads: 4, numKvHeads: 3 }, [1])).toThrow(ValueError);
    expect(() => initEncoderLayer({ dModel: 8, numHeads: 4, numKvHeads: 3 }, [1])).toThrow(
      "config.numKvHeads: expected a divisor of numHeads = 4, got 3",
    );
    expect(() => initEncoderLayer({ dModel: 8, numHeads: 0 }, [1])).toThrow("config.numHeads: expected an integer ≥ 1, got 0");
    expect(() => initEncoderLayer({ dModel: 10, numHeads: 4 }, [1])).toThrow(
      "config.headDim: expected given, or numHeads = 4 dividing dModel = 10, got undefined",
    );
  });
  it("kinds, placement, ε, RoPE on an odd head width", () => {
    expect(() => resolveLayerConfig({ dModel: 8, numHeads: 2, placement: "middle" as never })).toThrow(
      'config.placement: expected one of "post", "pre", "peri", got "middle"',
    );
    expect(() => resolveLayerConfig({ dModel: 8, numHeads: 2, norm: "batch" as never })).toThrow("config.norm");
    expect(() => resolveLayerConfig({ dModel: 8, numHeads: 2, ffn: "mish" as never })).toThrow("config.ffn");
    expect(() => resolveLayerConfig({ dModel: 8, numHeads: 2, epsilon: -1 })).toThrow("config.epsilon: expected a number > 0, got -1");
    expect(() => resolveLayerConfig({ dModel: 6, numHeads: 2, rope: {} })).toThrow(
      "config.headDim: expected an even number (RoPE rotates coordinate pairs), got 3",
    );
    expect(() => initDecoderLayer({ dModel: 4, numHeads: 1, crossAttention: "yes" as never }, [1])).toThrow(
      'config.crossAttention: expected a boolean, got "yes"',
    );
  });
});

describe("layers reject bad inputs", () => {
  const enc = initEncoderLayer({ dModel: 4, numHeads: 2 }, [2]);
  const dec = initDecoderLayer({ dModel: 4, numHeads: 2 }, [2]);
  const gpt = initDecoderLayer({ dModel: 4, numHeads: 2, crossAttention: false }, [2]);
  it("width mismatch, empty, NaN", () => {
    expect(() => encoderLayer(Matrix.zeros(3, 5), enc)).toThrow(ShapeError);
    expect(() => encoderLayer(Matrix.zeros(3, 5), enc)).toThrow("x: expected *×4 (cols = dModel), got 3×5");
    expect(() => encoderLayer(Matrix.zeros(0, 4), enc)).toThrow("x: expected at least 1 row and 1 column, got 0×4");
    expect(() => encoderLayer(Matrix.fromArray([[1, 2, Number.NaN, 4]]), enc)).toThrow(NonFiniteError);
    expect(() => encoderLayer(Matrix.zeros(3, 4), enc, { positions: [0, 1] })).toThrow(
      "options.positions: expected length 3 (x.rows), got length 2",
    );
  });
  it("memory given / missing / wrong width against the layer kind", () => {
    expect(() => decoderLayer(Matrix.zeros(2, 4), dec)).toThrow(
      "memory: expected the encoder output (N_src×dModel) for cross-attention, got undefined",
    );
    expect(() => decoderLayer(Matrix.zeros(2, 4), gpt, Matrix.zeros(3, 4))).toThrow(
      "memory: expected undefined (the layer has no cross-attention: decoder-only), got Matrix 3×4",
    );
    expect(() => decoderLayer(Matrix.zeros(2, 4), dec, Matrix.zeros(3, 6))).toThrow("memory: expected *×4 (cols = dModel), got 3×6");
  });
  it("a cache of the wrong shape or kind", () => {
    const wrong = new KVCache({ numKvHeads: 1, keyDim: 2, valueDim: 2 });
    expect(() => decoderLayerStep(Matrix.zeros(1, 4), gpt, wrong)).toThrow(ShapeError);
    expect(() => decoderLayerStep(Matrix.zeros(1, 4), gpt, {} as never)).toThrow(
      "cache: expected a DecodeCache (createLayerCache), got object",
    );
    const ok = createLayerCache(gpt);
    expect(() => decoderLayerStep(Matrix.zeros(1, 3), gpt, ok)).toThrow("xNew: expected *×4 (cols = dModel), got 1×3");
    expect(ok.length).toBe(0);
  });
});
