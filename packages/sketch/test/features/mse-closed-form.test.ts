/**
 * Performer Lemma 2 (Choromanski et al. 2021): closed-form MSE of the softmax-kernel estimators
 * with m i.i.d. frequencies (z = x + y, Δ = x − y, SM = e^{xᵀy}):
 *   positive:   (1/m) e^{‖z‖²} SM² (1 − e^{−‖z‖²})
 *   trig:       (1/(2m)) e^{‖z‖²} SM^{−2} (1 − e^{−‖Δ‖²})²
 *   hyperbolic: ½ (1 − e^{−‖z‖²}) · MSE₊
 * Checked twice: algebraically against the variance derived from the Gaussian MGF (termMoments),
 * and by Monte Carlo with the library's own maps, within 4 standard deviations of the mean squared
 * error, the standard deviation coming from the exact fourth moment of the estimator.
 */
import { Matrix } from "@randattn/core";
import { describe, expect, it } from "vitest";
import { drawProjection, randomFeatures } from "../../src/features/index.js";
import { dot, norm2, squaredErrorMoments, termMoments } from "./reference.js";

type Kind = "positive" | "trig" | "hyperbolic";

function performerMse(kind: Kind, x: number[], y: number[], m: number): number {
  const z = x.map((v, i) => v + y[i]);
  const delta = x.map((v, i) => v - y[i]);
  const sm = Math.exp(dot(x, y));
  const pos = (1 / m) * Math.exp(norm2(z)) * sm * sm * (1 - Math.exp(-norm2(z)));
  if (kind === "positive") return pos;
  if (kind === "hyperbolic") return 0.5 * (1 - Math.exp(-norm2(z))) * pos;
  return (1 / (2 * m)) * Math.exp(norm2(z)) * sm ** -2 * (1 - Math.exp(-norm2(delta))) ** 2;
}

/** One estimate φ(x)ᵀφ(y) with the library (scale 1 on the inputs so x, y are used as given). */
function estimate(kind: Kind, x: number[], y: number[], m: number, seed: readonly [number, ...(string | number)[]]): number {
  const omega = drawProjection(m, x.length, { projection: "iid" }, seed);
  const xy = Matrix.fromArray([x, y]);
  const { features } = randomFeatures(xy, omega, { features: kind, kernel: { kind: "softmax", scale: 1 } });
  return dot(features.rowView(0), features.rowView(1));
}

const pairs: [number[], number[]][] = [
  [
    [0.3, -0.2, 0.25, 0.1],
    [0.2, 0.1, -0.3, 0.25],
  ],
  [
    [0.5, 0.1, -0.2, 0.3],
    [0.35, -0.15, 0.1, 0.2],
  ],
];
const kinds: Kind[] = ["positive", "trig", "hyperbolic"];

describe("Performer closed-form MSE (Lemma 2)", () => {
  it("equals the variance of one frequency's term divided by m (exact algebra)", () => {
    for (const [x, y] of pairs)
      for (const kind of kinds)
        for (const m of [1, 16]) {
          const { mse } = squaredErrorMoments(termMoments(kind, x, y), m);
          expect(Math.abs(performerMse(kind, x, y, m) - mse) / mse).toBeLessThan(1e-10);
        }
  });

  it("estimators are unbiased for SM(x, y) (the exact term mean is e^{xᵀy})", () => {
    for (const [x, y] of pairs)
      for (const kind of kinds) {
        const mean = termMoments(kind, x, y)[1];
        expect(Math.abs(mean - Math.exp(dot(x, y))) / mean).toBeLessThan(1e-12);
      }
  });

  it("matches the Monte-Carlo mean squared error of the library's features within 4σ", () => {
    const m = 16;
    const trials = 1500;
    for (const [p, [x, y]] of pairs.entries())
      for (const kind of kinds) {
        const sm = Math.exp(dot(x, y));
        let sum = 0;
        for (let t = 0; t < trials; t++) sum += (estimate(kind, x, y, m, [7, "mse", kind, p, t]) - sm) ** 2;
        const mc = sum / trials;
        const { variance } = squaredErrorMoments(termMoments(kind, x, y), m);
        const closed = performerMse(kind, x, y, m);
        const tol = 4 * Math.sqrt(variance / trials);
        expect(Math.abs(mc - closed), `${kind} pair ${p}: MC ${mc} vs closed form ${closed} (4σ = ${tol})`).toBeLessThan(tol);
        // The tolerance is a real constraint: a factor 2 error in m (e.g. counting 2m trig features) would fail it.
        expect(tol).toBeLessThan(0.5 * closed);
      }
  });
  it("draws use fresh frequencies per seed (a fixed Ω would give zero spread)", () => {
    const [x, y] = pairs[0];
    const a = estimate("positive", x, y, 16, [7, "spread", 0]);
    const b = estimate("positive", x, y, 16, [7, "spread", 1]);
    expect(a).not.toBe(b);
  });
});
