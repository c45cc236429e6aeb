// Issue 11 methods in the registry (hyper-attention, kdeformer, scatterbrain, random-features with
// oprf/derf) and the opt-in literature metrics: adapters equal the sketch functions per head, α/κ
// columns, exact limits give zero error in every metric, metrics against literal formulas, and
// configs that do not ask for the metrics keep their columns.
import { type Matrix, attention, attentionWeights, type SeedKey } from "@randattn/core";
import { hyperAttention, hyperAttentionParameters, kdeformerAttention, scatterbrainAttention } from "@randattn/sketch";
import {
  LITERATURE_METRIC_NAMES,
  executeTask,
  expandPlan,
  getMethod,
  getProblem,
  literatureMetrics,
  loadConfigObject,
  type Params,
  type ProblemInstance,
  spectralNorm,
  type TaskSpec,
} from "@randattn/experiments/internal";
import { describe, expect, it } from "vitest";
import { tinyConfig } from "../helpers.js";

const ctx = { baseDir: "/tmp", wantWeights: false };
const seed: SeedKey = [5, "method"];

function instance(generator: string, params: Params, mask: ProblemInstance["mask"] = null): ProblemInstance {
  const def = getProblem(generator);
  const full: Params = {};
  for (const [k, v] of Object.entries(def.paramsSchema.properties)) if (v.default !== undefined) full[k] = v.default as number;
  return def.generate({ ...full, ...params }, { ...ctx, kernel: { kind: "softmax" }, mask }, [3, "inputs"]);
}
function withDefaults(name: string, params: Params): Params {
  const full: Params = {};
  for (const [k, v] of Object.entries(getMethod(name).paramsSchema.properties)) full[k] = v.default as number;
  return { ...full, ...params };
}
const run = (name: string, problem: ProblemInstance, params: Params) => getMethod(name).run(problem, withDefaults(name, params), ctx, seed);
const headSeed = (h: number): SeedKey => [...seed, "head", h];

describe("adapters = sketch functions per head", () => {
  const p = instance("clustered", { n: 40, d: 4, dv: 3 });
  const h = p.heads[0];
  it("hyper-attention, with α and κ from hyperAttentionParameters on the same mask", () => {
    const r = run("hyper-attention", p, { blockSize: 8, sampleSize: 5 });
    const opts = { numBits: 7, blockSize: 8, sampleSize: 5, normalizerSamples: 64, minCausalLength: 128 };
    const direct = hyperAttention(h.queries, h.keys, h.values, opts, headSeed(0));
    expect([...(r.output as Matrix).data]).toEqual([...direct.output.data]);
    const params = hyperAttentionParameters(h.queries, h.keys, h.values, { ...opts, planes: direct.planes }, headSeed(0));
    expect(r.extras?.hyper_alpha).toBe(params.alpha);
    expect(r.extras?.hyper_kappa).toBe(params.kappa);
    expect(r.cost.flops).toBe(direct.cost.flops);
  });
  it("kdeformer and scatterbrain", () => {
    const k = run("kdeformer", p, { blockSize: 8, sampleSize: 16 });
    const direct = kdeformerAttention(h.queries, h.keys, h.values, { blockSize: 8, sampleSize: 16, kdeBits: "auto" }, headSeed(0));
    expect([...(k.output as Matrix).data]).toEqual([...direct.output.data]);
    expect(k.cost.flops).toBe(direct.cost.flops);
    const u = run("kdeformer", p, { blockSize: 8, sampleSize: 16, estimator: "block-uniform", kdeBits: 3 });
    expect([...(u.output as Matrix).data]).toEqual([
      ...kdeformerAttention(
        h.queries,
        h.keys,
        h.values,
        { blockSize: 8, sampleSize: 16, estimator: "block-uniform", normalizerSamples: 64, columnSamples: 64 },
        headSeed(0),
      ).output.data,
    ]);
    const b = run("kdeformer", p, { blockSize: 8, sampleSize: 16, kdeBits: 3 });
    expect([...(b.output as Matrix).data]).toEqual([
      ...kdeformerAttention(h.queries, h.keys, h.values, { blockSize: 8, sampleSize: 16, kdeBits: 3 }, headSeed(0)).output.data,
    ]);
    const s = run("scatterbrain", p, { numFrequencies: 8 });
    expect([...(s.output as Matrix).data]).toEqual([
      ...scatterbrainAttention(h.queries, h.keys, h.values, { numFrequencies: 8, numBits: 4 }, headSeed(0)).output.data,
    ]);
  });
  it("causal problems: hyper-attention and scatterbrain take the mask, kdeformer refuses it", () => {
    const c = instance("gaussian", { n: 24, d: 4, dv: 3 }, { kind: "causal" });
    const ref = attention(c.heads[0].queries, c.heads[0].keys, c.heads[0].values, { mask: { kind: "causal" } });
    const y = run("hyper-attention", c, { blockSize: 64, minCausalLength: 4 }).output as Matrix;
    for (let q = 0; q < ref.data.length; q++) expect(Math.abs(y.data[q] - ref.data[q])).toBeLessThanOrEqual(1e-12);
    expect(run("hyper-attention", c, {}).extras?.hyper_alpha).toBeNull();
    expect(() => run("kdeformer", c, {})).toThrow(/mask/);
    expect(() => run("scatterbrain", c, { numBits: 0 })).not.toThrow();
  });
  it("random-features takes the exponential kinds (complex-gerf: F = 2m)", () => {
    for (const features of ["oprf", "derf", "aderf", "saderf", "sderf"]) {
      const r = run("random-features", p, { features, numFrequencies: 8 });
      expect(r.output?.rows).toBe(40);
      expect(r.extras?.feature_count).toBe(8);
    }
    const c = run("random-features", p, { features: "complex-gerf", numFrequencies: 8, onNonPositiveNormalizer: "keep" });
    expect(c.output?.rows).toBe(40);
    expect(c.extras?.feature_count).toBe(16);
  });
});

describe("literature metrics", () => {
  const p = instance("gaussian", { n: 30, d: 4, dv: 3 });
  const h = p.heads[0];
  const exact = attention(h.queries, h.keys, h.values);
  const approx = exact.clone();
  for (let q = 0; q < approx.data.length; q++) approx.data[q] += 0.01 * Math.sin(q);
  it("match their literal formulas", () => {
    const m = literatureMetrics(LITERATURE_METRIC_NAMES, approx, exact, p);
    const diff = exact.clone();
    for (let q = 0; q < diff.data.length; q++) diff.data[q] = approx.data[q] - exact.data[q];
    expect(m.normalized_spectral_error).toBeCloseTo(
      spectralNorm(diff) / (spectralNorm(attentionWeights(h.queries, h.keys)) * spectralNorm(h.values)),
      14,
    );
    let worst = 0;
    let cos = 0;
    for (let i = 0; i < 30; i++) {
      const a = approx.data.slice(i * 3, i * 3 + 3);
      const y = exact.data.slice(i * 3, i * 3 + 3);
      const nd = Math.hypot(a[0] - y[0], a[1] - y[1], a[2] - y[2]);
      worst = Math.max(worst, nd / Math.hypot(...y));
      cos += (a[0] * y[0] + a[1] * y[1] + a[2] * y[2]) / (Math.hypot(...a) * Math.hypot(...y));
    }
    expect(m.max_row_rel_error).toBeCloseTo(worst, 14);
    expect(m.mean_cosine_similarity).toBeCloseTo(cos / 30, 14);
  });
  it("are opt-in columns: absent unless listed, filled by the runner when listed", () => {
    const plain = expandPlan(loadConfigObject(tinyConfig(), "/tmp", "t.yaml"));
    expect(plain.extraColumns).toEqual([]);
    const withMetrics = expandPlan(
      loadConfigObject(
        tinyConfig({ metrics: ["rel_frobenius_error", "mean_cosine_similarity", "normalized_spectral_error"] }),
        "/tmp",
        "t.yaml",
      ),
    );
    expect(withMetrics.extraColumns).toEqual(["mean_cosine_similarity", "normalized_spectral_error"]);
    const spec: TaskSpec = {
      key: "k",
      index: 0,
      trial: 0,
      rootSeed: 1,
      problem: { generator: "gaussian", params: withDefaultsProblem({ n: 16, d: 4, dv: 3 }) },
      kernel: { kind: "softmax" },
      mask: null,
      method: { name: "hyper-attention", params: withDefaults("hyper-attention", { blockSize: 64 }) },
      metrics: ["rel_frobenius_error", ...LITERATURE_METRIC_NAMES],
      baseDir: "/tmp",
    };
    const out = executeTask(spec);
    expect(out.status).toBe("ok");
    expect(out.metrics.rel_frobenius_error).toBeLessThanOrEqual(1e-12);
    expect(out.extras?.normalized_spectral_error).toBeLessThanOrEqual(1e-12);
    expect(out.extras?.max_row_rel_error).toBeLessThanOrEqual(1e-12);
    expect(out.extras?.mean_cosine_similarity).toBeCloseTo(1, 12);
    expect(out.extras?.hyper_alpha).toBe(0);
  });
});

function withDefaultsProblem(params: Params): Params {
  const full: Params = {};
  for (const [k, v] of Object.entries(getProblem("gaussian").paramsSchema.properties))
    if (v.default !== undefined) full[k] = v.default as number;
  return { ...full, ...params };
}
