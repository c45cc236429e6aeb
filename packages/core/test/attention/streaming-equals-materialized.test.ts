// Streaming (online-softmax) exact attention = materialized attention to ≤ 1e-12 relative, for
// every kernel, mask kind, mask form, odd sizes and block sizes down to 1 — and as a fast-check
// property over random shapes, masks and tile sizes.
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import {
  type AttentionOptions,
  type Kernel,
  Matrix,
  type Mask,
  attention,
  dotKernel,
  pairwiseKernel,
  randomMatrix,
  streamingAttention,
} from "@randattn/core";
import { relErr } from "./reference.js";

const kernels: [string, Kernel][] = [
  ["softmax", { kind: "softmax" }],
  ["softmax scale 3 (peaked)", { kind: "softmax", scale: 3 }],
  ["dot relu+0.1", dotKernel((s) => Math.max(s, 0) + 0.1)],
  ["dot s²+1", dotKernel((s) => s * s + 1)],
  ["pairwise", pairwiseKernel((a, b) => Math.exp(-Math.abs(a[0] - b[0])))],
];

function masksFor(nQ: number, nKV: number): [string, Mask | undefined][] {
  return [
    ["none", undefined],
    ["causal", { kind: "causal" }],
    ["causal offset 2", { kind: "causal", offset: 2 }],
    ["padding", { kind: "padding", keyLength: Math.max(1, nKV - 3) }],
    ["allowed", { kind: "allowed", sets: Array.from({ length: nQ }, (_, i) => [i % nKV, (5 * i + 2) % nKV, nKV - 1]) }],
    ["dense", { kind: "dense", allowed: Matrix.from(nQ, nKV, (i, j) => ((i + 2 * j) % 3 === 0 || j === 0 ? 1 : 0)) }],
  ];
}

describe("streaming = materialized", () => {
  const nQ = 13;
  const nKV = 17;
  const q = randomMatrix(nQ, 5, {}, [29, "q"]);
  const k = randomMatrix(nKV, 5, {}, [29, "k"]);
  const v = randomMatrix(nKV, 3, {}, [29, "v"]);
  for (const [kname, kernel] of kernels) {
    for (const [mname, mask] of masksFor(nQ, nKV)) {
      it(`${kname}, mask ${mname}`, () => {
        for (const maskForm of ["additive", "multiplicative"] as const) {
          const opts: AttentionOptions = { kernel, mask, maskForm, onEmptyRow: "zero" };
          const ref = attention(q, k, v, opts);
          for (const [bq, bk] of [
            [1, 1],
            [2, 3],
            [4, 5],
            [13, 17],
            [64, 256],
          ]) {
            const y = streamingAttention(q, k, v, { ...opts, queryBlockSize: bq, blockSize: bk });
            expect(relErr(y, ref)).toBeLessThan(1e-12);
          }
        }
      });
    }
  }

  it("default block sizes at N = 300 (several key blocks, causal tiles skipped)", () => {
    const qq = randomMatrix(300, 16, {}, [30, "q"]);
    const kk = randomMatrix(600, 16, {}, [30, "k"]);
    const vv = randomMatrix(600, 8, {}, [30, "v"]);
    for (const mask of [undefined, { kind: "causal" as const }]) {
      expect(relErr(streamingAttention(qq, kk, vv, { mask }), attention(qq, kk, vv, { mask }))).toBeLessThan(1e-12);
    }
  });

  it("property: random shapes, masks and tile sizes", () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 1, max: 12 }),
        fc.integer({ min: 1, max: 12 }),
        fc.integer({ min: 1, max: 6 }),
        fc.integer({ min: 1, max: 4 }),
        fc.integer({ min: 1, max: 13 }),
        fc.integer({ min: 1, max: 13 }),
        fc.integer({ min: 0, max: 5 }),
        fc.integer({ min: 0, max: 1000 }),
        (nQ, nKV, d, dV, bq, bk, maskIndex, seed) => {
          const qq = randomMatrix(nQ, d, { scale: 2 }, [31, "q", seed]);
          const kk = randomMatrix(nKV, d, { scale: 2 }, [31, "k", seed]);
          const vv = randomMatrix(nKV, dV, {}, [31, "v", seed]);
          const [, mask] = masksFor(nQ, nKV)[maskIndex];
          const opts: AttentionOptions = { mask, onEmptyRow: "zero" };
          const y = streamingAttention(qq, kk, vv, { ...opts, queryBlockSize: bq, blockSize: bk });
          expect(relErr(y, attention(qq, kk, vv, opts))).toBeLessThan(1e-12);
        },
      ),
      { seed: 2026, numRuns: 200 },
    );
  });
});
