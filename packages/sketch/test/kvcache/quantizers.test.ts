/**
 * Theory of the quantizing caches: QJL's estimator unbiased with its closed-form variance; the
 * scalar quantizers' error against Δ²/12 and Max's Gaussian table; the random rotation's effect on
 * coordinate distributions; TurboQuant's residual making inner products unbiased. Tolerances are
 * 4 standard errors of the Monte Carlo estimates (computed from the samples themselves).
 */
import { Matrix, RandomStream, randomMatrix } from "@randattn/core";
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import {
  PackedCodes,
  RandomRotation,
  TurboQuantCache,
  gaussianOptimalStep,
  gaussianUniformMse,
  minMaxQuantize,
  minMaxValue,
  qjlEstimate,
  qjlVariance,
  symmetricCode,
  symmetricLevel,
} from "../../src/index.js";
import { symmetricLevels } from "../../src/kvcache/quantize.js";
import { gaussianMatrix, packSigns, projectVector } from "../../src/kvcache/qjl.js";

function moments(x: number[]): { mean: number; variance: number; kurtosis: number } {
  const n = x.length;
  const mean = x.reduce((a, b) => a + b, 0) / n;
  let m2 = 0;
  let m4 = 0;
  for (const v of x) {
    m2 += (v - mean) ** 2;
    m4 += (v - mean) ** 4;
  }
  m2 /= n - 1;
  m4 /= n;
  return { mean, variance: m2, kurtosis: m4 / (m2 * m2) };
}

describe("QJL: unbiased inner products with variance [(π/2)‖q‖²‖k‖² − ⟨q,k⟩²]/m", () => {
  const d = 16;
  const m = 24;
  const draws = 4000;
  for (const [name, cos] of [
    ["correlated (cos ≈ 0.8)", 0.8],
    ["orthogonal-ish (cos ≈ 0.1)", 0.1],
  ] as const) {
    it(name, () => {
      const s = new RandomStream([11, name]);
      const q = Float64Array.from({ length: d }, () => s.gaussian());
      const noise = Float64Array.from({ length: d }, () => s.gaussian());
      const k = q.map((v, i) => 1.5 * (cos * v + Math.sqrt(1 - cos * cos) * noise[i]));
      const ip = q.reduce((a, v, i) => a + v * k[i], 0);
      const nq = Math.hypot(...q);
      const nk = Math.hypot(...k);
      const est: number[] = [];
      for (let r = 0; r < draws; r++) {
        const S = gaussianMatrix(m, d, [11, name, r]);
        est.push(qjlEstimate(projectVector(S, q), packSigns(projectVector(S, k)), nk));
      }
      const { mean, variance, kurtosis } = moments(est);
      const theory = qjlVariance(nq, nk, ip, m);
      // Mean: within 4 standard errors of ⟨q, k⟩. Variance: the sample variance's standard error is
      // σ²√((κ − 1)/N) with κ the kurtosis (estimated from the same draws).
      expect(Math.abs(mean - ip)).toBeLessThan(4 * Math.sqrt(theory / draws));
      expect(Math.abs(variance / theory - 1)).toBeLessThan(4 * Math.sqrt((kurtosis - 1) / draws));
      console.log(
        `QJL ${name}: variance ${variance.toFixed(3)} vs theory ${theory.toFixed(3)}; mean ${mean.toFixed(3)} vs ${ip.toFixed(3)}`,
      );
    });
  }
});

describe("uniform scalar quantizers", () => {
  it("min–max (KIVI) at b = 1, 2, 3, 4, 8 on uniform data: MSE/(Δ²/12) = 1 and no bias, within 4 standard errors", () => {
    const n = 20000;
    const s = new RandomStream([12]);
    const x = Float64Array.from({ length: n }, () => -1 + 4 * s.uniform());
    for (const b of [1, 2, 3, 4, 8]) {
      const { codes, lo, step } = minMaxQuantize(x, b);
      let se = 0;
      let bias = 0;
      for (let i = 0; i < n; i++) {
        const e = x[i] - minMaxValue(codes.get(i), lo, step);
        se += e * e;
        bias += e;
      }
      const ratio = se / n / ((step * step) / 12);
      // e ~ U(−Δ/2, Δ/2): Var(e²)/(Δ²/12)² = 144/80 − 1 = 0.8, so the ratio's standard error is √(0.8/n).
      expect(Math.abs(ratio - 1)).toBeLessThan(4 * Math.sqrt(0.8 / n));
      expect(Math.abs(bias / n)).toBeLessThan(4 * step * Math.sqrt(1 / 12 / n));
      expect(codes.bytes.length).toBe(Math.ceil((n * b) / 8));
      console.log(`min-max b=${b}: MSE/(Δ²/12) = ${ratio.toFixed(4)}, bias ${(bias / n).toExponential(2)}`);
    }
  });

  it("the Gaussian-optimal uniform steps and MSEs match Max (1960), Table of uniform quantizers", () => {
    // Max, "Quantizing for minimum distortion", IRE Trans. IT-6 (1960), uniform case for N(0, 1):
    // levels 2, 4, 8, 16 → optimal step 1.596, 0.9957, 0.5860, 0.3352 and MSE 0.3634, 0.1188, 0.03744, 0.01154.
    const table: [number, number, number][] = [
      [1, 1.596, 0.3634],
      [2, 0.9957, 0.1188],
      [3, 0.586, 0.03744],
      [4, 0.3352, 0.01154],
    ];
    for (const [b, step, mse] of table) {
      expect(Math.abs(gaussianOptimalStep(b) / step - 1)).toBeLessThan(2e-3);
      expect(Math.abs(gaussianUniformMse(gaussianOptimalStep(b), b) / mse - 1)).toBeLessThan(3e-3);
    }
    // Each extra bit divides the distortion by about 4 (6 dB per bit) once overload is small.
    for (let b = 4; b < 8; b++) {
      const r = gaussianUniformMse(gaussianOptimalStep(b), b) / gaussianUniformMse(gaussianOptimalStep(b + 1), b + 1);
      expect(r).toBeGreaterThan(3);
      expect(r).toBeLessThan(4);
    }
  });
});

describe("random rotations", () => {
  it("Haar and SRHT are orthogonal (‖Πx‖ = ‖x‖, ΠᵀΠx = x to 1e-12)", () => {
    for (const kind of ["haar", "srht"] as const) {
      for (const d of [8, 12]) {
        const rot = new RandomRotation(kind, d, [13, kind, d]);
        const x = Float64Array.from(randomMatrix(1, d, {}, [13, "x"]).data);
        const y = rot.apply(x);
        expect(Math.abs(Math.hypot(...y) - Math.hypot(...x))).toBeLessThan(1e-12);
        const back = rot.applyTranspose(y);
        for (let i = 0; i < d; i++) expect(Math.abs(back[i] - x[i])).toBeLessThan(1e-12);
      }
    }
  });

  it("a spike e₁ becomes a uniform point of the sphere under Haar: E[y²] = 1/d, E[y⁴] = 3/(d(d+2)); SRHT flattens it to ±1/√p", () => {
    const d = 16;
    const ys: number[] = [];
    const e1 = new Float64Array(d);
    e1[0] = 1;
    for (let r = 0; r < 400; r++) ys.push(...new RandomRotation("haar", d, [14, r]).apply(e1));
    const n = ys.length;
    const m2 = ys.reduce((a, v) => a + v * v, 0) / n;
    const m4 = ys.reduce((a, v) => a + v ** 4, 0) / n;
    // Coordinates of one draw are dependent, so the standard errors use the 400 draws (rows of d): loose 4-SE bands.
    const se2 = Math.sqrt((m4 - m2 * m2) / 400);
    expect(Math.abs(m2 - 1 / d)).toBeLessThan(4 * se2);
    expect(Math.abs(m4 / (3 / (d * (d + 2))) - 1)).toBeLessThan(0.15);
    const srht = new RandomRotation("srht", d, [14, "srht"]).apply(e1);
    for (const v of srht) expect(Math.abs(Math.abs(v) - 1 / 4)).toBeLessThan(1e-15);
  });

  it("after rotation the Gaussian codebook's MSE holds for spiky vectors; without rotation it fails", () => {
    const d = 64;
    const b = 3;
    const step = gaussianOptimalStep(b) / Math.sqrt(d);
    const q = (y: ArrayLike<number>) => {
      let e = 0;
      for (let i = 0; i < y.length; i++) e += (y[i] - symmetricLevel(symmetricCode(y[i], step, b), step, b)) ** 2;
      return e;
    };
    let rotated = 0;
    let raw = 0;
    const trials = 200;
    for (let r = 0; r < trials; r++) {
      const x = new Float64Array(d);
      x[r % d] = 1; // a one-hot spike: the worst case for a per-coordinate codebook
      raw += q(x);
      rotated += q(new RandomRotation("haar", d, [15, r]).apply(x));
    }
    // Theory: each rotated coordinate ≈ N(0, 1/d), so ‖y − ŷ‖² ≈ d · MSE_b(N(0,1))/d = MSE_b.
    const theory = gaussianUniformMse(gaussianOptimalStep(b), b);
    expect(Math.abs(rotated / trials / theory - 1)).toBeLessThan(0.1);
    expect(raw / trials).toBeGreaterThan(10 * theory);
  });

  it("TurboQuant's 1-bit QJL residual makes ⟨q, k⟩ unbiased; the MSE quantizer alone is biased", () => {
    const d = 16;
    const keys = randomMatrix(1, d, {}, [16, "k"]);
    const qv = Float64Array.from(randomMatrix(1, d, {}, [16, "q"]).data);
    const ip = qv.reduce((a, v, i) => a + v * keys.data[i], 0);
    const draws = 600;
    const withResidual: number[] = [];
    const mseOnly: number[] = [];
    for (let r = 0; r < draws; r++) {
      for (const [residual, out] of [
        [true, withResidual],
        [false, mseOnly],
      ] as const) {
        const cache = new TurboQuantCache({ numKvHeads: 1, keyDim: d, valueDim: 2, bits: residual ? 2 : 1, residual }, [16, r]);
        cache.step({ queries: [new Matrix(1, d, qv.slice())], keys: [keys], values: [Matrix.zeros(1, 2)] });
        out.push(cache.keyInnerProducts(0, qv)[0]);
      }
    }
    const a = moments(withResidual);
    const b = moments(mseOnly);
    expect(Math.abs(a.mean - ip)).toBeLessThan(4 * Math.sqrt(a.variance / draws));
    expect(Math.abs(b.mean - ip)).toBeGreaterThan(4 * Math.sqrt(b.variance / draws));
    console.log(`TurboQuant ⟨q,k⟩ = ${ip.toFixed(3)}: residual mean ${a.mean.toFixed(3)}, MSE-only mean ${b.mean.toFixed(3)}`);
  });
});

describe("PackedCodes.unpack", () => {
  it("returns get(i) for every code: bit widths 1…24 and 31, counts that end mid-byte and mid-window (fast-check)", () => {
    fc.assert(
      fc.property(
        fc.constantFrom(1, 2, 3, 4, 5, 7, 8, 9, 13, 16, 17, 24, 31),
        fc.integer({ min: 0, max: 70 }),
        fc.nat(),
        (bits, count, seed) => {
          const codes = new PackedCodes(count, bits);
          let s = seed | 1;
          for (let i = 0; i < count; i++) {
            s = (Math.imul(s, 1103515245) + 12345) | 0;
            codes.set(i, (s >>> 1) % 2 ** bits);
          }
          const want = Int32Array.from({ length: count }, (_, i) => codes.get(i));
          expect(codes.unpack()).toEqual(want);
          const into = new Int32Array(count).fill(-1);
          expect(codes.unpack(into)).toBe(into);
          expect(into).toEqual(want);
        },
      ),
      { numRuns: 300, seed: 1414 },
    );
  });
});

describe("symmetricLevels", () => {
  it("is symmetricLevel of every code, bit for bit (widths 1–8, unit and odd steps)", () => {
    for (let bits = 1; bits <= 8; bits++) {
      const codes = new PackedCodes(37, bits);
      for (let i = 0; i < 37; i++) codes.set(i, (i * 2654435761) % 2 ** bits);
      for (const step of [1, 0.1, Math.PI / 7]) {
        const want = Float64Array.from({ length: 37 }, (_, i) => symmetricLevel(codes.get(i), step, bits));
        expect(symmetricLevels(codes, step)).toEqual(want);
      }
    }
  });
});
