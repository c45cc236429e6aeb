import { describe, expect, it } from "vitest";
import { Matrix, attention, concatCols, derive, matmul, mlaAttention, type SeedKey } from "@randattn/core";
import {
  complexGerfParameters,
  complexGerfVariance,
  exponentialFeatureParameters,
  exponentialFeatureVariance,
  compressLatent,
  drawProjection,
  multiHeadToMla,
  randomFeatureAttention,
  randomFeatures,
  sampledAttention,
  topKAttention,
} from "@randattn/sketch";
import { getMethod, getProblem, type Params, type ProblemInstance } from "@randattn/experiments/internal";

const ctx = { baseDir: "/tmp", wantWeights: false };
const seed: SeedKey = [5, "method"];

/** A generator's instance with its schema defaults filled in. */
function instance(generator: string, params: Params, mask: ProblemInstance["mask"] = null): ProblemInstance {
  const def = getProblem(generator);
  const full: Params = {};
  for (const [k, v] of Object.entries(def.paramsSchema.properties)) if (v.default !== undefined) full[k] = v.default as number;
  return def.generate({ ...full, ...params }, { ...ctx, kernel: { kind: "softmax" }, mask }, [3, "inputs"]);
}

/** A method's params with its schema defaults filled in. */
function withDefaults(name: string, params: Params): Params {
  const full: Params = {};
  for (const [k, v] of Object.entries(getMethod(name).paramsSchema.properties)) full[k] = v.default as number;
  return { ...full, ...params };
}

const run = (name: string, problem: ProblemInstance, params: Params) => getMethod(name).run(problem, withDefaults(name, params), ctx, seed);

function maxRel(a: Matrix, b: Matrix): number {
  let m = 0;
  let n = 0;
  for (let i = 0; i < a.data.length; i++) {
    m = Math.max(m, Math.abs(a.data[i] - b.data[i]));
    n = Math.max(n, Math.abs(b.data[i]));
  }
  return m / n;
}

describe("each adapter returns exactly what the sketch function returns with the same seed", () => {
  // 2 KV heads × 2 query heads: heads share keys/values objects (GQA).
  const gqa = instance("llama3-gqa", { n: 24, numKvHeads: 2, groupSize: 2, headDim: 4, scale: 1.5 });

  it("row-sampling = sampledAttention per head with derive(seed, 'head', h)", () => {
    for (const scheme of ["uniform", "attention"]) {
      const params = { samples: 7, scheme, normalizer: "exact" };
      const r = run("row-sampling", gqa, params);
      const direct = gqa.heads.map((h, i) =>
        sampledAttention(
          h.queries,
          h.keys,
          h.values,
          {
            samples: 7,
            scheme: scheme as "uniform",
            normalizer: "exact",
            design: "with-replacement",
            blockSize: 256,
            kernel: { kind: "softmax" },
          },
          derive(seed, "head", i),
        ),
      );
      expect(Array.from(r.output!.data)).toEqual(Array.from(concatCols(direct.map((d) => d.output)).data));
      expect(r.cost.flops).toBe(direct.reduce((s, d) => s + d.cost.flops, 0));
      expect(r.cost.floatsStored).toBe(direct.reduce((s, d) => s + d.cost.floatsStored, 0));
    }
  });

  it("top-k = topKAttention per head", () => {
    const r = run("top-k", gqa, { k: 5 });
    const direct = gqa.heads.map(
      (h) => topKAttention(h.queries, h.keys, h.values, 5, { renormalize: true, kernel: { kind: "softmax" } }).output,
    );
    expect(Array.from(r.output!.data)).toEqual(Array.from(concatCols(direct).data));
  });

  it("random-features = randomFeatureAttention per head, causal when the problem is", () => {
    const causal = instance("gaussian", { n: 20, d: 4, dv: 3 }, { kind: "causal" });
    const r = run("random-features", causal, { numFrequencies: 6, features: "hyperbolic", blockSize: 8 });
    const h = causal.heads[0];
    const direct = randomFeatureAttention(
      h.queries,
      h.keys,
      h.values,
      {
        numFrequencies: 6,
        features: "hyperbolic",
        projection: "orthogonal",
        blockSize: 8,
        mask: { kind: "causal" },
        onNonPositiveNormalizer: "error",
      },
      derive(seed, "head", 0),
    );
    expect(Array.from(r.output!.data)).toEqual(Array.from(direct.output.data));
    // Causal: the first query sees only the first key, so its row is that key's value exactly.
    expect(r.output!.get(0, 0)).toBeCloseTo(h.values.get(0, 0), 12);
    expect(r.extras?.non_positive_row_fraction).toBe(0);
  });

  it("kernel-value: the MSE of drawProjection + randomFeatures, and the Performer closed form as a literal formula", () => {
    const pairs = instance("kernel-pairs", { n: 9, d: 6, norm: 1.1, cosine: -0.3 });
    const { queries: q, keys: k } = pairs.kernelPairs!;
    const scale = 1 / Math.sqrt(6);
    for (const features of ["trig", "positive", "hyperbolic"] as const) {
      const r = run("kernel-value", pairs, { numFrequencies: 5, features });
      const omega = drawProjection(5, 6, { projection: "iid" }, seed);
      const fq = randomFeatures(q, omega, { features, kernel: { kind: "softmax", scale } }).features;
      const fk = randomFeatures(k, omega, { features, kernel: { kind: "softmax", scale } }).features;
      let mse = 0;
      let theory = 0;
      for (let i = 0; i < 9; i++) {
        let est = 0;
        for (let f = 0; f < fq.cols; f++) est += fq.get(i, f) * fk.get(i, f);
        // The problem's construction: ‖x‖ = ‖y‖ = 1.1, cos = −0.3 for x = √scale·q, y = √scale·k.
        const xy = 1.1 * 1.1 * -0.3;
        const z2 = 2 * 1.1 * 1.1 + 2 * xy;
        const d2 = 2 * 1.1 * 1.1 - 2 * xy;
        let sx = 0;
        for (let j = 0; j < 6; j++) sx += scale * q.get(i, j) * k.get(i, j);
        expect(sx).toBeCloseTo(xy, 12);
        mse += (est - Math.exp(xy)) ** 2 / 9;
        const pos = (Math.exp(z2) * Math.exp(2 * xy) * (1 - Math.exp(-z2))) / 5;
        theory +=
          (features === "positive"
            ? pos
            : features === "hyperbolic"
              ? 0.5 * (1 - Math.exp(-z2)) * pos
              : (Math.exp(z2 - 2 * xy) * (1 - Math.exp(-d2)) ** 2) / 10) / 9;
      }
      expect(Math.abs(r.extras!.kernel_mse! - mse)).toBeLessThanOrEqual(1e-12 * mse);
      expect(Math.abs(r.extras!.performer_mse! - theory)).toBeLessThanOrEqual(1e-12 * theory);
      expect(r.output).toBeNull();
    }
    expect(run("kernel-value", pairs, { projection: "orthogonal" }).extras!.performer_mse).toBeNull();
  });

  it("kernel-value, exponential maps: the closed-form column is the sketch closed form, and the mean MSE over 200 seeds matches it (z·σ̂/√T)", () => {
    const pairs = instance("kernel-pairs", { n: 9, d: 6, norm: 0.6, cosine: 0.3 });
    const { queries: q, keys: k } = pairs.kernelPairs!;
    const rs = Math.sqrt(1 / Math.sqrt(6));
    const x = new Matrix(
      9,
      6,
      Float64Array.from(q.data, (v) => v * rs),
    );
    const y = new Matrix(
      9,
      6,
      Float64Array.from(k.data, (v) => v * rs),
    );
    for (const features of ["sderf", "complex-gerf"] as const) {
      const r = run("kernel-value", pairs, { numFrequencies: 5, features });
      let theory = 0;
      if (features === "sderf") {
        const p = exponentialFeatureParameters("sderf", x, y);
        for (let i = 0; i < 9; i++)
          theory += exponentialFeatureVariance(p, x.data.slice(i * 6, i * 6 + 6), y.data.slice(i * 6, i * 6 + 6), 5) / 9;
        expect(r.extras!.feature_count).toBe(5);
      } else {
        const p = complexGerfParameters(x, y);
        for (let i = 0; i < 9; i++) theory += complexGerfVariance(p, x.data.slice(i * 6, i * 6 + 6), y.data.slice(i * 6, i * 6 + 6), 5) / 9;
        expect(r.extras!.feature_count).toBe(10);
      }
      expect(Math.abs(r.extras!.performer_mse! - theory)).toBeLessThanOrEqual(1e-12 * theory);
      const T = 200;
      const mses = Array.from({ length: T }, (_, t) => {
        const def = getMethod("kernel-value");
        return def.run(pairs, withDefaults("kernel-value", { numFrequencies: 5, features }), ctx, [6, features, t]).extras!
          .kernel_mse as number;
      });
      const mean = mses.reduce((a, b) => a + b, 0) / T;
      const sd = Math.sqrt(mses.reduce((a, b) => a + (b - mean) ** 2, 0) / (T - 1));
      // z = 3.29: two-sided 1e-3 for each of the two kinds (Bonferroni)
      expect(Math.abs(mean - theory)).toBeLessThanOrEqual(3.29 * (sd / Math.sqrt(T)));
    }
  });

  it("latent-rsvd / latent-svd = attention on the compressLatent latent L̃ = C Ṽᵀ (K_h = L̃ W_LK^h)", () => {
    const mla = instance("deepseek-v2-mla", { n: 16, shrink: 32, decay: 1 });
    for (const [name, method] of [
      ["latent-rsvd", "randomized"],
      ["latent-svd", "exact"],
    ] as const) {
      const params = { rank: 5, oversampling: 3, powerIterations: 1 };
      const r = run(name, mla, params);
      const c = compressLatent(mla.latent!.latent, { ...params, method, testMatrix: "gaussian", orthonormalization: "qr" }, seed);
      const lt = matmul(c.factor, c.basis);
      const direct = concatCols(
        mla.heads.map((h, i) => attention(h.queries, matmul(lt, mla.latent!.keyUp[i]), matmul(lt, mla.latent!.valueUp[i]))),
      );
      expect(maxRel(r.output!, direct)).toBeLessThanOrEqual(1e-12);
      expect(r.extras?.latent_rel_error).toBe(c.relativeError);
      expect(r.extras?.cache_floats).toBe(16 * 5);
    }
  });

  it("mha-to-mla = core mlaAttention on the multiHeadToMla weights (W_O = I)", () => {
    const r = run("mha-to-mla", gqa, { latentDim: 6, powerIterations: 1 });
    const { weights, report } = multiHeadToMla(
      gqa.multiHead!.weights,
      { latentDim: 6, method: "randomized", oversampling: 10, powerIterations: 1, testMatrix: "gaussian", orthonormalization: "qr" },
      seed,
    );
    const x = gqa.multiHead!.x;
    expect(maxRel(r.output!, mlaAttention(x, x, weights))).toBeLessThanOrEqual(1e-12);
    expect(r.extras?.weight_rel_error).toBe(report.weightRelativeError);
    expect(r.extras?.cache_floats).toBe(24 * 6);
  });
});
