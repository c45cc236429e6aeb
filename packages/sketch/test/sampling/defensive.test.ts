// The ratio estimator with value-dependent sampling and zero value rows (issue 11): the defensive
// mixture (1 − ε)p + ε·uniform makes it consistent. Checked: defaults (ε = 0.1 exactly where
// needed, 0 elsewhere so earlier draws are unchanged), ε = 0 refused there, and consistency —
// the MSE at growing s matches the first-order (delta-method) formula with the mixed p, and its
// log-log slope is −1 (RMSE −½) within its confidence interval. Dropping the mixture leaves a
// bias floor (the zero-value keys never enter Ẑ) that both checks detect.
import { Matrix, ValueError, attentionWeights, randomMatrix } from "@randattn/core";
import { DEFAULT_DEFENSIVE_WEIGHT, sampledAttention, sampledValueProduct, valueSamplingProbabilities } from "@randattn/sketch";
import { describe, expect, it } from "vitest";
import { bonferroniZ, mean, standardError } from "../helpers/stats.js";

const n = 64;
const nQ = 4;
const d = 4;
const dV = 3;
const queries = randomMatrix(nQ, d, { scale: 1.2 }, [90, "q"]);
const keys = randomMatrix(n, d, { scale: 1.2 }, [90, "k"]);
/** 25 % zero value rows (j ≡ 0 mod 4). */
const values = (() => {
  const v = randomMatrix(n, dV, {}, [90, "v"]);
  for (let j = 0; j < n; j += 4) for (let c = 0; c < dV; c++) v.data[j * dV + c] = 0;
  return v;
})();
const P = attentionWeights(queries, keys);
const Y = (() => {
  const y = new Matrix(nQ, dV);
  for (let i = 0; i < nQ; i++)
    for (let j = 0; j < n; j++) for (let c = 0; c < dV; c++) y.data[i * dV + c] += P.data[i * n + j] * values.data[j * dV + c];
  return y;
})();

/** (1/s) Σ_i Σ_k P_ik² ‖V_k − Y_i‖² / p_k, the ratio estimator's first-order MSE. */
function firstOrderMse(p: Float64Array, s: number): number {
  let t = 0;
  for (let i = 0; i < nQ; i++)
    for (let k = 0; k < n; k++) {
      let dist = 0;
      for (let c = 0; c < dV; c++) dist += (values.data[k * dV + c] - Y.data[i * dV + c]) ** 2;
      t += (P.data[i * n + k] ** 2 * dist) / p[k];
    }
  return t / s;
}

describe("defaults", () => {
  it("ε = 0.1 for the ratio estimator with value-norm / optimal; 0 (unchanged p) elsewhere", () => {
    expect(DEFAULT_DEFENSIVE_WEIGHT).toBe(0.1);
    const plain = valueSamplingProbabilities("value-norm", values);
    const est = sampledAttention(queries, keys, values, { samples: 8, scheme: "value-norm" }, [1]);
    for (let j = 0; j < n; j++) expect(est.probabilities[j]).toBeCloseTo(0.9 * plain[j] + 0.1 / n, 15);
    const exact = sampledAttention(queries, keys, values, { samples: 8, scheme: "value-norm", normalizer: "exact" }, [1]);
    expect([...exact.probabilities]).toEqual([...plain]);
    const opt = sampledAttention(queries, keys, values, { samples: 8, scheme: "optimal" }, [1]);
    for (let j = 0; j < n; j++) expect(opt.probabilities[j]).toBeGreaterThanOrEqual(0.1 / n - 1e-18);
    const uni = sampledAttention(queries, keys, values, { samples: 8, scheme: "uniform" }, [1]);
    expect(uni.probabilities.every((p) => p === 1 / n)).toBe(true);
  });
  it("ε = 0 is refused where the ratio estimator needs it; ε outside [0, 1] everywhere", () => {
    expect(() => sampledAttention(queries, keys, values, { samples: 8, scheme: "value-norm", defensiveWeight: 0 }, [1])).toThrow(
      ValueError,
    );
    expect(() => sampledAttention(queries, keys, values, { samples: 8, scheme: "optimal", defensiveWeight: 0 }, [1])).toThrow(ValueError);
    expect(() => sampledValueProduct(P, values, { samples: 8, scheme: "value-norm", normalize: "ratio", defensiveWeight: 0 }, [1])).toThrow(
      ValueError,
    );
    expect(() => sampledAttention(queries, keys, values, { samples: 8, scheme: "uniform", defensiveWeight: 1.5 }, [1])).toThrow(ValueError);
    expect(() =>
      sampledAttention(queries, keys, values, { samples: 8, scheme: "value-norm", normalizer: "exact", defensiveWeight: 0 }, [1]),
    ).not.toThrow();
  });
});

describe("consistency with 25 % zero value rows", () => {
  const sizes = [512, 2048, 8192];
  const T = 120;
  it.each(["value-norm", "optimal"] as const)("%s: MSE = first-order formula (z·SE) and log-log slope −1 within its CI", (scheme) => {
    const logMeans: number[] = [];
    const logSes: number[] = [];
    const z = bonferroniZ(1e-3, 2 * sizes.length + 2);
    for (const s of sizes) {
      const errs: number[] = [];
      let p: Float64Array | null = null;
      for (let t = 0; t < T; t++) {
        const r = sampledAttention(queries, keys, values, { samples: s, scheme }, [91, scheme, s, t]);
        p = r.probabilities;
        let e = 0;
        for (let q = 0; q < Y.data.length; q++) e += (r.output.data[q] - Y.data[q]) ** 2;
        errs.push(e);
      }
      const mse = mean(errs);
      const se = standardError(errs);
      expect(Math.abs(mse - firstOrderMse(p as Float64Array, s))).toBeLessThanOrEqual(z * se);
      logMeans.push(Math.log(mse));
      logSes.push(se / mse);
    }
    const xs = sizes.map(Math.log);
    const xm = mean(xs);
    const sxx = xs.reduce((a, x) => a + (x - xm) ** 2, 0);
    const w = xs.map((x) => (x - xm) / sxx);
    const slope = w.reduce((a, wk, k) => a + wk * logMeans[k], 0);
    const slopeSe = Math.sqrt(w.reduce((a, wk, k) => a + wk * wk * logSes[k] ** 2, 0));
    expect(Math.abs(slope + 1)).toBeLessThanOrEqual(z * slopeSe);
  });
});
