import { describe, expect, it } from "vitest";
import { LatentCache, Rope, concatRows, initMlaWeights, mergeMla, mlaAttention, mlaDecode, randomMatrix, sliceRows } from "@randattn/core";
import { literalMla, relErr } from "../latent/literal.js";

// MLA with a latent cache: decoding in merged form = full causal MLA (unmerged, and the literal formula).
describe("latent-cache decoding = full causal MLA", () => {
  const n = 7;
  const x = randomMatrix(n, 10, {}, [23, "x"]);
  const schedules: Record<string, number[]> = {
    "token by token": [1, 1, 1, 1, 1, 1, 1],
    "prefill 4, then single tokens": [4, 1, 1, 1],
  };

  for (const ropeDim of [0, 4]) {
    for (const pairing of ["interleaved", "half"] as const) {
      if (ropeDim === 0 && pairing === "half") continue;
      const label = ropeDim === 0 ? "no RoPE" : `decoupled RoPE d_R=${ropeDim} (${pairing})`;
      it(label, () => {
        const w = initMlaWeights({ dIn: 10, numHeads: 3, latentDim: 5, queryLatentDim: 6, headDim: 4, valueDim: 3, ropeDim }, [
          23,
          "w",
          ropeDim,
        ]);
        const rope = ropeDim > 0 ? new Rope(ropeDim, { pairing }) : undefined;
        const full = mlaAttention(x, x, w, { mask: { kind: "causal" }, rope });
        expect(relErr(full, literalMla(x, x, w, { causal: true, rope }))).toBeLessThan(1e-12);
        const merged = mergeMla(w);
        for (const [name, schedule] of Object.entries(schedules)) {
          for (const algorithm of ["materialized", "streaming"] as const) {
            const cache = new LatentCache({ latentDim: 5, ropeDim, initialCapacity: 2 });
            const outs = [];
            let start = 0;
            for (const t of schedule) {
              outs.push(mlaDecode(sliceRows(x, start, start + t), merged, cache, { rope, algorithm, blockSize: 3 }));
              start += t;
            }
            expect(cache.length).toBe(n);
            expect(relErr(concatRows(outs), full), `${name}, ${algorithm}`).toBeLessThan(1e-12);
          }
        }
      });
    }
  }
});
