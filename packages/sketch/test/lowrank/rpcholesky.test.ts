import { Matrix, ShapeError, ValueError, matmul, randomMatrix, transpose } from "@randattn/core";
import { describe, expect, it } from "vitest";
import { householderQr, psdMatrixColumns, rpCholesky } from "../../src/index.js";
import { checkMean, chiSquareQuantile, chiSquareStatistic } from "../helpers/stats.js";

/** A = U diag(λ) Uᵀ with a Haar-like orthonormal U. */
function psdWithSpectrum(lambda: readonly number[], seed: number): Matrix {
  const n = lambda.length;
  const u = householderQr(randomMatrix(n, n, {}, [seed, "u"])).q;
  const ul = new Matrix(n, n);
  for (let i = 0; i < n; i++) for (let j = 0; j < n; j++) ul.data[i * n + j] = u.data[i * n + j] * lambda[j];
  const a = matmul(ul, transpose(u));
  for (let i = 0; i < n; i++)
    for (let j = 0; j < i; j++) a.data[i * n + j] = a.data[j * n + i] = 0.5 * (a.data[i * n + j] + a.data[j * n + i]);
  return a;
}

function trace(a: Matrix): number {
  let t = 0;
  for (let i = 0; i < a.rows; i++) t += a.data[i * a.cols + i];
  return t;
}

/** tr of the Schur complement of A after eliminating the ordered pivots (exact RPCholesky residual). */
function residualAfter(a: Matrix, pivots: number[]): Matrix {
  let r = a;
  for (const s of pivots) {
    const n = r.rows;
    const next = new Matrix(n, n);
    const rss = r.data[s * n + s];
    for (let i = 0; i < n; i++)
      for (let j = 0; j < n; j++) next.data[i * n + j] = r.data[i * n + j] - (r.data[i * n + s] * r.data[s * n + j]) / rss;
    r = next;
  }
  return r;
}

describe("rpCholesky", () => {
  const spectrum = Array.from({ length: 10 }, (_, j) => 2 ** -j);
  const a = psdWithSpectrum(spectrum, 1);

  it.each(["plain", "accelerated"] as const)("%s: rank N reproduces A = F Fᵀ to 1e-12", (variant) => {
    const r = rpCholesky(a, { rank: 10, variant, blockSize: 4 }, [7]);
    expect(r.factor.cols).toBe(10);
    const ffT = matmul(r.factor, transpose(r.factor));
    let err = 0;
    for (let i = 0; i < a.data.length; i++) err = Math.max(err, Math.abs(ffT.data[i] - a.data[i]));
    expect(err).toBeLessThan(1e-12);
    expect(r.traceError).toBeLessThan(1e-12);
    // F[pivots, :] is lower triangular (the property WildCat's weights use).
    for (let i = 0; i < 10; i++) for (let j = i + 1; j < 10; j++) expect(Math.abs(r.factor.data[r.pivots[i] * 10 + j])).toBeLessThan(1e-14);
  });

  it("one step: E tr(A − Â₁) = tr A − ‖A‖²_F/tr A (Chen et al. §2)", () => {
    let fro2 = 0;
    for (const v of a.data) fro2 += v * v;
    const expected = trace(a) - fro2 / trace(a);
    const samples = Array.from({ length: 2000 }, (_, t) => rpCholesky(a, { rank: 1 }, [t]).traceError);
    const c = checkMean(samples, expected);
    expect(c.ok, JSON.stringify(c)).toBe(true);
  });

  it("two steps: both variants match the enumerated E tr(A − Â₂)", () => {
    const b = psdWithSpectrum([3, 2, 1, 0.5, 0.25, 0.1, 0.05, 0.01], 2);
    const n = b.rows;
    const t0 = trace(b);
    let expected = 0;
    for (let s1 = 0; s1 < n; s1++) {
      const r1 = residualAfter(b, [s1]);
      const t1 = trace(r1);
      for (let s2 = 0; s2 < n; s2++) {
        if (r1.data[s2 * n + s2] <= 0) continue;
        expected += (b.data[s1 * n + s1] / t0) * (r1.data[s2 * n + s2] / t1) * trace(residualAfter(r1, [s2]));
      }
    }
    for (const variant of ["plain", "accelerated"] as const) {
      const samples = Array.from({ length: 1500 }, (_, t) => rpCholesky(b, { rank: 2, variant, blockSize: 2 }, [variant, t]).traceError);
      const c = checkMean(samples, expected, { comparisons: 2 });
      expect(c.ok, `${variant} ${JSON.stringify(c)}`).toBe(true);
    }
  });

  it("accelerated pivots follow the sequential law: χ² on ordered pivot pairs", () => {
    // Gram matrix of two near-duplicate long vectors and four short ones: without the rejection
    // step a block would often accept both twins, which the sequential algorithm almost never does.
    const x = randomMatrix(6, 6, { scale: 0.4 }, [3, "x"]);
    for (let c = 0; c < 6; c++) x.data[6 + c] = x.data[c] = c === 0 ? 2 : 0;
    x.data[6 + 1] = 0.3;
    const b = matmul(x, transpose(x));
    const n = b.rows;
    const t0 = trace(b);
    const probs = new Float64Array(n * n);
    for (let s1 = 0; s1 < n; s1++) {
      const r1 = residualAfter(b, [s1]);
      const t1 = trace(r1);
      for (let s2 = 0; s2 < n; s2++) if (s2 !== s1) probs[s1 * n + s2] = (b.data[s1 * n + s1] / t0) * (r1.data[s2 * n + s2] / t1);
    }
    const counts = new Float64Array(n * n);
    const trials = 3000;
    let candidates = 0;
    for (let t = 0; t < trials; t++) {
      const r = rpCholesky(b, { rank: 2, variant: "accelerated", blockSize: 2 }, ["chi2", t]);
      counts[r.pivots[0] * n + r.pivots[1]]++;
      candidates += r.candidates;
    }
    const x2 = chiSquareStatistic(counts, probs);
    const df = n * (n - 1) - 1;
    console.log(
      `accelerated pivot pairs: χ² = ${x2.toFixed(1)} (df ${df}, 99.9 % quantile ${chiSquareQuantile(1e-3, df).toFixed(1)}), ${candidates} candidates for ${2 * trials} pivots`,
    );
    expect(x2).toBeLessThan(chiSquareQuantile(1e-3, df));
    // Rejection happened (otherwise the test would not exercise it).
    expect(candidates).toBeGreaterThan(2 * trials);
  });

  it("Chen et al. Thm 5.1: E tr(A − Â) ≤ (1 + ε) tr(A − ⟦A⟧_r) at k ≥ r/ε + r log(1/(εη))", () => {
    const lambda = Array.from({ length: 120 }, (_, j) => 1 / (j + 1) ** 2);
    const b = psdWithSpectrum(lambda, 4);
    const r = 4;
    const eps = 1;
    const tail = lambda.slice(r).reduce((x, y) => x + y, 0);
    const eta = tail / lambda.reduce((x, y) => x + y, 0);
    const k = Math.ceil(r / eps + r * Math.log(1 / (eps * eta)));
    for (const variant of ["plain", "accelerated"] as const) {
      const samples = Array.from({ length: 60 }, (_, t) => rpCholesky(psdMatrixColumns(b), { rank: k, variant }, ["thm", t]).traceError);
      const c = checkMean(samples, 0);
      // One-sided: the mean's upper confidence limit must not exceed the bound… and the bound is not vacuous.
      expect(c.mean - c.halfWidth).toBeLessThanOrEqual((1 + eps) * tail);
      // Eckart–Young: no rank-k approximation beats tr(A − ⟦A⟧_k).
      expect(c.mean).toBeGreaterThanOrEqual(lambda.slice(k).reduce((x, y) => x + y, 0));
      console.log(
        `Thm 5.1 ${variant}: k=${k} mean ${c.mean.toPrecision(4)} ± ${c.standardError.toPrecision(2)}, bound ${((1 + eps) * tail).toPrecision(4)}, optimum(k) ${lambda
          .slice(k)
          .reduce((x, y) => x + y, 0)
          .toPrecision(4)}`,
      );
    }
  });

  it("counts entries and random bits; typed errors", () => {
    const r = rpCholesky(a, { rank: 3 }, [1]);
    expect(r.cost.kernelEvaluations).toBe(10 + 3 * 10);
    expect(r.cost.randomBits).toBe(3 * 53);
    expect(() => rpCholesky(new Matrix(2, 3), { rank: 1 }, [1])).toThrow(ShapeError);
    expect(() => rpCholesky(a, { rank: 11 }, [1])).toThrow(ValueError);
    expect(() => rpCholesky(a, { rank: 2, variant: "greedy" as never }, [1])).toThrow(ValueError);
    const neg = new Matrix(2, 2, Float64Array.from([-1, 0, 0, 1]));
    expect(() => rpCholesky(neg, { rank: 1 }, [1])).toThrow(/PSD/);
  });
});
