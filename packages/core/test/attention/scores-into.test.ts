// attentionScores / attentionWeights with a lent buffer (`into`, issue 14): the same bits as a fresh
// array on the fused WebAssembly path and on the JavaScript loops (the scalar backend, a dot kernel,
// a pairwise κ — the one path that leaves masked entries unwritten and relies on the buffer being
// zeroed first), with masks of each form and rows with no allowed key, whatever the buffer held
// before and however long it is; the result is a view of it; a buffer of the wrong type or too short
// is a ShapeError naming `into`. And core's Scratch lender.
import { describe, expect, it } from "vitest";
import {
  type AttentionOptions,
  ShapeError,
  attentionScores,
  attentionWeights,
  dotKernel,
  pairwiseKernel,
  randomMatrix,
  setKernelBackend,
} from "@randattn/core";
import { FUSED_MIN_WORK, Scratch } from "@randattn/core/internal";

const same = (a: Float64Array, b: Float64Array) => a.length === b.length && a.every((x, i) => Object.is(x, b[i]));

describe("attentionWeights / attentionScores into a lent buffer", () => {
  const q = randomMatrix(24, 16, {}, [34, "q"]);
  const k = randomMatrix(40, 16, {}, [34, "k"]);
  const n = q.rows * k.rows;
  // Query rows 3 and 17 have no allowed key (kept as zero rows under onEmptyRow "zero").
  const sets = Array.from({ length: q.rows }, (_, i) =>
    i === 3 || i === 17 ? [] : Array.from({ length: 5 + i }, (_, j) => (7 * j + i) % k.rows),
  );
  const allowed = { mask: { kind: "allowed", sets }, onEmptyRow: "zero" } as const;
  const gaussian = pairwiseKernel((a, b) => {
    let d2 = 0;
    for (let p = 0; p < a.length; p++) d2 += (a[p] - b[p]) ** 2;
    return Math.exp(-d2 / 32);
  }, "gaussian");
  const cases: [string, AttentionOptions | undefined, "auto" | "scalar"][] = [
    ["softmax (fused path)", undefined, "auto"],
    ["softmax, causal", { mask: { kind: "causal" } }, "auto"],
    ["softmax, empty rows", allowed, "auto"],
    ["softmax, causal, multiplicative", { mask: { kind: "causal" }, maskForm: "multiplicative" }, "auto"],
    ["softmax, scalar backend (JavaScript loop), causal", { mask: { kind: "causal" } }, "scalar"],
    ["softmax, scalar backend, empty rows, multiplicative", { ...allowed, maskForm: "multiplicative" }, "scalar"],
    ["a dot kernel (JavaScript loop)", { kernel: dotKernel((s) => Math.max(s, 0) + 0.25) }, "auto"],
    ["a dot kernel, empty rows", { ...allowed, kernel: dotKernel((s) => Math.max(s, 0) + 0.25) }, "auto"],
    ["a pairwise κ", { kernel: gaussian }, "auto"],
    ["a pairwise κ, causal", { kernel: gaussian, mask: { kind: "causal" } }, "auto"],
    ["a pairwise κ, empty rows, multiplicative", { ...allowed, kernel: gaussian, maskForm: "multiplicative" }, "auto"],
  ];

  it("the problem is large enough for the fused path", () => expect(n * 16).toBeGreaterThanOrEqual(FUSED_MIN_WORK));

  it.each(cases)("%s: the same bits as a fresh array, written over garbage, as a view of the buffer", (_, options, backend) => {
    const previous = setKernelBackend(backend);
    try {
      check(options);
    } finally {
      setKernelBackend(previous);
    }
  });

  const check = (options: AttentionOptions | undefined) => {
    const fresh = attentionWeights(q, k, options);
    for (const extra of [0, 37]) {
      const into = new Float64Array(n + extra).fill(Number.NaN);
      const w = attentionWeights(q, k, options, into);
      expect(w.data.buffer).toBe(into.buffer);
      expect(w.rows * w.cols).toBe(n);
      expect(same(w.data, fresh.data)).toBe(true);
      const s = attentionScores(q, k, options, into);
      const sFresh = attentionScores(q, k, options);
      expect(same(s.scores.data, sFresh.scores.data)).toBe(true);
      expect(same(s.normalizer, sFresh.normalizer)).toBe(true);
      expect(same(s.rowShift, sFresh.rowShift)).toBe(true);
      if (extra > 0) expect(Number.isNaN(into[n])).toBe(true); // nothing past N_Q·N_KV is touched
    }
  };

  it("a buffer of the wrong type or too short: ShapeError naming into", () => {
    const bad = [new Float32Array(n), new Float64Array(n - 1), [] as unknown as Float64Array];
    for (const into of bad) {
      expect(() => attentionWeights(q, k, undefined, into)).toThrow(ShapeError);
      expect(() => attentionScores(q, k, undefined, into)).toThrow(/^into: expected /);
    }
    expect(() => attentionWeights(q, k, undefined, new Float64Array(n - 1))).toThrow(
      `into: expected a Float64Array of at least ${n} floats (N_Q·N_KV), got length ${n - 1}`,
    );
  });
});

describe("Scratch", () => {
  it("lends one buffer again and again, grown when needed", () => {
    const s = new Scratch(100);
    const a = s.lend(10, (b) => b);
    expect(a.length).toBe(10);
    expect(s.lend(8, (b) => b)).toBe(a);
    const c = s.lend(50, (b) => b);
    expect(c.length).toBe(50);
    expect(s.lend(10, (b) => b)).toBe(c);
  });

  it("a nested use or one above maxFloats gets a fresh array; the lender is free again after a throw", () => {
    const s = new Scratch(100);
    const outer = s.lend(10, (b) => b);
    s.lend(10, (b) => {
      expect(b).toBe(outer);
      const inner = s.lend(10, (x) => x);
      expect(inner).not.toBe(outer);
      expect(inner.length).toBe(10);
    });
    expect(s.lend(101, (b) => b)).not.toBe(outer);
    expect(() =>
      s.lend(10, () => {
        throw new Error("boom");
      }),
    ).toThrow("boom");
    expect(s.lend(10, (b) => b)).toBe(outer);
  });
});
