// Issue #6, numerical extremes: every exact kernel path stays finite and correct when its inputs
// are scaled by 1e-8 … 1e4 (logits from ≈1e-16 — uniform weights — to ≈1e8 — a hard max).
import { describe, expect, it } from "vitest";
import {
  attention,
  attention32,
  initMlaWeights,
  initMultiHeadWeights,
  mlaToMultiHead,
  randomMatrix,
  streamingAttention,
  streamingAttention32,
} from "@randattn/core";
import { HEAD_PATHS, LAYER_PATHS } from "./paths.js";
import { allFinite, logitTolerance, maxHeadLogit, maxLogit, relMaxErr, scaled } from "./reference.js";

const SCALES = [1e-8, 1e-4, 1, 1e2, 1e4];

describe("single-head paths, Q, K, V scaled by s", () => {
  const d = 6;
  const q0 = randomMatrix(5, d, {}, [7, "scales", "q"]);
  const k0 = randomMatrix(8, d, {}, [7, "scales", "k"]);
  const v0 = randomMatrix(8, 2, {}, [7, "scales", "v"]);
  for (const path of HEAD_PATHS) {
    it(`${path.name}: finite and equal to the reference at every scale`, () => {
      for (const s of SCALES) {
        const [q, k, v] = [scaled(q0, s), scaled(k0, s), scaled(v0, s)];
        const y = path.run(q, k, v);
        expect(allFinite(y), `s = ${s}`).toBe(true);
        const scale = path.name.startsWith("dot kernel") ? 1 : 1 / Math.sqrt(d);
        expect(relMaxErr(y, path.ref(q, k, v)), `s = ${s}`).toBeLessThanOrEqual(logitTolerance(maxLogit(q, k, scale), d));
      }
    });
  }
  it('float32 paths (attention32, streamingAttention32, precision: "float32") stay finite over the same range', () => {
    for (const s of SCALES) {
      const [q, k, v] = [scaled(q0, s), scaled(k0, s), scaled(v0, s)];
      expect(allFinite(attention32(q, k, v)), `s = ${s}`).toBe(true);
      expect(allFinite(streamingAttention32(q, k, v, { blockSize: 3 })), `s = ${s}`).toBe(true);
      expect(allFinite(attention(q, k, v, { precision: "float32" })), `s = ${s}`).toBe(true);
      expect(allFinite(streamingAttention(q, k, v, { precision: "float32", blockSize: 3 })), `s = ${s}`).toBe(true);
    }
  });
});

describe("layer paths (MHA/GQA, MLA, decode), X scaled by s", () => {
  const dIn = 6;
  const mha = initMultiHeadWeights({ dIn, numHeads: 2, numKvHeads: 1, headDim: 3 }, [7, "scales", "mqa"]);
  const mla = initMlaWeights({ dIn, numHeads: 2, latentDim: 3, queryLatentDim: 4, headDim: 2, valueDim: 3 }, [7, "scales", "mla"]);
  const x0 = randomMatrix(6, dIn, {}, [7, "scales", "x"]);
  for (const path of LAYER_PATHS) {
    it(`${path.name}: finite and equal to the reference at every scale`, () => {
      const w = path.kind === "mha" ? mha : mla;
      const heads = path.kind === "mha" ? mha : mlaToMultiHead(mla);
      for (const s of SCALES) {
        const x = scaled(x0, s);
        const y = path.run(x, w);
        expect(allFinite(y), `s = ${s}`).toBe(true);
        expect(relMaxErr(y, path.ref(x, w)), `s = ${s}`).toBeLessThanOrEqual(logitTolerance(maxHeadLogit(x, heads), dIn));
      }
    });
  }
});
