// Issue #6, numerical extremes: softmax and every exact kernel path (materialized, streaming,
// masked, dot kernel, fast float64, multi-head, MLA merged/unmerged, KV-cached decode) stay finite
// and correct for logits up to ±1e4, where the unshifted exp(1e4) would be +∞.
import { describe, expect, it } from "vitest";
import {
  Matrix,
  initMlaWeights,
  initMultiHeadWeights,
  mlaToMultiHead,
  outputProbabilities,
  randomMatrix,
  softmaxRows,
} from "@randattn/core";
import { HEAD_PATHS, LAYER_PATHS } from "./paths.js";
import { allFinite, logitTolerance, maxHeadLogit, maxLogit, relMaxErr, scaled } from "./reference.js";

const TARGET = 1e4;

describe("softmax rows at ±1e4", () => {
  // logits spanning [−1e4, 1e4]: a plain exp overflows, the max-shifted form must not
  const logits = Matrix.fromArray([
    [1e4, 1e4 - 1, -1e4, 0],
    [-1e4, -1e4, -1e4 + 2, -1e4 + 0.5],
    [1e4, 1e4, 1e4, 1e4],
  ]);
  for (const [name, f] of [
    ["softmaxRows", softmaxRows],
    ["outputProbabilities", outputProbabilities],
  ] as const) {
    it(`${name} equals exp(x − max)/Σ exp(x − max), rows sum to 1`, () => {
      const p = f(logits);
      expect(allFinite(p)).toBe(true);
      for (let i = 0; i < logits.rows; i++) {
        const row = logits.toArray()[i];
        const m = Math.max(...row);
        const e = row.map((x) => Math.exp(x - m));
        const z = e.reduce((a, b) => a + b, 0);
        let sum = 0;
        for (let j = 0; j < row.length; j++) {
          expect(Math.abs(p.get(i, j) - e[j] / z)).toBeLessThanOrEqual(4 * Number.EPSILON);
          sum += p.get(i, j);
        }
        expect(Math.abs(sum - 1)).toBeLessThanOrEqual(4 * Number.EPSILON);
      }
      // the plain formula really overflows here: this test exercises the shift
      expect(Math.exp(1e4)).toBe(Number.POSITIVE_INFINITY);
    });
  }
});

describe("single-head paths with max |logit| = 1e4", () => {
  const d = 8;
  const q0 = randomMatrix(6, d, {}, [6, "extreme", "q"]);
  const k0 = randomMatrix(9, d, {}, [6, "extreme", "k"]);
  const v = randomMatrix(9, 3, {}, [6, "extreme", "v"]);
  // rescale Q and K by a so that max |QKᵀ/√d| is exactly 1e4
  const a = Math.sqrt(TARGET / maxLogit(q0, k0, 1 / Math.sqrt(d)));
  const q = scaled(q0, a);
  const k = scaled(k0, a);
  for (const path of HEAD_PATHS) {
    it(`${path.name}: finite and equal to the shifted reference`, () => {
      const y = path.run(q, k, v);
      expect(allFinite(y)).toBe(true);
      const scale = path.name.startsWith("dot kernel") ? 1 : 1 / Math.sqrt(d);
      expect(relMaxErr(y, path.ref(q, k, v))).toBeLessThanOrEqual(logitTolerance(maxLogit(q, k, scale), d));
    });
  }
});

describe("layer paths (MHA/GQA, MLA, decode) with max head |logit| = 1e4", () => {
  const dIn = 8;
  const mha = initMultiHeadWeights({ dIn, numHeads: 4, numKvHeads: 2, headDim: 4, valueDim: 3 }, [6, "extreme", "gqa"]);
  const mla = initMlaWeights({ dIn, numHeads: 2, latentDim: 4, queryLatentDim: 5, headDim: 3 }, [6, "extreme", "mla"]);
  const x0 = randomMatrix(7, dIn, {}, [6, "extreme", "x"]);
  for (const path of LAYER_PATHS) {
    it(`${path.name}: finite and equal to the plain-loop multi-head reference`, () => {
      const w = path.kind === "mha" ? mha : mla;
      const heads = path.kind === "mha" ? mha : mlaToMultiHead(mla);
      // logits scale with x², so x·√(1e4/L) puts the largest head logit at 1e4
      const x = scaled(x0, Math.sqrt(TARGET / maxHeadLogit(x0, heads)));
      const y = path.run(x, w);
      expect(allFinite(y)).toBe(true);
      expect(relMaxErr(y, path.ref(x, w))).toBeLessThanOrEqual(logitTolerance(maxHeadLogit(x, heads), dIn));
    });
  }
});
