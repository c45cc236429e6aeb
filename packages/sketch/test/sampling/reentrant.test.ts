// sampledAttention forms its scores (shared schemes) and P (the "attention" scheme) in buffers the
// thread keeps between calls (core's Scratch, issue 14). A kernel callback may itself call
// sampledAttention: the nested call must get buffers of its own, or it would overwrite the outer
// call's scores — checked by calling it from the kernel's LAST evaluation, when every other score of
// the outer call has been written. Also: calls of another size in between leave the results alone.
import { pairwiseKernel, randomMatrix } from "@randattn/core";
import { sampledAttention } from "@randattn/sketch";
import { describe, expect, it } from "vitest";

const same = (a: Float64Array, b: Float64Array) => a.length === b.length && a.every((x, i) => Object.is(x, b[i]));

describe("sampledAttention's kept buffers", () => {
  const q = randomMatrix(12, 6, { scale: 0.5 }, ["re", "q"]);
  const k = randomMatrix(50, 6, { scale: 0.5 }, ["re", "k"]);
  const v = randomMatrix(50, 3, {}, ["re", "v"]);
  const kappa = (a: Float64Array, b: Float64Array) => {
    let s = 0;
    for (let j = 0; j < a.length; j++) s += a[j] * b[j];
    return Math.exp(s);
  };

  for (const scheme of ["uniform", "attention"] as const) {
    it(`${scheme}: a nested call from the kernel callback leaves the outer result unchanged`, () => {
      const options = { samples: 9, scheme };
      const plain = sampledAttention(q, k, v, { ...options, kernel: pairwiseKernel(kappa) }, ["re", scheme]);
      // κ is evaluated nQ·s times (shared scheme: the sampled columns) or nQ·N times ("attention": P).
      const calls = scheme === "uniform" ? q.rows * 9 : q.rows * k.rows;
      let seen = 0;
      const reentrant = pairwiseKernel((a, b) => {
        // Fewer queries than the outer call: its buffers would fit in the outer call's, unshared.
        if (++seen === calls) sampledAttention(randomMatrix(3, 6, {}, ["re", "q2"]), k, v, options, ["re", "inner"]);
        return kappa(a, b);
      });
      const outer = sampledAttention(q, k, v, { ...options, kernel: reentrant }, ["re", scheme]);
      expect(seen).toBe(calls);
      expect(same(outer.output.data, plain.output.data)).toBe(true);
    });

    it(`${scheme}: calls of other sizes in between change nothing`, () => {
      const options = { samples: 7, scheme };
      const first = sampledAttention(q, k, v, options, ["re", "size"]);
      sampledAttention(randomMatrix(30, 6, {}, ["re", "big"]), k, v, { samples: 40, scheme }, ["re", "big"]);
      sampledAttention(randomMatrix(2, 6, {}, ["re", "small"]), k, v, { samples: 3, scheme }, ["re", "small"]);
      expect(same(sampledAttention(q, k, v, options, ["re", "size"]).output.data, first.output.data)).toBe(true);
    });
  }
});
