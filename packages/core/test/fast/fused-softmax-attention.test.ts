import {
  type AttentionOptions,
  Matrix,
  NumericalError,
  ValueError,
  attention,
  attentionScores,
  attentionWeights,
  float32AttentionErrorBound,
  getKernelBackend,
  randomMatrix,
  setKernelBackend,
  streamingAttention,
} from "@randattn/core";
import { type TileMask, fusedSoftmaxAttention, prefixTileMask, useFusedSoftmax } from "@randattn/core/internal";
import { afterAll, describe, expect, it } from "vitest";
import { literalAttention, relMaxError, rnd } from "./helpers.js";

// The attention module's softmax paths on the fused WebAssembly driver (S, SIMD exp and A·V in
// kernel memory) against the JavaScript reference loops (backend "scalar") and the literal formula:
// both are the same sums in other orders with a ≤ 1-ulp exp, so ≤ 1e-12 relative.
const TOL = 1e-12;
const previous = getKernelBackend();
afterAll(() => {
  setKernelBackend(previous);
});

function onBoth<T>(f: () => T): { fused: T; js: T } {
  setKernelBackend("wasm");
  expect(useFusedSoftmax(1, 1, 1)).toBe(true);
  const fused = f();
  setKernelBackend("scalar");
  expect(useFusedSoftmax(1, 1, 1)).toBe(false);
  const js = f();
  setKernelBackend("wasm");
  return { fused, js };
}

// (N_Q, N_KV, d_QK, d_V): single row/column, odd sizes, off the 4×4 tile and the 256-key slices.
const SHAPES: [number, number, number, number][] = [
  [1, 1, 1, 1],
  [1, 9, 3, 2],
  [9, 1, 3, 5],
  [7, 13, 5, 3],
  [37, 70, 16, 9],
  [65, 300, 33, 17],
];

const MASKS: [string, (nQ: number, nKV: number) => AttentionOptions["mask"]][] = [
  ["none", () => undefined],
  ["causal", () => ({ kind: "causal" })],
  ["causal offset 2", () => ({ kind: "causal", offset: 2 })],
  ["padding", (_, nKV) => ({ kind: "padding", keyLength: Math.max(1, nKV - 3) })],
  ["allowed sets", (nQ, nKV) => ({ kind: "allowed", sets: Array.from({ length: nQ }, (_, i) => [i % nKV, (3 * i + 1) % nKV, nKV - 1]) })],
  [
    "dense",
    (nQ, nKV) => ({
      kind: "dense",
      allowed: Matrix.fromArray(
        Array.from({ length: nQ }, (_, i) => Array.from({ length: nKV }, (_, j) => ((i + 2 * j) % 3 === 0 || j === 0 ? 1 : 0))),
      ),
    }),
  ],
];

describe("fused softmax attention = JavaScript reference ≤ 1e-12", () => {
  for (const [nQ, nKV, d, dV] of SHAPES) {
    const q = rnd(nQ, d, "fq", nQ, nKV);
    const k = rnd(nKV, d, "fk", nQ, nKV);
    const v = rnd(nKV, dV, "fv", nQ, nKV);
    it(`${nQ}×${nKV}, d_QK ${d}, d_V ${dV}: attention, streaming, weights, scores vs literal`, () => {
      const ref = literalAttention(q, k, v, 1 / Math.sqrt(d));
      const r = onBoth(() => [
        attention(q, k, v),
        streamingAttention(q, k, v),
        streamingAttention(q, k, v, { blockSize: 5, queryBlockSize: 3 }),
        streamingAttention(q, k, v, { blockSize: 1, queryBlockSize: 1 }),
      ]);
      for (const y of [...r.fused, ...r.js]) expect(relMaxError(y, ref)).toBeLessThan(TOL);
      for (let i = 0; i < r.fused.length; i++) expect(relMaxError(r.fused[i], r.js[i])).toBeLessThan(TOL);
      const w = onBoth(() => attentionWeights(q, k));
      expect(relMaxError(w.fused, w.js)).toBeLessThan(TOL);
      const s = onBoth(() => attentionScores(q, k));
      expect(relMaxError(s.fused.scores, s.js.scores)).toBeLessThan(TOL);
      for (let i = 0; i < nQ; i++) {
        expect(s.fused.rowShift[i]).toBe(s.js.rowShift[i]); // the max logit: the same float
        expect(Math.abs(s.fused.normalizer[i] - s.js.normalizer[i])).toBeLessThan(TOL * s.js.normalizer[i]);
      }
    });
  }

  for (const [name, mask] of MASKS) {
    for (const maskForm of ["additive", "multiplicative"] as const) {
      it(`mask ${name}, ${maskForm}: every form, block sizes 1/7/300`, () => {
        const [nQ, nKV, d, dV] = [23, 41, 6, 5];
        const q = rnd(nQ, d, "mq", name);
        const k = rnd(nKV, d, "mk", name);
        const v = rnd(nKV, dV, "mv", name);
        const options: AttentionOptions = { mask: mask(nQ, nKV), maskForm, onEmptyRow: "zero" };
        const r = onBoth(() => [
          attention(q, k, v, options),
          streamingAttention(q, k, v, options),
          streamingAttention(q, k, v, { ...options, blockSize: 1, queryBlockSize: 7 }),
          streamingAttention(q, k, v, { ...options, blockSize: 7, queryBlockSize: 300 }),
          attentionWeights(q, k, options),
          attentionScores(q, k, options).scores,
        ]);
        for (let i = 0; i < r.fused.length; i++) expect(relMaxError(r.fused[i], r.js[i])).toBeLessThan(TOL);
      });
    }
  }

  it("fully masked rows: zero rows with onEmptyRow 'zero', the same NumericalError otherwise", () => {
    const q = rnd(6, 4, "eq");
    const k = rnd(9, 4, "ek");
    const v = rnd(9, 3, "ev");
    const sets = [[0, 1], [], [8], [], [2, 3, 4], [5]];
    const mask = { kind: "allowed" as const, sets };
    const r = onBoth(() => [
      attention(q, k, v, { mask, onEmptyRow: "zero" }),
      streamingAttention(q, k, v, { mask, onEmptyRow: "zero", blockSize: 4 }),
    ]);
    for (const y of r.fused) {
      expect(Array.from(y.data.subarray(3, 6))).toEqual([0, 0, 0]);
      expect(Array.from(y.data.subarray(9, 12))).toEqual([0, 0, 0]);
    }
    for (let i = 0; i < 2; i++) expect(relMaxError(r.fused[i], r.js[i])).toBeLessThan(TOL);
    const s = onBoth(() => attentionScores(q, k, { mask, onEmptyRow: "zero" }));
    expect(s.fused.rowShift[1]).toBe(0);
    expect(s.fused.normalizer[1]).toBe(0);
    setKernelBackend("wasm");
    const message = (f: () => unknown) => {
      try {
        f();
      } catch (e) {
        expect(e).toBeInstanceOf(NumericalError);
        return (e as Error).message;
      }
      throw new Error("did not throw");
    };
    const fusedMsg = message(() => attention(q, k, v, { mask }));
    expect(fusedMsg).toMatch(/query row 1 has no allowed key/);
    expect(message(() => streamingAttention(q, k, v, { mask }))).toBe(fusedMsg);
    setKernelBackend("scalar");
    expect(message(() => attention(q, k, v, { mask }))).toBe(fusedMsg);
  });

  it("logits of ±1e4 stay finite and exact (max-shift), overflow names query and key", () => {
    const q = Matrix.fromArray([
      [100, 1],
      [-100, 1],
    ]);
    const k = Matrix.fromArray([
      [100, 0],
      [100, -1],
      [-100, 0],
      [100, -3],
      [0, 0],
    ]);
    const v = randomMatrix(5, 2, {}, [5, "big-v"]);
    const opts = { kernel: { kind: "softmax" as const, scale: 1 } };
    const r = onBoth(() => [attention(q, k, v, opts), streamingAttention(q, k, v, { ...opts, blockSize: 2 })]);
    for (let i = 0; i < 2; i++) {
      expect(r.fused[i].data.every(Number.isFinite)).toBe(true);
      expect(relMaxError(r.fused[i], r.js[i])).toBeLessThan(1e-15);
    }
    // ⟨q, k⟩ = ∞: 1e200·1e200 overflows in the product.
    const qo = Matrix.fromArray([
      [1, 0],
      [1e200, 1e200],
    ]);
    const ko = Matrix.fromArray([
      [1, 1],
      [1e200, 1e200],
      [0, 1],
    ]);
    const vo = randomMatrix(3, 2, {}, [5, "big-vo"]);
    setKernelBackend("wasm");
    expect(() => attention(qo, ko, vo, opts)).toThrow(NumericalError);
    expect(() => attention(qo, ko, vo, opts)).toThrow(/non-finite at query 1, key 1/);
    expect(() => streamingAttention(qo, ko, vo, opts)).toThrow(/non-finite at query 1, key 1/);
  });

  it("the auto backend takes the fused path from 16³ multiply-adds and keeps JavaScript below", () => {
    setKernelBackend("auto");
    expect(useFusedSoftmax(16, 16, 16)).toBe(true);
    expect(useFusedSoftmax(4, 4, 4)).toBe(false);
    setKernelBackend("wasm");
  });
});

describe("prefix masks skip the masked keys (a causal block stops at its largest limit)", () => {
  // The same call with the mask's limits hidden (tile() only: every block spans all N_KV keys, the
  // masked logits set to −∞) must give the same bits: the skipped columns only ever added +0.
  const hide = (m: TileMask): TileMask => ({ tile: (i0, i1, j0, j1, out) => m.tile(i0, i1, j0, j1, out) });
  const sameBits = (a: Float64Array, b: Float64Array) => a.length === b.length && a.every((x, i) => Object.is(x, b[i]));
  for (const [nQ, nKV, offset] of [
    [150, 150, 0],
    [70, 301, 231],
    [40, 40, -10], // ten rows with no key: zero rows on both sides
  ] as const) {
    for (const precision of ["float64", "float32"] as const) {
      // float32 since stop 20: the prefix form's exp pass works in units of ln 2 (2^(S − m), the
      // logits scaled by log₂e) while the full-width tiles keep the nats form, so there the two agree
      // to float32's error (within twice float32AttentionErrorBound: each side within it of float64)
      // and the prefix form is bit-identical across query blocks.
      it(`${nQ}×${nKV}, causal offset ${offset}, ${precision}: ${precision === "float64" ? "bit-identical to" : "within float32's error of"} the full-width tiles, the same bits for any query block`, () => {
        setKernelBackend("wasm");
        const d = 17;
        const dV = 5;
        const q = rnd(nQ, d, 1);
        const k = rnd(nKV, d, 2);
        const v = rnd(nKV, dV, 3);
        const limit = Int32Array.from({ length: nQ }, (_, i) => Math.max(0, Math.min(nKV, offset + i + 1)));
        const run = (mask: TileMask, queryBlock?: number) => {
          const out = new Float64Array(nQ * dV);
          fusedSoftmaxAttention({
            queries: q.data,
            keys: k.data,
            values: v.data,
            nQ,
            nKV,
            d,
            dV,
            scale: 0.3,
            mask,
            out,
            queryBlock,
            precision,
          });
          return out;
        };
        const full = run(hide(prefixTileMask(limit)));
        const ref = precision === "float64" ? full : run(prefixTileMask(limit));
        for (const qb of [undefined, 1, 7, 64]) expect(sameBits(run(prefixTileMask(limit), qb), ref), `queryBlock ${qb}`).toBe(true);
        expect(ref.some((x) => x !== 0)).toBe(true);
        if (precision === "float32") {
          const bound = float32AttentionErrorBound(q, k, v, { scale: 0.3 }); // over all pairs: ≥ the masked bound
          let diff = 0;
          for (let i = 0; i < ref.length; i++) diff = Math.max(diff, Math.abs(ref[i] - full[i]));
          expect(diff).toBeLessThanOrEqual(2 * bound);
          expect(ref.some((x, i) => x !== full[i])).toBe(true); // the prefix form's own exp really ran
        }
      });
    }
  }
});

describe("strided queries and output (queryStride, outStride): one head's columns of joined blocks", () => {
  // Reading Q_h in place from [Q_0 | Q_1 | …] and writing Y_h into its columns of concat(Y_h) must
  // give the bits of the contiguous call, and leave the other columns untouched.
  const sameBits = (a: Float64Array, b: Float64Array) => a.length === b.length && a.every((x, i) => Object.is(x, b[i]));
  for (const precision of ["float64", "float32"] as const) {
    for (const [nQ, nKV, causal] of [
      [37, 37, true],
      [5, 300, false],
    ] as const) {
      it(`${nQ}×${nKV}, ${causal ? "causal" : "no mask"}, ${precision}`, () => {
        setKernelBackend("wasm");
        const d = 16;
        const dV = 8;
        const H = 3;
        const h = 1;
        const joined = rnd(nQ, H * d + 5, 4); // row stride H·d + 5: heads, then other columns
        const k = rnd(nKV, d, 5);
        const v = rnd(nKV, dV, 6);
        const qh = new Matrix(nQ, d);
        for (let i = 0; i < nQ; i++) qh.data.set(joined.data.subarray(i * joined.cols + h * d, i * joined.cols + (h + 1) * d), i * d);
        const limit = Int32Array.from({ length: nQ }, (_, i) => Math.min(nKV, nKV - nQ + i + 1));
        const mask = causal ? prefixTileMask(limit) : undefined;
        const spec = { keys: k.data, values: v.data, nQ, nKV, d, dV, scale: 0.25, mask, precision };
        const want = new Float64Array(nQ * dV);
        fusedSoftmaxAttention({ ...spec, queries: qh.data, out: want });
        const width = H * dV;
        const concat = new Float64Array(nQ * width).fill(7);
        fusedSoftmaxAttention({
          ...spec,
          queries: joined.data.subarray(h * d),
          queryStride: joined.cols,
          out: concat.subarray(h * dV),
          outStride: width,
        });
        const got = new Float64Array(nQ * dV);
        for (let i = 0; i < nQ; i++) got.set(concat.subarray(i * width + h * dV, i * width + (h + 1) * dV), i * dV);
        expect(sameBits(got, want)).toBe(true);
        for (let i = 0; i < nQ; i++) {
          for (let c = 0; c < width; c++) if (c < h * dV || c >= (h + 1) * dV) expect(concat[i * width + c]).toBe(7);
        }
      });
    }
  }
});

describe("claimBlock: query blocks claimed at run time (attentionParallel's dynamic schedule)", () => {
  // Two calls share one sequence of claims, taking alternate blocks (as two workers might): their
  // rows together must be the whole call's bits, and rows a call did not claim must stay untouched.
  const cases: [string, Partial<Parameters<typeof fusedSoftmaxAttention>[0]>][] = [
    ["float64, bound row shift", {}],
    ["float32, bound row shift", { precision: "float32" }],
    ["float64, causal prefix blocks", { mask: prefixTileMask(Int32Array.from({ length: 700 }, (_, i) => i + 1)) }],
    ["float32, streaming key blocks", { precision: "float32", keyBlock: 64, queryBlock: 48 }],
  ];
  for (const [name, extra] of cases) {
    it(name, () => {
      setKernelBackend("wasm");
      const nQ = 700;
      const nKV = 700;
      const d = 20;
      const dV = 9;
      const q = rnd(nQ, d, 11);
      const k = rnd(nKV, d, 12);
      const v = rnd(nKV, dV, 13);
      const spec = { queries: q.data, keys: k.data, values: v.data, nQ, nKV, d, dV, scale: 0.25, ...extra };
      const whole = new Float64Array(nQ * dV);
      const ref = fusedSoftmaxAttention({ ...spec, out: whole });
      expect(ref).not.toBeNull();
      let next = 0;
      let blocks = 0;
      const outs = [new Float64Array(nQ * dV).fill(Number.NaN), new Float64Array(nQ * dV).fill(Number.NaN)];
      const owner = new Int8Array(nQ).fill(-1);
      const stats = [0, 1].map((me) => {
        next = 0; // each call walks the same sequence and takes its own parity
        blocks = 0;
        return fusedSoftmaxAttention({
          ...spec,
          out: outs[me],
          // Blocks alternate between the two calls: call `me` skips the other's blocks.
          // Sizes shrink as in guided scheduling (qb, qb − 7, …, down to 1 row): row results must not
          // depend on the block sizes either.
          claimBlock: (qb) => {
            for (;;) {
              const i0 = next;
              if (i0 >= nQ) return { start: i0, rows: 0 };
              const rows = Math.min(nQ - i0, Math.max(1, qb - 7 * (blocks % 5)));
              next += rows;
              if (blocks++ % 2 === me) {
                owner.fill(me, i0, i0 + rows);
                return { start: i0, rows };
              }
            }
          },
        });
      });
      expect(owner.every((o) => o === 0 || o === 1)).toBe(true);
      for (let i = 0; i < nQ; i++) {
        const me = owner[i];
        for (let c = 0; c < dV; c++) {
          expect(Object.is(outs[me][i * dV + c], whole[i * dV + c])).toBe(true);
          expect(outs[1 - me][i * dV + c]).toBeNaN(); // untouched
        }
        expect(Object.is(stats[me]!.normalizer[i], ref!.normalizer[i])).toBe(true);
      }
    });
  }
});

describe("claimBlock: a block outside the contract is an error, not a silent overrun", () => {
  it("more rows than qb, or past nQ, throws ValueError naming claimBlock(qb)", () => {
    setKernelBackend("wasm");
    const nQ = 40;
    const q = rnd(nQ, 8, 21);
    const k = rnd(nQ, 8, 22);
    const v = rnd(nQ, 4, 23);
    const spec = { queries: q.data, keys: k.data, values: v.data, nQ, nKV: nQ, d: 8, dV: 4, scale: 0.3, out: new Float64Array(nQ * 4) };
    for (const bad of [
      { start: 0, rows: 41 },
      { start: 30, rows: 16 },
      { start: 0, rows: 0 },
    ]) {
      expect(() => fusedSoftmaxAttention({ ...spec, queryBlock: 40, claimBlock: () => bad })).toThrow(/claimBlock\(qb\)/);
      expect(() => fusedSoftmaxAttention({ ...spec, queryBlock: 40, claimBlock: () => bad })).toThrow(ValueError);
    }
  });
});
