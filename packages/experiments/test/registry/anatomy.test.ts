/**
 * attention-anatomy's statistics against closed forms (uniform attention, Pareto tails, equal and
 * power-law spectra), and anatomy-source handing out the `model` problem's own real head.
 */
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { derive, Matrix, RandomStream } from "@randattn/core";
import { describe, expect, it } from "vitest";
import { attentionStatistics, effectiveRank, hillTailIndex, powerLawDecay } from "../../src/registry/anatomy.js";
import { getMethod } from "../../src/registry/methods.js";
import { getProblem } from "../../src/registry/problems.js";

const ROOT = join(dirname(fileURLToPath(import.meta.url)), "../../../..");
const ctx = { baseDir: join(ROOT, "packages/experiments/configs"), wantWeights: false, kernel: { kind: "softmax" as const }, mask: null };

describe("anatomy statistics", () => {
  it("uniform causal attention: entropy 1, sink and previous-token mass the mean of 1/(i+1)", () => {
    const n = 20;
    const p = Matrix.from(n, n, (i, j) => (j <= i ? 1 / (i + 1) : 0));
    const s = attentionStatistics(p, 0);
    let inv = 0;
    for (let i = 1; i < n; i++) inv += 1 / (i + 1);
    expect(s.entropy).toBeCloseTo(1, 12);
    expect(s.sink).toBeCloseTo(inv / (n - 1), 14);
    expect(s.previous).toBeCloseTo(inv / (n - 1), 14);
    // A pure previous-token head.
    const prev = Matrix.from(n, n, (i, j) => (i === 0 ? (j === 0 ? 1 : 0) : j === i - 1 ? 1 : 0));
    expect(attentionStatistics(prev, 0)).toEqual({ entropy: 0, sink: 1 / (n - 1), previous: 1 });
  });

  it("Hill's estimator recovers a Pareto tail index within its standard error α/√k", () => {
    const rng = new RandomStream(derive([3], "pareto"));
    for (const alpha of [1.5, 4]) {
      const x = Array.from({ length: 20_000 }, () => rng.uniformOpen() ** (-1 / alpha));
      const k = 2000;
      // Exact Pareto: the estimator is unbiased up to k/(k−1); 4 standard errors.
      expect(Math.abs(hillTailIndex(x, k) - alpha)).toBeLessThan((4 * alpha) / Math.sqrt(k));
    }
    expect(() => hillTailIndex([1, 2], 2)).toThrow(/k/);
  });

  it("effective rank and power-law decay of known spectra", () => {
    expect(effectiveRank([2, 2, 2, 2, 0])).toBeCloseTo(4, 14);
    expect(effectiveRank([1, 0, 0])).toBeCloseTo(1, 14);
    expect(powerLawDecay(Array.from({ length: 30 }, (_, i) => 5 * (i + 1) ** -1.7))).toBeCloseTo(1.7, 12);
  });
});

describe("anatomy-source and attention-anatomy", () => {
  const src = getProblem("anatomy-source");
  const base = { modelsDir: "../../../models", n: 64, d: 16, layer: 1, head: 2 };

  it("a real source is the model problem's head; MLA heads report the latent spectrum", () => {
    const a = src.generate({ ...base, source: "deepseek-mla-fortunes" }, ctx, derive([1], "x"));
    const m = getProblem("model").generate(
      {
        checkpoint: "../../../models/deepseek-mla-fortunes",
        text: "",
        offset: 0,
        n: 64,
        nQueries: 0,
        layer: 1,
        head: 2,
        tensors: "post-rope",
      },
      ctx,
      derive([1], "x"),
    );
    expect(Array.from(a.heads[0].keys.data)).toEqual(Array.from(m.heads[0].keys.data));
    const r = getMethod("attention-anatomy").run(a, { tailFraction: 0.1 }, ctx, derive([1], "m"));
    expect(r.extras!.latent_spectrum_decay).toBeGreaterThan(0);
    expect(r.extras!.latent_energy90_fraction).toBeGreaterThan(0);
    expect(r.extras!.latent_energy90_fraction).toBeLessThanOrEqual(1);
    const g = src.generate({ ...base, source: "llama-gqa-fortunes" }, ctx, derive([1], "x"));
    expect(getMethod("attention-anatomy").run(g, { tailFraction: 0.1 }, ctx, derive([1], "m")).extras!.latent_spectrum_decay).toBeNull();
  });

  it("a synthetic source is its generator at defaults, one head", () => {
    const a = src.generate({ ...base, source: "gaussian" }, ctx, derive([1], "x"));
    expect(a.heads).toHaveLength(1);
    expect(a.heads[0].keys.shape).toBe("64×16");
    const mla = src.generate({ ...base, source: "deepseek-v2-mla" }, ctx, derive([1], "x"));
    expect(mla.heads).toHaveLength(1);
    expect(mla.latent).toBeDefined();
  });
});
