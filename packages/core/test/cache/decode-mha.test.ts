import { describe, expect, it } from "vitest";
import {
  KVCache,
  type PositionalRotation,
  Rope,
  concatRows,
  initMultiHeadWeights,
  multiHeadAttention,
  multiHeadDecode,
  randomMatrix,
  sliceRows,
} from "@randattn/core";
import { relErr } from "../latent/literal.js";

// §4: decoding with a KV cache gives the same output as full causal attention over the sequence.
describe("cached decoding = full causal multiHeadAttention", () => {
  const n = 7;
  const dIn = 8;
  const headDim = 4;
  const x = randomMatrix(n, dIn, {}, [22, "x"]);
  const schedules: Record<string, number[]> = {
    "token by token": [1, 1, 1, 1, 1, 1, 1],
    "prefill 3, then single tokens": [3, 1, 1, 1, 1],
    "uneven chunks": [2, 1, 4],
  };
  const ropes: Record<string, PositionalRotation | undefined> = {
    "no RoPE": undefined,
    "RoPE interleaved": new Rope(headDim),
    "RoPE half": new Rope(headDim, { pairing: "half", base: 100 }),
  };

  for (const [variant, numKvHeads] of [
    ["MHA", 4],
    ["GQA", 2],
    ["MQA", 1],
  ] as const) {
    for (const [ropeName, rope] of Object.entries(ropes)) {
      it(`${variant} (G=${numKvHeads}), ${ropeName}`, () => {
        const w = initMultiHeadWeights({ dIn, numHeads: 4, numKvHeads, headDim, valueDim: 3 }, [22, "w", numKvHeads]);
        const full = multiHeadAttention(x, x, w, { mask: { kind: "causal" }, rope });
        for (const [name, schedule] of Object.entries(schedules)) {
          const cache = new KVCache({ numKvHeads, keyDim: headDim, valueDim: 3, initialCapacity: 1 });
          const outs = [];
          let start = 0;
          for (const t of schedule) {
            outs.push(multiHeadDecode(sliceRows(x, start, start + t), w, cache, { rope }));
            start += t;
          }
          expect(cache.length, name).toBe(n);
          expect(relErr(concatRows(outs), full), name).toBeLessThan(1e-12);
        }
      });
    }
  }

  it("the streaming algorithm gives the same decode", () => {
    const w = initMultiHeadWeights({ dIn, numHeads: 4, numKvHeads: 2, headDim }, [22, "w-stream"]);
    const rope = new Rope(headDim);
    const full = multiHeadAttention(x, x, w, { mask: { kind: "causal" }, rope });
    const cache = new KVCache({ numKvHeads: 2, keyDim: headDim, valueDim: headDim });
    const outs = [multiHeadDecode(sliceRows(x, 0, 4), w, cache, { rope, algorithm: "streaming", blockSize: 2 })];
    for (let i = 4; i < n; i++)
      outs.push(multiHeadDecode(sliceRows(x, i, i + 1), w, cache, { rope, algorithm: "streaming", blockSize: 2 }));
    expect(relErr(concatRows(outs), full)).toBeLessThan(1e-12);
  });

  it("without the causal offset the result would differ (the check is not vacuous)", () => {
    const w = initMultiHeadWeights({ dIn, numHeads: 2, headDim }, [22, "w-vacuous"]);
    const full = multiHeadAttention(x, x, w, { mask: { kind: "causal" } });
    const cache = new KVCache({ numKvHeads: 2, keyDim: headDim, valueDim: headDim });
    const prefill = multiHeadDecode(x, w, cache);
    expect(relErr(prefill, full)).toBeLessThan(1e-12);
    const unmasked = multiHeadAttention(x, x, w);
    expect(relErr(unmasked, full)).toBeGreaterThan(1e-3);
  });
});
