import * as core from "@randattn/core";
import { Matrix, ShapeError, ValueError, randomMatrix } from "@randattn/core";
import { closeAttentionWorkers, multiHeadAttentionFast, parallelMultiHeadAttention } from "@randattn/core/node";
import { afterAll, describe, expect, it } from "vitest";
import { literalAttention, relMaxError, rnd } from "./helpers.js";

// Workers run the compiled dist/node/worker.js (the test command builds with tsc -b first).
afterAll(async () => {
  await closeAttentionWorkers();
});

function weights(H: number, G: number, dIn: number, d: number, dV: number, dOut: number, tag: string, dInKV = dIn) {
  const w = (r: number, c: number, ...t: (string | number)[]) => randomMatrix(r, c, { scale: 1 / Math.sqrt(r) }, [9, tag, ...t]);
  return {
    queries: Array.from({ length: H }, (_, h) => w(dIn, d, "q", h)),
    keys: Array.from({ length: G }, (_, g) => w(dInKV, d, "k", g)),
    values: Array.from({ length: G }, (_, g) => w(dInKV, dV, "v", g)),
    output: w(H * dV, dOut, "o"),
  };
}

function literalMha(xQ: Matrix, xKV: Matrix, wt: ReturnType<typeof weights>): Matrix {
  const H = wt.queries.length;
  const s = H / wt.keys.length;
  const mm = (a: Matrix, b: Matrix) =>
    Matrix.from(a.rows, b.cols, (i, j) => {
      let t = 0;
      for (let p = 0; p < a.cols; p++) t += a.data[i * a.cols + p] * b.data[p * b.cols + j];
      return t;
    });
  const ys = wt.queries.map((wq, h) => {
    const g = Math.floor(h / s); // ERRATA: contiguous groups
    const q = mm(xQ, wq);
    return literalAttention(q, mm(xKV, wt.keys[g]), mm(xKV, wt.values[g]), 1 / Math.sqrt(q.cols));
  });
  const dV = ys[0].cols;
  const concat = Matrix.from(xQ.rows, H * dV, (i, j) => ys[Math.floor(j / dV)].data[i * dV + (j % dV)]);
  return mm(concat, wt.output);
}

describe("multi-head attention over worker threads", () => {
  it("is bit-for-bit the single-thread result for 1, 2 and 3 workers (GQA, cross-attention)", async () => {
    const xQ = rnd(37, 12, "px");
    const xKV = rnd(53, 10, "pkv");
    const wt = weights(6, 3, 12, 8, 5, 7, "gqa", 10);
    const single = multiHeadAttentionFast(xQ, xKV, wt);
    expect(relMaxError(single, literalMha(xQ, xKV, wt))).toBeLessThan(1e-12);
    for (const workers of [1, 2, 3]) {
      const par = await parallelMultiHeadAttention(xQ, xKV, wt, { workers });
      expect(par.shape).toBe(single.shape);
      expect(par.data.every((v, i) => Object.is(v, single.data[i]))).toBe(true);
    }
  });

  it("float32, streaming and causal options travel to the workers unchanged", async () => {
    const x = rnd(40, 16, "sx");
    const wt = weights(4, 4, 16, 8, 8, 16, "mha");
    const opts = { precision: "float32" as const, mode: "streaming" as const, blockSize: 9, mask: { kind: "causal" as const } };
    const single = multiHeadAttentionFast(x, x, wt, opts);
    const par = await parallelMultiHeadAttention(x, x, wt, { ...opts, workers: 2 });
    expect(par.data.every((v, i) => Object.is(v, single.data[i]))).toBe(true);
  });

  it("agrees with the attention module's multiHeadAttention when it is present", async () => {
    const mha = (core as Record<string, unknown>).multiHeadAttention;
    if (typeof mha !== "function") return; // attention/ not landed yet
    const x = rnd(30, 12, "cx");
    const wt = weights(4, 2, 12, 6, 6, 12, "cmp");
    const ref = (mha as (a: Matrix, b: Matrix, w: unknown) => Matrix)(x, x, wt);
    expect(relMaxError(await parallelMultiHeadAttention(x, x, wt, { workers: 2 }), ref)).toBeLessThan(1e-12);
  });

  it("rejects bad input before starting any worker", async () => {
    const x = rnd(5, 4, "bx");
    const wt = weights(4, 2, 4, 3, 3, 4, "bad");
    await expect(parallelMultiHeadAttention(x, x, wt, { workers: 0 })).rejects.toThrow(/options.workers: expected an integer ≥ 1, got 0/);
    await expect(parallelMultiHeadAttention(x, x, { ...wt, keys: wt.keys.slice(0, 1).concat(wt.keys) })).rejects.toThrow(ValueError);
    await expect(parallelMultiHeadAttention(rnd(5, 3, "b3"), x, wt)).rejects.toThrow(ShapeError);
    await expect(parallelMultiHeadAttention(rnd(5, 3, "b3"), x, wt)).rejects.toThrow(
      /weights.queries\[0\]: expected 3×3 \(d_in\(xQ\) × d_QK\), got 4×3/,
    );
  });
});
