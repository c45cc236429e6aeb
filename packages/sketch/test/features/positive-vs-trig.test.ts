/**
 * Performer §2.3: as SM(x, y) → 0 (xᵀy very negative) the trig estimator's MSE blows up (∝ SM⁻²)
 * while the positive one's vanishes (∝ SM²). Checked on the closed forms and by Monte Carlo with the
 * library's maps, on a sequence of pairs y = −t·x with growing t.
 */
import { Matrix } from "@randattn/core";
import { describe, expect, it } from "vitest";
import { drawProjection, randomFeatures } from "../../src/features/index.js";
import { dot, squaredErrorMoments, termMoments } from "./reference.js";

function mcRelativeMse(kind: "positive" | "trig", x: number[], y: number[], m: number, trials: number): number {
  const sm = Math.exp(dot(x, y));
  let sum = 0;
  for (let t = 0; t < trials; t++) {
    const omega = drawProjection(m, x.length, { projection: "iid" }, [11, "pvt", kind, t]);
    const { features } = randomFeatures(Matrix.fromArray([x, y]), omega, { features: kind, kernel: { kind: "softmax", scale: 1 } });
    sum += ((dot(features.rowView(0), features.rowView(1)) - sm) / sm) ** 2;
  }
  return sum / trials;
}

describe("positive features beat trig features as SM → 0", () => {
  const x = [0.6, -0.4, 0.5, 0.3];
  const ys = [0.2, 0.6, 1.0].map((t) => x.map((v) => -t * v));

  it("closed forms: the trig/positive MSE ratio grows without bound as SM decreases", () => {
    let prevRatio = 0;
    let prevSm = Number.POSITIVE_INFINITY;
    for (const y of ys) {
      const sm = Math.exp(dot(x, y));
      const pos = squaredErrorMoments(termMoments("positive", x, y), 32).mse;
      const trig = squaredErrorMoments(termMoments("trig", x, y), 32).mse;
      expect(sm).toBeLessThan(prevSm);
      expect(trig / pos).toBeGreaterThan(prevRatio);
      prevRatio = trig / pos;
      prevSm = sm;
    }
    expect(prevRatio).toBeGreaterThan(10);
  });

  it("Monte Carlo: positive relative MSE is below trig's, and trig's grows while SM shrinks", () => {
    let prevTrig = 0;
    for (const y of ys) {
      const pos = mcRelativeMse("positive", x, y, 32, 400);
      const trig = mcRelativeMse("trig", x, y, 32, 400);
      expect(pos).toBeLessThan(trig);
      expect(trig).toBeGreaterThan(prevTrig);
      prevTrig = trig;
    }
  });
});
