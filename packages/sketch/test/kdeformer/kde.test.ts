// LSH-based KDE (Charikar–Siminelakis hashing-based estimator, KDEformer's KDE primitive):
// unbiasedness (plain, weighted, with exclusion), the L^(−½) error rate as a log-log slope, the
// one-bucket exact limit, the "auto" bit rule, typed errors.
import { Matrix, ShapeError, ValueError } from "@randattn/core";
import { exponentialKde } from "@randattn/sketch";
import { describe, expect, it } from "vitest";
import { bonferroniZ } from "../helpers/stats.js";
import { keys, n, queries } from "../lsh/fixtures.js";
import { worstStandardizedDeviation } from "../lsh/unbiased.js";

const scale = 0.4;
const logWeights = Float64Array.from({ length: n }, (_, j) => Math.sin(j) - 0.5);
const exclude = {
  pointGroups: Int32Array.from({ length: n }, (_, j) => j % 3),
  targetGroups: Int32Array.from({ length: n }, (_, i) => (i * 7) % 4),
};

/** Σ_j w_j exp(s⟨x_j, y_i⟩) over the kept points, literally. */
function reference(weighted: boolean, excluded: boolean): Matrix {
  const out = new Matrix(n, 1);
  const d = keys.cols;
  for (let i = 0; i < n; i++) {
    let s = 0;
    for (let j = 0; j < n; j++) {
      if (excluded && exclude.pointGroups[j] === exclude.targetGroups[i]) continue;
      let dot = 0;
      for (let t = 0; t < d; t++) dot += keys.data[j * d + t] * queries.data[i * d + t];
      s += Math.exp((weighted ? logWeights[j] : 0) + scale * dot);
    }
    out.data[i] = s;
  }
  return out;
}

const asMatrix = (logDensity: Float64Array) => new Matrix(n, 1, Float64Array.from(logDensity, Math.exp));

describe("exponentialKde", () => {
  it("unbiased: the mean of 400 seeded estimates is within z·σ̂/√T of F(y), plain, weighted with exclusion, sphere transform", () => {
    for (const [weighted, excluded, transform] of [
      [false, false, "none"],
      [true, true, "none"],
      [true, false, "sphere"],
    ] as const) {
      const ref = reference(weighted, excluded);
      const options = {
        numTables: 2,
        numBits: 3,
        bucketSamples: 2,
        scale,
        transform,
        ...(weighted ? { logWeights } : {}),
        ...(excluded ? { exclude } : {}),
      };
      const { worst, z } = worstStandardizedDeviation(
        (t) => asMatrix(exponentialKde(keys, queries, options, [31, transform, weighted ? 1 : 0, t]).logDensity),
        ref,
        400,
        n,
      );
      expect(worst).toBeLessThanOrEqual(z);
    }
  });

  it("relative MSE ∝ 1/L: log-log slope over L = 1…64 is −1 within z·SE (independent tables)", () => {
    const ref = reference(false, false);
    const tables = [1, 4, 16, 64];
    const trials = 150;
    const logMse: number[] = [];
    const varLog: number[] = [];
    for (const L of tables) {
      const e = new Float64Array(trials);
      for (let t = 0; t < trials; t++) {
        const est = exponentialKde(keys, queries, { numTables: L, numBits: 3, bucketSamples: 1, scale }, [32, L, t]).logDensity;
        let s = 0;
        for (let i = 0; i < n; i++) s += (Math.exp(est[i]) / ref.data[i] - 1) ** 2;
        e[t] = s / n;
      }
      let m = 0;
      for (const x of e) m += x / trials;
      let v = 0;
      for (const x of e) v += (x - m) ** 2 / (trials - 1);
      logMse.push(Math.log(m));
      varLog.push(v / (trials * m * m)); // delta method: Var log m̂ ≈ Var(e)/(T m²)
    }
    const x = tables.map(Math.log);
    const xBar = x.reduce((a, b) => a + b) / x.length;
    const sxx = x.reduce((a, b) => a + (b - xBar) ** 2, 0);
    const slope = x.reduce((a, xi, k) => a + (xi - xBar) * logMse[k], 0) / sxx;
    const se = Math.sqrt(x.reduce((a, xi, k) => a + (xi - xBar) ** 2 * varLog[k], 0)) / sxx;
    expect(Math.abs(slope + 1)).toBeLessThanOrEqual(bonferroniZ(1e-3, 1) * se);
    expect(se).toBeLessThan(0.1); // the check has power: it separates −1 from 0 (correlated tables) by > 10 SE
  });

  it("one bucket enumerated in full (r = 0, s ≥ N) is exact to 1e-12, weighted with exclusion", () => {
    const ref = reference(true, true);
    const est = exponentialKde(keys, queries, { numTables: 3, numBits: 0, bucketSamples: n, scale, logWeights, exclude }, [1]);
    for (let i = 0; i < n; i++) expect(Math.abs(Math.exp(est.logDensity[i]) / ref.data[i] - 1)).toBeLessThanOrEqual(1e-12);
    expect(est.cost.hashes).toBe(0);
    expect(est.cost.kernelEvaluations).toBeGreaterThan(0);
  });

  it('"auto" bits: r = round(π·s·median‖x‖·median‖y‖/4), clamped to [0, ⌊log₂ N⌋]', () => {
    const norms = (m: Matrix) =>
      Float64Array.from({ length: m.rows }, (_, i) => Math.hypot(...m.data.subarray(i * m.cols, (i + 1) * m.cols))).sort();
    const beta = (s: number) => s * norms(keys)[n >> 1] * norms(queries)[n >> 1];
    for (const s of [1e-3, 0.05, 0.2, 10]) {
      const want = Math.min(Math.floor(Math.log2(n)), Math.max(0, Math.round((Math.PI * beta(s)) / 4)));
      expect(exponentialKde(keys, queries, { scale: s }, [1]).numBits).toBe(want);
    }
    expect(exponentialKde(keys, queries, { scale: 10 }, [1]).numBits).toBe(5);
    expect(exponentialKde(keys, queries, { scale: 1e-3 }, [1]).numBits).toBe(0);
  });

  it("cost counts hashes, random bits and kernel evaluations", () => {
    const r = exponentialKde(keys, queries, { numTables: 4, numBits: 3, bucketSamples: 2, scale }, [3]);
    expect(r.cost.hashes).toBe(4 * 2 * n);
    expect(r.cost.kernelEvaluations).toBeLessThanOrEqual(4 * 2 * n);
    expect(r.cost.randomBits).toBeGreaterThanOrEqual(64 * 4 * 3 * keys.cols);
    expect(r.cost.flops).toBeGreaterThan(r.cost.kernelEvaluations * 2 * keys.cols);
  });

  it("bad input: typed errors naming the argument", () => {
    const bad: [() => unknown, new (...a: never[]) => Error, RegExp][] = [
      [() => exponentialKde(keys, new Matrix(2, 3), {}, [1]), ShapeError, /targets/],
      [() => exponentialKde(keys, queries, null as never, [1]), ValueError, /options/],
      [() => exponentialKde(keys, queries, { numTables: 0 }, [1]), ValueError, /numTables/],
      [() => exponentialKde(keys, queries, { numBits: 30 }, [1]), ValueError, /numBits/],
      [() => exponentialKde(keys, queries, { bucketSamples: 1.5 }, [1]), ValueError, /bucketSamples/],
      [() => exponentialKde(keys, queries, { scale: -1 }, [1]), ValueError, /scale/],
      [() => exponentialKde(keys, queries, { transform: "cube" as never }, [1]), ValueError, /transform/],
      [() => exponentialKde(keys, queries, { logWeights: new Float64Array(3) }, [1]), ShapeError, /logWeights/],
      [() => exponentialKde(keys, queries, { logWeights: new Float64Array(n).fill(Number.NaN) }, [1]), ValueError, /logWeights/],
      [
        () => exponentialKde(keys, queries, { exclude: { pointGroups: new Int32Array(n), targetGroups: new Int32Array(2) } }, [1]),
        ShapeError,
        /targetGroups/,
      ],
    ];
    for (const [call, type, name] of bad) {
      expect(call).toThrow(type);
      expect(call).toThrow(name);
    }
  });
});
