import { describe, expect, it } from "vitest";
import { attention, randomMatrix, sliceRows, streamingAttention } from "@randattn/core";
import { literalAttention, relErr } from "../latent/literal.js";

// §4 "streaming attention": the queries are the newest t tokens of a longer key/value sequence.
// With the ERRATA's causal offset N_KV − N_Q, their output is the last t rows of full causal attention.
describe("queries = newest tokens of a longer K/V sequence", () => {
  const n = 9;
  const q = randomMatrix(n, 4, {}, [25, "q"]);
  const k = randomMatrix(n, 4, {}, [25, "k"]);
  const v = randomMatrix(n, 3, {}, [25, "v"]);
  const full = literalAttention(q.toArray(), k.toArray(), v.toArray(), 0.5, 0);

  for (const t of [1, 3, n]) {
    it(`t = ${t}`, () => {
      const newest = sliceRows(q, n - t);
      const want = full.slice(n - t);
      const opts = { kernel: { kind: "softmax" as const, scale: 0.5 }, mask: { kind: "causal" as const } };
      expect(relErr(attention(newest, k, v, opts), want)).toBeLessThan(1e-12);
      expect(relErr(streamingAttention(newest, k, v, { ...opts, blockSize: 2 }), want)).toBeLessThan(1e-12);
    });
  }
});
