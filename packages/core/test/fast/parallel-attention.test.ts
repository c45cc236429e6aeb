// One attention call with its query rows over 2 worker threads (issue 14): bit-for-bit attention()
// (and streamingAttention() in streaming mode), the same typed errors naming the same rows, and the
// pool cleaned up. Workers run the compiled dist/node/worker.js (the test command builds first).
import {
  type AttentionOptions,
  Matrix,
  NonFiniteError,
  NumericalError,
  ShapeError,
  ValueError,
  attention,
  setKernelBackend,
  streamingAttention,
} from "@randattn/core";
import {
  type ParallelAttentionOptions,
  attentionParallel,
  attentionSplit,
  attentionWorkerCount,
  closeAttentionWorkers,
} from "@randattn/core/node";
import { afterAll, describe, expect, it } from "vitest";
import { rnd } from "./helpers.js";

afterAll(async () => {
  await closeAttentionWorkers();
});

// N_Q = 600 rows: two blocks of ≥ 256, and N_Q·N_KV·(d + d_V) = 4.3M ≥ MIN_PARALLEL_WORK, so the
// default call is split (asserted below: a test of the split path must not pass on the fallback).
const nQ = 600;
const nKV = 300;
const q = rnd(nQ, 16, "pa-q");
const k = rnd(nKV, 16, "pa-k");
const v = rnd(nKV, 8, "pa-v");

const sameBits = (a: Matrix, b: Matrix): boolean => a.shape === b.shape && a.data.every((x, i) => Object.is(x, b.data[i]));

/** Allowed sets with a few empty rows, one of them (row 450) in the second block. */
const sets = Array.from({ length: nQ }, (_, i) =>
  i % 97 === 3 || i === 450 ? [] : Array.from({ length: 1 + ((i * 7) % 40) }, (_, t) => (i * 13 + t * 31) % nKV),
);
const dense = Matrix.from(nQ, nKV, (i, j) => ((i * 31 + j * 17) % 5 < 2 ? 1 : 0));

const cases: [string, AttentionOptions & Pick<ParallelAttentionOptions, "mode" | "blockSize" | "queryBlockSize">][] = [
  ["no mask", {}],
  ["custom softmax scale", { kernel: { kind: "softmax", scale: 0.7 } }],
  ["causal, default offset N_KV − N_Q (300 empty rows → zero)", { mask: { kind: "causal" }, onEmptyRow: "zero" }],
  ["causal, offset 5", { mask: { kind: "causal", offset: 5 } }],
  ["padding", { mask: { kind: "padding", keyLength: 123 } }],
  ["allowed sets with empty rows → zero", { mask: { kind: "allowed", sets }, onEmptyRow: "zero" }],
  ["dense, multiplicative form", { mask: { kind: "dense", allowed: dense }, maskForm: "multiplicative" }],
  ["float32", { precision: "float32" }],
  ["float32, causal offset 5", { precision: "float32", mask: { kind: "causal", offset: 5 } }],
  ["streaming, causal (work-balanced blocks)", { mode: "streaming", mask: { kind: "causal", offset: 5 }, blockSize: 64 }],
  [
    "streaming, float32, padding",
    { mode: "streaming", precision: "float32", mask: { kind: "padding", keyLength: 200 }, queryBlockSize: 64 },
  ],
];

describe("attentionParallel: one call, query rows over 2 workers", () => {
  for (const [label, opts] of cases) {
    it(`${label}: split in two and bit-identical to the single-thread call`, async () => {
      const { mode, blockSize, queryBlockSize, ...attn } = opts;
      const split = attentionSplit(q, k, v, { ...opts, workers: 2 });
      expect(split.reason).toBeUndefined();
      expect(split.bounds).toHaveLength(3);
      const ref = mode === "streaming" ? streamingAttention(q, k, v, { ...attn, blockSize, queryBlockSize }) : attention(q, k, v, attn);
      const y = await attentionParallel(q, k, v, { ...opts, workers: 2 });
      expect(sameBits(y, ref)).toBe(true);
      expect(y.data.buffer).toBeInstanceOf(ArrayBuffer); // a private copy, not the shared buffer
    });
  }

  it("streaming with a causal mask balances work, not rows (late rows see more keys)", () => {
    const { bounds } = attentionSplit(q, k, v, { mode: "streaming", mask: { kind: "causal", offset: 0 }, workers: 2 });
    expect(bounds[0]).toBe(0);
    expect(bounds[2]).toBe(nQ);
    expect(bounds[1]).toBeGreaterThan(nQ / 2); // rows balanced would cut at 300
    expect(attentionSplit(q, k, v, { workers: 2 }).bounds).toEqual([0, 300, 600]);
  });

  it("throws attention's error naming the row of the whole call (row 450 is in the second block)", async () => {
    const mask = { kind: "allowed" as const, sets: sets.map((s, i) => (i === 450 ? [] : s.length ? s : [0])) };
    let expected: unknown;
    try {
      attention(q, k, v, { mask });
    } catch (e) {
      expected = e;
    }
    expect(expected).toBeInstanceOf(NumericalError);
    expect((expected as Error).message).toContain("query row 450");
    await expect(attentionParallel(q, k, v, { mask, workers: 2 })).rejects.toThrow((expected as Error).message);
    await expect(attentionParallel(q, k, v, { mask, workers: 2 })).rejects.toBeInstanceOf(NumericalError);
  });

  it("runs in the calling thread, with attention's result, when the call cannot be split identically", async () => {
    const small = rnd(40, 8, "pa-small");
    expect(attentionSplit(small, small, small, {}).reason).toMatch(/small call/);
    expect(sameBits(await attentionParallel(small, small, small, {}), attention(small, small, small))).toBe(true);
    expect(attentionSplit(q, k, v, { workers: 1 }).reason).toBe("workers: 1");
    const dot: AttentionOptions = { kernel: { kind: "dot", f: (s) => Math.exp(s / 4) } };
    expect(attentionSplit(q, k, v, { ...dot, workers: 2 }).reason).toMatch(/callbacks cannot cross threads/);
    expect(sameBits(await attentionParallel(q, k, v, { ...dot, workers: 2 }), attention(q, k, v, dot))).toBe(true);
    // float32's range would differ between halves (tiny queries in the first one only): since the
    // workers claim blocks of the whole call, each takes the whole call's decision, so the call now
    // splits — and must still give attention's bits.
    const mixed = Matrix.from(nQ, 16, (i, j) => q.data[i * 16 + j] * (i < 300 ? 1e-20 : 1));
    expect(attentionSplit(mixed, k, v, { precision: "float32", workers: 2 }).reason).toBeUndefined();
    const y32 = await attentionParallel(mixed, k, v, { precision: "float32", workers: 2 });
    expect(sameBits(y32, attention(mixed, k, v, { precision: "float32" }))).toBe(true);
    const previous = setKernelBackend("scalar");
    try {
      expect(attentionSplit(q, k, v, { workers: 2 }).reason).toMatch(/backend "scalar"/);
      expect(sameBits(await attentionParallel(q, k, v, { workers: 2 }), attention(q, k, v))).toBe(true);
    } finally {
      setKernelBackend(previous);
    }
  });

  it("rejects bad input with typed errors naming the argument", async () => {
    await expect(attentionParallel(q, k, v, null as never)).rejects.toThrow("options: expected an options object");
    await expect(attentionParallel(q, k, v, { workers: 0 })).rejects.toThrow(/options.workers: expected an integer ≥ 1, got 0/);
    await expect(attentionParallel(q, k, v, { mode: "flash" as never })).rejects.toThrow(ValueError);
    await expect(attentionParallel(q, k, v, { mode: "streaming", blockSize: 0 })).rejects.toThrow(/options.blockSize/);
    await expect(attentionParallel(q, rnd(nKV, 15, "pa-bad"), v, {})).rejects.toBeInstanceOf(ShapeError);
    await expect(attentionParallel(q, k, rnd(nKV - 1, 8, "pa-bad"), {})).rejects.toThrow(/values: expected/);
    const nan = Matrix.from(nQ, 16, (i, j) => (i === 599 && j === 3 ? Number.NaN : q.data[i * 16 + j]));
    await expect(attentionParallel(nan, k, v, {})).rejects.toBeInstanceOf(NonFiniteError);
    await expect(attentionParallel(q, k, v, { mask: { kind: "padding", keyLength: nKV + 1 } })).rejects.toThrow(/options.mask.keyLength/);
    await expect(attentionParallel(q, k, v, { workerUrl: "/nonexistent/worker.js" })).rejects.toThrow();
  });

  it("reuses its shared buffers across calls of other sizes and gives concurrent calls their own", async () => {
    // The first call leaves staging buffers for 600 × 16 queries; a smaller call (other N_Q, N_KV,
    // d and d_V) reuses them with stale entries past its own lengths, and two concurrent calls must
    // not share them: each result must still be its single-thread one bit for bit.
    const q2 = rnd(520, 12, "pa-q2");
    const k2 = rnd(380, 12, "pa-k2");
    const v2 = rnd(380, 10, "pa-v2");
    const first = await attentionParallel(q, k, v, { workers: 2 });
    expect(sameBits(first, attention(q, k, v))).toBe(true);
    expect(attentionSplit(q2, k2, v2, { workers: 2 }).bounds).toHaveLength(3);
    expect(sameBits(await attentionParallel(q2, k2, v2, { workers: 2 }), attention(q2, k2, v2))).toBe(true);
    // The result is the caller's own (not shared) memory: the later call, writing the same staging
    // buffers, left it as it was.
    expect(first.data.buffer).toBeInstanceOf(ArrayBuffer);
    expect(sameBits(first, attention(q, k, v))).toBe(true);
    const causal: AttentionOptions = { mask: { kind: "causal", offset: 5 } };
    const [a, b] = await Promise.all([
      attentionParallel(q, k, v, { ...causal, workers: 2 }),
      attentionParallel(q2, k2, v2, { workers: 2 }),
    ]);
    expect(sameBits(a, attention(q, k, v, causal))).toBe(true);
    expect(sameBits(b, attention(q2, k2, v2))).toBe(true);
  });

  it("keeps its workers in a pool between calls; closeAttentionWorkers ends them and a later call starts anew", async () => {
    await closeAttentionWorkers(); // whatever earlier tests left (a failed worker script included)
    expect(attentionWorkerCount()).toBe(0);
    await attentionParallel(q, k, v, { workers: 2 });
    expect(attentionWorkerCount()).toBe(2);
    await attentionParallel(q, k, v, { workers: 2 });
    expect(attentionWorkerCount()).toBe(2); // reused, not grown
    await closeAttentionWorkers();
    expect(attentionWorkerCount()).toBe(0);
    expect(sameBits(await attentionParallel(q, k, v, { workers: 2 }), attention(q, k, v))).toBe(true);
    await closeAttentionWorkers();
    expect(attentionWorkerCount()).toBe(0);
  });
});

describe("guidedBlockRows: the workers' block sizes (row-task.ts)", () => {
  it("takes qb while work is plentiful, then ≈ remaining / (2·workers) in multiples of 16, and covers every row once", async () => {
    const { guidedBlockRows, GUIDED_MIN_ROWS } = await import("../../src/node/row-task.js");
    for (const [nQ, qb, workers] of [
      [4096, 128, 2],
      [600, 256, 2],
      [1000, 128, 4],
      [17, 128, 2],
    ] as const) {
      const sizes: number[] = [];
      for (let i0 = 0; i0 < nQ; ) {
        const rows = guidedBlockRows(nQ - i0, qb, workers);
        expect(rows).toBeGreaterThanOrEqual(1);
        expect(rows).toBeLessThanOrEqual(Math.min(qb, nQ - i0));
        const share = Math.ceil((nQ - i0) / (2 * workers) / 16) * 16;
        expect(rows).toBe(Math.min(nQ - i0, qb, Math.max(GUIDED_MIN_ROWS, share)));
        sizes.push(rows);
        i0 += rows;
      }
      expect(sizes.reduce((a, b) => a + b, 0)).toBe(nQ);
      for (let b = 1; b < sizes.length; b++) expect(sizes[b]).toBeLessThanOrEqual(sizes[b - 1]); // never grows
      if (nQ === 4096) {
        expect(sizes.slice(0, 20).every((r) => r === qb)).toBe(true); // big blocks first
        expect(sizes[sizes.length - 1]).toBe(GUIDED_MIN_ROWS); // 16 rows last
      }
    }
  });
});
