import { describe, expect, it } from "vitest";
import { Matrix, attentionWeights, matmul } from "@randattn/core";
import { defensiveMixture, dkmExpectedSquaredError, resolveDefensiveWeight, valueSamplingProbabilities } from "@randattn/sketch";
import { getMethod, getProblem, hmtSpectralBound, type Params, type ProblemInstance } from "@randattn/experiments/internal";

const ctx = { baseDir: "/tmp", wantWeights: false };

function instance(generator: string, params: Params): ProblemInstance {
  const def = getProblem(generator);
  const full: Params = {};
  for (const [k, v] of Object.entries(def.paramsSchema.properties)) if (v.default !== undefined) full[k] = v.default as number;
  return def.generate({ ...full, ...params }, { ...ctx, kernel: { kind: "softmax" }, mask: null }, [8, "inputs"]);
}

const rs = (scheme: string, normalizer: string, samples: number, design = "with-replacement"): Params => ({
  samples,
  scheme,
  design,
  normalizer,
  blockSize: 256,
});

describe("reference columns: DKM expectation and HMT bound", () => {
  const problem = instance("heavy-tailed", { n: 40, nQueries: 6, d: 3, dv: 2, scale: 1.2, tailIndex: 3 });
  const h = problem.heads[0];
  const p = attentionWeights(h.queries, h.keys);
  const y = matmul(p, h.values);
  let y2 = 0;
  for (const v of y.data) y2 += v * v;
  const method = getMethod("row-sampling");

  it("normalizer exact: √(sketch's dkmExpectedSquaredError)/‖Y‖_F, scaling as 1/√s; empty without replacement", () => {
    for (const scheme of ["uniform", "value-norm", "optimal"] as const) {
      const probs = valueSamplingProbabilities(scheme, h.values, p);
      const want = Math.sqrt(dkmExpectedSquaredError(p, h.values, 8, probs) / y2);
      const got = method.references!(problem, rs(scheme, "exact", 8)).dkm_expected_rel_error!;
      expect(Math.abs(got - want)).toBeLessThanOrEqual(1e-12 * want);
      const at32 = method.references!(problem, rs(scheme, "exact", 32)).dkm_expected_rel_error!;
      expect(Math.abs(at32 - got / 2)).toBeLessThanOrEqual(1e-12 * got);
    }
    expect(method.references!(problem, rs("uniform", "exact", 8, "horvitz-thompson")).dkm_expected_rel_error).toBeNull();
  });

  it("normalizer estimated: the literal first-order sum (1/s) Σ_h Σ_i Σ_k P_ik² ‖V_k − Y_i‖² / π_k, bit for bit", () => {
    // Written out per head in (i, k) order with ‖V_k − Y_i‖² summed over c in order — the order the
    // runner's blocked distances and its running sum promise (sampling.ts, ratioFirstOrderSquaredError).
    // Several heads (the MLA layer), and one head with N_KV = 521 (not a multiple of the kernel's 8
    // rows: the scratch-block path) and 600 queries: two distance blocks of ⌊2¹⁸/521⌋ = 503 rows.
    const problems = [
      instance("deepseek-v2-mla", { n: 48, shrink: 32, decay: 1 }),
      instance("heavy-tailed", { n: 521, nQueries: 600, d: 3, dv: 3, scale: 1.1, tailIndex: 3 }),
    ];
    expect(problems[0].heads.length).toBeGreaterThan(1);
    for (const two of problems)
      for (const scheme of ["uniform", "value-norm", "attention"] as const) {
        let expected = 0;
        let norm2 = 0;
        for (const g of two.heads) {
          const pg = attentionWeights(g.queries, g.keys);
          const yg = matmul(pg, g.values);
          // Per head, then across heads (the runner adds each head's ‖Y_h‖²_F and expectation).
          let headNorm2 = 0;
          for (const v of yg.data) headNorm2 += v * v;
          norm2 += headNorm2;
          let headExpected = 0;
          const eps = resolveDefensiveWeight(undefined, scheme, true);
          const probs = scheme === "attention" ? pg : defensiveMixture(valueSamplingProbabilities(scheme, g.values, pg), eps);
          const perRow = probs instanceof Matrix;
          for (let i = 0; i < pg.rows; i++) {
            for (let k = 0; k < pg.cols; k++) {
              const w = pg.get(i, k);
              if (w === 0) continue;
              let dist = 0;
              for (let c = 0; c < g.values.cols; c++) dist += (g.values.get(k, c) - yg.get(i, c)) ** 2;
              const pik = perRow ? probs.get(i, k) : (probs as Float64Array)[k];
              headExpected += (w * w * dist) / pik;
            }
          }
          expected += headExpected;
        }
        const want = Math.sqrt(Math.max(0, expected / 8) / norm2);
        const got = method.references!(two, rs(scheme, "estimated", 8)).dkm_expected_rel_error;
        expect(Object.is(got, want), `${scheme}: ${got} vs ${want}`).toBe(true);
      }
  });

  it("reuses the reference's weights when given (ReferenceContext): the same bits; weights of another shape are ignored", () => {
    const fresh = () => instance("heavy-tailed", { n: 40, nQueries: 6, d: 3, dv: 2, scale: 1.2, tailIndex: 3 });
    for (const [scheme, normalizer] of [
      ["uniform", "estimated"],
      ["attention", "exact"],
    ] as const) {
      // A fresh instance each time: the expectation is cached per instance.
      const alone = method.references!(fresh(), rs(scheme, normalizer, 8)).dkm_expected_rel_error;
      const a = fresh();
      const given = a.heads.map((g) => attentionWeights(g.queries, g.keys));
      expect(method.references!(a, rs(scheme, normalizer, 8), { weights: given }).dkm_expected_rel_error).toBe(alone);
      // Weights that are not P (here P mixed half-and-half with uniform rows) change the value: proof they were used.
      const b = fresh();
      const scaled = b.heads.map((g) => {
        const w = attentionWeights(g.queries, g.keys);
        for (let i = 0; i < w.data.length; i++) w.data[i] = (w.data[i] + 1 / w.cols) / 2;
        return w;
      });
      expect(method.references!(b, rs(scheme, normalizer, 8), { weights: scaled }).dkm_expected_rel_error).not.toBe(alone);
      // The wrong shape (or count) is ignored, not read out of bounds.
      const c = fresh();
      const wrong = [Matrix.from(2, 9, () => 1 / 9)];
      expect(method.references!(c, rs(scheme, normalizer, 8), { weights: wrong }).dkm_expected_rel_error).toBe(alone);
    }
  });

  it("Monte Carlo: the mean squared error over 3000 draws matches the expectation within 4σ (exact Z; ratio estimator at large s)", () => {
    for (const [scheme, normalizer, s] of [
      ["attention", "exact", 4],
      ["optimal", "exact", 4],
      ["attention", "estimated", 4],
      ["uniform", "estimated", 64],
    ] as const) {
      const params = rs(scheme, normalizer, s);
      const T = 3000;
      const errs: number[] = [];
      for (let t = 0; t < T; t++) {
        const out = method.run(problem, params, ctx, [9, t]).output!;
        let e = 0;
        for (let i = 0; i < y.data.length; i++) e += (out.data[i] - y.data[i]) ** 2;
        errs.push(e);
      }
      const mean = errs.reduce((a, b) => a + b, 0) / T;
      const sd = Math.sqrt(errs.reduce((a, b) => a + (b - mean) ** 2, 0) / (T - 1));
      const expected = method.references!(problem, params).dkm_expected_rel_error! ** 2 * y2;
      // The ratio estimator's expectation is first order in 1/s: allow its O(1/s²) remainder too.
      const slack = normalizer === "estimated" && scheme === "uniform" ? 0.1 * expected : 0;
      expect(Math.abs(mean - expected), `${scheme}/${normalizer}`).toBeLessThanOrEqual((4 * sd) / Math.sqrt(T) + slack);
    }
  });

  it("HMT bound: the literal Cor. 10.10 formula plus σ_{k+1}; above the optimum; null when p_eff < 2", () => {
    const sigma = Float64Array.from([5, 3, 2, 1, 0.5, 0.25, 0.1]);
    const k = 2;
    const p = 3;
    const q = 1;
    const tail = Math.sqrt(1 ** 6 + 0.5 ** 6 + 0.25 ** 6 + 0.1 ** 6 + 2 ** 6);
    const inner = (1 + Math.sqrt(k / (p - 1))) * 2 ** 3 + ((Math.E * Math.sqrt(k + p)) / p) * tail;
    expect(hmtSpectralBound(sigma, k, p, q, 100, 7)).toBeCloseTo(2 + inner ** (1 / 3), 12);
    expect(hmtSpectralBound(sigma, k, 1, q, 100, 7)).toBeNull();
    expect(hmtSpectralBound(sigma, 6, 3, q, 100, 7)).toBeNull(); // ℓ = min(9, 7) → p_eff = 1
  });

  it("latent-rsvd: optimum ≤ measured latent error ≤ HMT bound (mean over draws)", () => {
    const mla = instance("deepseek-v2-mla", { n: 48, shrink: 32, decay: 1 });
    const m = getMethod("latent-rsvd");
    for (const q of [0, 2]) {
      const params: Params = { rank: 4, oversampling: 3, powerIterations: q, testMatrix: "gaussian", orthonormalization: "qr" };
      const ref = m.references!(mla, params);
      let mean = 0;
      for (let t = 0; t < 20; t++) {
        const r = m.run(mla, params, ctx, [4, t]);
        expect(r.extras!.latent_rel_spectral_error!).toBeGreaterThanOrEqual(ref.optimal_latent_rel_spectral_error! * (1 - 1e-12));
        expect(r.extras!.latent_rel_error!).toBeGreaterThanOrEqual(ref.optimal_latent_rel_error! * (1 - 1e-12));
        mean += r.extras!.latent_rel_spectral_error! / 20;
      }
      expect(mean).toBeLessThanOrEqual(ref.hmt_bound_rel_spectral_error!);
    }
    const svd = getMethod("latent-svd");
    const exact = svd.run(mla, { rank: 4 }, ctx, [1]);
    const opt = svd.references!(mla, { rank: 4 });
    expect(exact.extras!.latent_rel_error!).toBeCloseTo(opt.optimal_latent_rel_error!, 12);
  });
});
