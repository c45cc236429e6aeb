/**
 * Approximate attention error decreases in m: the relative Frobenius error of FAVOR+ against exact
 * softmax attention (plain loops), averaged over seeds, falls at every step m = 16 → 64 → 256 → 1024,
 * with a log-log slope near the Monte-Carlo rate −½ (fitted slope in [−0.8, −0.3]).
 */
import { randomMatrix, relativeFrobeniusError } from "@randattn/core";
import { describe, expect, it } from "vitest";
import { randomFeatureAttention } from "../../src/features/index.js";
import { exactSoftmaxAttention } from "./reference.js";

describe("random-feature attention converges as m grows", () => {
  it("error falls with m at about the m^{-1/2} rate", () => {
    const d = 16;
    const q = randomMatrix(48, d, { scale: 0.6 }, [8, "q"]);
    const k = randomMatrix(48, d, { scale: 0.6 }, [8, "k"]);
    const v = randomMatrix(48, 8, {}, [8, "v"]);
    const exact = exactSoftmaxAttention(q, k, v);
    const ms = [16, 64, 256, 1024];
    const errs = ms.map((m) => {
      let e = 0;
      for (let s = 0; s < 4; s++)
        e += relativeFrobeniusError(randomFeatureAttention(q, k, v, { numFrequencies: m }, [8, "rf", s]).output, exact);
      return e / 4;
    });
    for (let i = 1; i < errs.length; i++) expect(errs[i], `m=${ms[i]}: ${errs}`).toBeLessThan(errs[i - 1]);
    const xs = ms.map(Math.log);
    const ys = errs.map(Math.log);
    const mx = xs.reduce((a, b) => a + b) / xs.length;
    const my = ys.reduce((a, b) => a + b) / ys.length;
    let sxy = 0;
    let sxx = 0;
    for (let i = 0; i < xs.length; i++) {
      sxy += (xs[i] - mx) * (ys[i] - my);
      sxx += (xs[i] - mx) ** 2;
    }
    const slope = sxy / sxx;
    expect(slope).toBeGreaterThan(-0.8);
    expect(slope).toBeLessThan(-0.3);
  });
});
