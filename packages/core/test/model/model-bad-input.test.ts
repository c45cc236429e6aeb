import { describe, expect, it } from "vitest";
import {
  ShapeError,
  ValueError,
  createDecoderState,
  decoderOnlyForward,
  decoderOnlyStep,
  encoderDecoderForward,
  greedyGenerate,
  greedyGenerateSeq2Seq,
  initDecoderOnly,
  initEncoderDecoder,
  initEncoderOnly,
} from "@randattn/core";

const base = { vocabSize: 10, numLayers: 1, dModel: 4, numHeads: 2, dHidden: 8, maxPositions: 6 };

describe("models reject bad config values naming the field", () => {
  it("config", () => {
    expect(() => initDecoderOnly({ ...base, vocabSize: 0 }, [1])).toThrow("config.vocabSize: expected an integer ≥ 1, got 0");
    expect(() => initDecoderOnly({ ...base, numLayers: 1.5 }, [1])).toThrow("config.numLayers: expected an integer ≥ 1, got 1.5");
    expect(() => initDecoderOnly({ ...base, positional: "alibi" as never }, [1])).toThrow(
      'config.positional: expected one of "sinusoidal", "learned", "rope", "none", got "alibi"',
    );
    expect(() => initDecoderOnly({ ...base, rope: {} }, [1])).toThrow('config.rope: expected undefined unless positional is "rope"');
    expect(() => initEncoderOnly({ ...base, numKvHeads: 3 }, [1])).toThrow("config.numKvHeads: expected a divisor of numHeads = 2, got 3");
    expect(() => initDecoderOnly({ ...base, tieEmbeddings: 1 as never }, [1])).toThrow("config.tieEmbeddings: expected a boolean, got 1");
    expect(() => initEncoderDecoder({ ...base, sourceVocabSize: -1 }, [1])).toThrow("config.sourceVocabSize");
  });
});

describe("models reject bad inputs", () => {
  const gpt = initDecoderOnly(base, [2]);
  const t5 = initEncoderDecoder(base, [2]);
  it("token ids: empty, out of range, non-integer, too long for the positional table", () => {
    expect(() => decoderOnlyForward(gpt, [])).toThrow("ids: expected at least 1 token id, got an empty sequence");
    expect(() => decoderOnlyForward(gpt, [1, 10])).toThrow("ids[1]: expected an integer token id in [0, 9], got 10");
    expect(() => decoderOnlyForward(gpt, [0.5])).toThrow(ValueError);
    expect(() => decoderOnlyForward(gpt, [1, 2, 3, 4, 5, 6, 7])).toThrow(ShapeError);
    expect(() => decoderOnlyForward(gpt, [1, 2, 3, 4, 5, 6, 7])).toThrow(
      "ids: expected at most 6 tokens (maxPositions = 6, 0 already placed), got 7 tokens",
    );
    expect(() => encoderDecoderForward(t5, [1], [])).toThrow("targetIds: expected at least 1 token id");
  });
  it("wrong model kind, wrong state", () => {
    expect(() => decoderOnlyForward(t5 as never, [1])).toThrow(
      'model: expected a decoder-only model (initDecoderOnly), got model kind "encoder-decoder"',
    );
    expect(() => greedyGenerate(t5 as never, [1], { maxNewTokens: 1 })).toThrow(ValueError);
    const other = initDecoderOnly({ ...base, numLayers: 2 }, [3]);
    expect(() => decoderOnlyStep(gpt, createDecoderState(other), [1])).toThrow("state.caches: expected 1 caches (one per layer), got 2");
  });
  it("generation options", () => {
    expect(() => greedyGenerate(gpt, [1], { maxNewTokens: 0 })).toThrow("options.maxNewTokens: expected an integer ≥ 1, got 0");
    expect(() => greedyGenerate(gpt, [1, 2], { maxNewTokens: 6 })).toThrow(
      "prompt: expected length + options.maxNewTokens − 1 ≤ maxPositions = 6, got 2 + 6 − 1 = 7",
    );
    expect(() => greedyGenerate(gpt, [1], { maxNewTokens: 2, stopToken: 10 })).toThrow(
      "options.stopToken: expected an integer in [0, 9], got 10",
    );
    expect(() => greedyGenerateSeq2Seq(t5, [1, 2], { maxNewTokens: 2, startToken: -1 })).toThrow("options.startToken");
    expect(() => greedyGenerateSeq2Seq(t5, [1, 2], { maxNewTokens: 2, startToken: 0, sourceLength: 3 })).toThrow(
      "options.sourceLength: expected an integer in [1, 2], got 3",
    );
  });
});
