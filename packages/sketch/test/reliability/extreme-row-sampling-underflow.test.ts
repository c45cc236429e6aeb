// Issue #6, numerical extremes: row sampling with probabilities that underflow to 0 (exact zeros,
// subnormals, weights whose normalization underflows) — such indices are never sampled and no
// weight 1/(s·p) divides by zero: every design, sampler and estimator returns finite results.
import { describe, expect, it } from "vitest";
import { Matrix, randomMatrix } from "@randattn/core";
import {
  AliasTable,
  createSketch,
  drawWeightedSample,
  normalizeWeights,
  sampleWithReplacement,
  sampleWithoutReplacement,
  sampledAttention,
  sampledMatmul,
  sampledValueProduct,
  squaredNormRowSampler,
  systematicSample,
  weightedRowSampler,
} from "@randattn/sketch";

const n = 12;
// mass on a few entries; the rest exact 0, the smallest subnormal, or weights that vanish after
// normalization (1e-320 / Σ underflows to 0 or to a subnormal)
const raw = Float64Array.from({ length: n }, (_, j) => (j % 4 === 0 ? 1 + j : j % 4 === 1 ? 0 : j % 4 === 2 ? 5e-324 : 1e-320));
const p = normalizeWeights(raw);
const support = [...p.keys()].filter((j) => p[j] > 0);

function expectInSupport(indices: ArrayLike<number>, where: string): void {
  for (const i of Array.from(indices)) expect(p[i] > 0, `${where}: index ${i} has p = ${p[i]}`).toBe(true);
}
function expectFinite(xs: ArrayLike<number>, where: string): void {
  for (const x of Array.from(xs)) expect(Number.isFinite(x), `${where}: ${x}`).toBe(true);
}

describe("probabilities underflowing to 0", () => {
  it("the vector under test really has zero and subnormal entries", () => {
    expect(p.some((x) => x === 0)).toBe(true);
    expect(p.some((x) => x > 0 && x < 2.2250738585072014e-308)).toBe(true);
  });
  it("samplers with replacement (alias) never draw a p = 0 index", () => {
    expectInSupport(sampleWithReplacement(p, { count: 2000 }, [10, "wr"]), "sampleWithReplacement");
    expectInSupport(AliasTable.fromProbabilities(p).sample({ count: 2000 }, [10, "alias"]), "AliasTable");
  });
  it("samplers without replacement and systematic πps never draw a p = 0 index", () => {
    for (let t = 0; t < 50; t++) {
      expectInSupport(sampleWithoutReplacement(p, { count: 3 }, [10, "wor", t]), "sampleWithoutReplacement");
      const sys = systematicSample(p, { count: 3 }, [10, "sys", t]);
      expectInSupport(sys.indices, "systematicSample");
      expectFinite(sys.inclusion, "inclusion");
    }
  });
  for (const design of ["with-replacement", "horvitz-thompson", "des-raj"] as const) {
    it(`drawWeightedSample (${design}): indices in the support, finite weights`, () => {
      for (let t = 0; t < 50; t++) {
        const s = drawWeightedSample(p, { samples: Math.min(3, support.length), design }, [10, design, t]);
        expectInSupport(s.indices, design);
        expectFinite(s.weights, design);
      }
    });
  }
  it("weighted row sampler sketch: rows in the support, finite weights and S·A", () => {
    const a = randomMatrix(n, 3, {}, [10, "a"]);
    const op = createSketch(weightedRowSampler(40, raw), [10, "rows"]);
    expectInSupport(op.indices, "weightedRowSampler");
    expectFinite(op.weights, "weights");
    expectFinite(op.sketchLeft(a).data, "S·A");
  });
  it("squared-norm row sampler on rows of norm 1e-170 (squared norms underflow to 0)", () => {
    const a = randomMatrix(n, 3, {}, [10, "tiny"]);
    for (let j = 0; j < n; j++) if (j % 3 !== 0) for (let c = 0; c < 3; c++) a.data[j * 3 + c] *= 1e-170;
    const op = createSketch(squaredNormRowSampler(30, a), [10, "sq"]);
    for (const i of Array.from(op.indices)) expect(op.distribution.probabilities[i]).toBeGreaterThan(0);
    expectFinite(op.weights, "weights");
    expectFinite(op.sketchLeft(a).data, "S·A");
  });
  it("sampledMatmul with an explicit underflowing p: finite estimate", () => {
    // columns of A / rows of B outside the support are zero, so the estimator stays unbiased
    const a = Matrix.from(3, n, (i, j) => (p[j] > 0 ? Math.sin(i + j) : 0));
    const b = Matrix.from(n, 2, (j, c) => (p[j] > 0 ? Math.cos(j - c) : 0));
    for (const design of ["with-replacement", "horvitz-thompson", "des-raj"] as const) {
      const r = sampledMatmul(a, b, { samples: 3, probabilities: p, design }, [10, "amm", design]);
      expectInSupport(r.indices, design);
      expectFinite(r.output.data, design);
    }
  });
  it("value-norm sampling of attention with values of norm 1e-170 (‖V_j‖² = 0 in float64)", () => {
    const q = randomMatrix(4, 3, {}, [10, "q"]);
    const k = randomMatrix(n, 3, {}, [10, "k"]);
    const v = randomMatrix(n, 2, {}, [10, "v"]);
    for (let j = 0; j < n; j++) if (j % 2 === 1) for (let c = 0; c < 2; c++) v.data[j * 2 + c] *= 1e-170;
    for (const normalizer of ["estimated", "exact"] as const) {
      const r = sampledAttention(q, k, v, { samples: 5, scheme: "value-norm", normalizer }, [10, "att", normalizer]);
      for (const i of Array.from(r.indices)) expect(i % 2, `sampled a row whose ‖V_j‖² underflowed (${i})`).toBe(0);
      expectFinite(r.output.data, normalizer);
      expectFinite(r.weights, normalizer);
    }
    const w = new Matrix(4, n, new Float64Array(4 * n).fill(1 / n));
    const r = sampledValueProduct(w, v, { samples: 5, scheme: "value-norm", design: "des-raj" }, [10, "svp"]);
    expectFinite(r.output.data, "sampledValueProduct");
  });
});
