/**
 * Feature maps for other kernels: Gaussian RBF (trig = Rahimi–Recht RFF; positive/hyperbolic via
 * RBF = e^{−‖x‖²/2}e^{−‖y‖²/2}SM) and Laplacian (trig with Cauchy frequencies) are unbiased: the mean
 * of φ(q)ᵀφ(k) over seeded draws is within 4 standard errors of the exact kernel value.
 */
import { Matrix } from "@randattn/core";
import { describe, expect, it } from "vitest";
import { type FeatureKernel, type FeatureKind, drawProjection, randomFeatures, resolveKernel } from "../../src/features/index.js";
import { dot } from "./reference.js";

const q = [0.4, -0.9, 0.3];
const k = [-0.2, 0.5, 0.8];

function check(kernel: FeatureKernel, kind: FeatureKind, exact: number): void {
  const resolved = resolveKernel(kernel, kind, 3);
  const trials = 3000;
  let s1 = 0;
  let s2 = 0;
  for (let t = 0; t < trials; t++) {
    const omega = drawProjection(4, 3, { distribution: resolved.distribution }, [31, kernel.kind, kind, t]);
    const { features } = randomFeatures(Matrix.fromArray([q, k]), omega, { features: kind, kernel });
    const e = dot(features.rowView(0), features.rowView(1));
    s1 += e;
    s2 += e * e;
  }
  const mean = s1 / trials;
  const se = Math.sqrt((s2 / trials - mean * mean) / trials);
  expect(Math.abs(mean - exact), `${kernel.kind}/${kind}: mean ${mean} vs ${exact} (SE ${se})`).toBeLessThan(4 * se);
  expect(se).toBeLessThan(0.05 * exact); // the check has teeth
}

describe("feature maps for other kernels are unbiased", () => {
  const sigma = 1.3;
  const sq = q.reduce((a, x, i) => a + (x - k[i]) ** 2, 0);
  const l1 = q.reduce((a, x, i) => a + Math.abs(x - k[i]), 0);
  for (const kind of ["trig", "positive", "hyperbolic"] as const)
    it(`gaussian RBF, ${kind}`, () => check({ kind: "gaussian", bandwidth: sigma }, kind, Math.exp(-sq / (2 * sigma * sigma))));
  it("laplacian, trig (Cauchy)", () => check({ kind: "laplacian", bandwidth: sigma }, "trig", Math.exp(-l1 / sigma)));
  it("laplacian refuses positive features", () => {
    expect(() => resolveKernel({ kind: "laplacian", bandwidth: 1 }, "positive", 3)).toThrow(/trig/);
  });
});
