// Sampling-based attention: the ratio estimator (numerator and Z from the same keys) is consistent —
// its error shrinks like 1/√s — and the exact-Z variant is unbiased for Y = Z⁻¹AV.
import { Matrix, attention, attentionScores, randomMatrix } from "@randattn/core";
import { describe, expect, it } from "vitest";
import { sampledAttention, sampledValueProduct } from "@randattn/sketch";
import { MomentAccumulator, bonferroniZ, mean } from "../helpers/stats.js";
import { keys, queries, squaredFrobeniusDiff, values, weightsP } from "./fixtures.js";

const exact = attention(queries, keys, values);

describe("ratio estimator (normalizer 'estimated')", () => {
  it("uses only the sampled columns of A: same result as the ratio on the full A restricted to the sample", () => {
    const { scores } = attentionScores(queries, keys); // A up to a per-row factor, which cancels in the ratio
    for (const scheme of ["uniform", "value-norm"] as const) {
      const r = sampledAttention(queries, keys, values, { samples: 7, scheme }, [3, scheme]);
      const ref = sampledValueProduct(scores, values, { samples: 7, scheme, normalize: "ratio" }, [3, scheme]);
      expect(Array.from(r.indices)).toEqual(Array.from(ref.indices));
      expect(Math.sqrt(squaredFrobeniusDiff(r.output, ref.output))).toBeLessThanOrEqual(
        1e-12 * Math.sqrt(squaredFrobeniusDiff(ref.output, new Matrix(ref.output.rows, ref.output.cols))),
      );
    }
  });

  it("is consistent: mean squared error falls about 4× per 4× more samples", () => {
    const mse = (s: number) =>
      mean(
        Array.from({ length: 300 }, (_, t) =>
          squaredFrobeniusDiff(sampledAttention(queries, keys, values, { samples: s }, [4, s, t]).output, exact),
        ),
      );
    const e4 = mse(4);
    const e16 = mse(16);
    const e64 = mse(64);
    // The ratio estimator's MSE is (1/s)·σ² + O(1/s²): allow the O(1/s²) and Monte-Carlo slack,
    // but a non-consistent estimator (a floor) or one with the wrong rate fails.
    expect(e16 / e4).toBeLessThan(0.4);
    expect(e16 / e4).toBeGreaterThan(0.1);
    expect(e64 / e16).toBeLessThan(0.4);
    expect(e64 / e16).toBeGreaterThan(0.1);
  });

  it("never forms an N_Q × N_KV matrix for the uniform / value-norm schemes (long sequence)", () => {
    const n = 4096;
    const k = randomMatrix(n, 8, {}, [5, "K"]);
    const v = randomMatrix(n, 8, {}, [5, "V"]);
    const q = randomMatrix(4, 8, {}, [5, "Q"]);
    const r = sampledAttention(q, k, v, { samples: 64, scheme: "value-norm" }, [5]);
    expect(r.cost.floatsStored).toBeLessThan(4 * n);
    expect(r.cost.flops).toBeLessThan(2 * 4 * n * 8); // below one exact QKᵀ
    expect(r.output.rows).toBe(4);
  });
});

describe("exact-Z variant (normalizer 'exact')", () => {
  it.each(["uniform", "value-norm", "optimal", "attention"] as const)("%s: unbiased for Y = Z⁻¹AV", (scheme) => {
    const T = 1500;
    const acc = new MomentAccumulator(exact.data.length);
    for (let t = 0; t < T; t++)
      acc.add(
        sampledAttention(queries, keys, values, { samples: 6, scheme, normalizer: "exact", blockSize: 7 }, [6, scheme, t]).output.data,
      );
    const m = acc.mean();
    const v = acc.variance();
    const z = bonferroniZ(1e-3, exact.data.length * 4);
    let worst = 0;
    for (let q = 0; q < exact.data.length; q++) worst = Math.max(worst, Math.abs(m[q] - exact.data[q]) / Math.sqrt(v[q] / T));
    expect(worst).toBeLessThanOrEqual(z);
  });

  it("equals the estimate of P V with the same draws, streaming Z over blocks of any size", () => {
    const ref = sampledValueProduct(weightsP, values, { samples: 9, scheme: "uniform" }, [8]);
    for (const blockSize of [1, 5, 256]) {
      const r = sampledAttention(queries, keys, values, { samples: 9, normalizer: "exact", blockSize }, [8]);
      expect(Math.sqrt(squaredFrobeniusDiff(r.output, ref.output))).toBeLessThanOrEqual(1e-12);
    }
  });

  it("the ratio estimator is biased at small s where the exact-Z variant is not (why both exist)", () => {
    // Single query, keys with one dominant logit: Ẑ misses it most of the time.
    const q = Matrix.fromArray([[3, 0]]);
    const k = Matrix.fromArray([
      [3, 0],
      [0, 0],
      [0, 0],
      [0, 0],
      [0, 0],
      [0, 0],
      [0, 0],
      [0, 0],
    ]);
    const v = Matrix.fromArray([[1], [0], [0], [0], [0], [0], [0], [0]]);
    const y = attention(q, k, v).data[0];
    const T = 4000;
    const ratio = mean(Array.from({ length: T }, (_, t) => sampledAttention(q, k, v, { samples: 2 }, [9, t]).output.data[0]));
    const exactZ = Array.from(
      { length: T },
      (_, t) => sampledAttention(q, k, v, { samples: 2, normalizer: "exact" }, [9, t]).output.data[0],
    );
    const se = Math.sqrt(exactZ.reduce((s, x) => s + (x - mean(exactZ)) ** 2, 0) / (T - 1) / T);
    expect(Math.abs(mean(exactZ) - y)).toBeLessThanOrEqual(3.5 * se);
    expect(Math.abs(ratio - y)).toBeGreaterThan(10 * se);
  });
});
