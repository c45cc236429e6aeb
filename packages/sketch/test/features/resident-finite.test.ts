/**
 * The WebAssembly-resident random-feature path checks Q, K, V for NaN/±∞ inside the passes that
 * read them (issue 14) instead of upfront: the error must still be the upfront one — the same
 * argument, in the order queries, keys, values — wherever the bad entry sits (a late block, the
 * keys' padding rows), and no NaN may leak into an output instead.
 */
import { NonFiniteError, randomMatrix } from "@randattn/core";
import { describe, expect, it } from "vitest";
import { randomFeatureAttention } from "../../src/features/index.js";

function thrown(f: () => unknown): NonFiniteError {
  try {
    f();
  } catch (e) {
    return e as NonFiniteError;
  }
  throw new Error("did not throw");
}

describe("resident random features: finiteness checked in passing", () => {
  const n = 600;
  const d = 8;
  const base = () => ({
    q: randomMatrix(n, d, { scale: 0.5 }, [31, "q"]),
    k: randomMatrix(n, d, { scale: 0.5 }, [31, "k"]),
    v: randomMatrix(n, 3, {}, [31, "v"]),
  });
  for (const features of ["positive", "hyperbolic", "trig"] as const) {
    it(`${features}: a NaN/∞ in a late block of Q, K or V names that argument`, () => {
      for (const [which, row, bad] of [
        ["queries", 555, Number.NaN],
        ["keys", 400, Number.POSITIVE_INFINITY],
        ["values", 590, Number.NEGATIVE_INFINITY],
      ] as const) {
        const { q, k, v } = base();
        const m = which === "queries" ? q : which === "keys" ? k : v;
        m.data[row * m.cols + 1] = bad;
        const e = thrown(() => randomFeatureAttention(q, k, v, { numFrequencies: 16, features, onNonPositiveNormalizer: "keep" }, [31]));
        expect(e).toBeInstanceOf(NonFiniteError);
        expect(e.argument).toBe(which);
      }
    });
  }
  it("a NaN in the keys' padding rows is still reported; with Q and K both bad, queries first", () => {
    const { q, k, v } = base();
    k.data[590 * d] = Number.NaN;
    const e = thrown(() => randomFeatureAttention(q, k, v, { numFrequencies: 16, mask: { kind: "padding", keyLength: 517 } }, [31]));
    expect(e.argument).toBe("keys");
    v.data[595 * 3] = Number.NaN;
    q.data[599 * d] = Number.NaN;
    expect(thrown(() => randomFeatureAttention(q, k, v, { numFrequencies: 16 }, [31])).argument).toBe("queries");
  });
  it("finite inputs with huge entries (x² overflows) are not mistaken for non-finite ones", () => {
    const { q, k, v } = base();
    q.data[3] = 1e200;
    const r = randomFeatureAttention(q, k, v, { numFrequencies: 16, onNonPositiveNormalizer: "zero" }, [31]);
    expect(r.output.data.every(Number.isFinite)).toBe(true);
  });
});
