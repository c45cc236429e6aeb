/**
 * Bidirectional random-feature attention Ŷ = D⁻¹φ(Q)(φ(K)ᵀV) equals the literal ratio with the
 * explicit approximate matrix (plain loops) to 1e-12; padding masks drop keys; the stabilizing
 * shifts cancel (inputs whose unshifted features underflow still give the literal ratio, computed
 * in log space), and the reported normalizer times exp(logScale) is the true D.
 */
import { Matrix, maxAbs, maxAbsDiff, randomMatrix, sliceRows } from "@randattn/core";
import { describe, expect, it } from "vitest";
import { randomFeatureAttention, randomFeatures } from "../../src/features/index.js";
import { featureProductMatrix, maskedRatio } from "./reference.js";

describe("bidirectional random-feature attention", () => {
  const q = randomMatrix(21, 8, { scale: 0.8 }, [5, "q"]);
  const k = randomMatrix(30, 8, { scale: 0.8 }, [5, "k"]);
  const v = randomMatrix(30, 4, {}, [5, "v"]);

  for (const kind of ["positive", "hyperbolic", "trig"] as const)
    for (const projection of ["iid", "orthogonal"] as const) {
      it(`${kind}/${projection}: equals D⁻¹ Â V by plain loops, D reported exactly`, () => {
        const res = randomFeatureAttention(q, k, v, { numFrequencies: 12, features: kind, projection, onNonPositiveNormalizer: "keep" }, [
          5,
          "rf",
        ]);
        const phiQ = randomFeatures(q, res.omega, { features: kind }).features;
        const phiK = randomFeatures(k, res.omega, { features: kind }).features;
        const a = featureProductMatrix(phiQ, phiK);
        const ref = maskedRatio(a, v, () => true);
        expect(maxAbsDiff(res.output, ref) / maxAbs(ref)).toBeLessThan(1e-12);
        for (let i = 0; i < q.rows; i++) {
          let dTrue = 0;
          for (let j = 0; j < k.rows; j++) dTrue += a.get(i, j);
          const dRep = res.normalizer[i] * Math.exp(res.normalizerLogScale[i]);
          expect(Math.abs(dRep - dTrue) / Math.abs(dTrue)).toBeLessThan(1e-12);
        }
        expect(res.featureCount).toBe(kind === "positive" ? 12 : 24);
      });
    }

  it("padding keeps only the first keyLength keys", () => {
    const res = randomFeatureAttention(q, k, v, { numFrequencies: 10, mask: { kind: "padding", keyLength: 17 } }, [5, "pad"]);
    const same = randomFeatureAttention(q, sliceRows(k, 0, 17), sliceRows(v, 0, 17), { numFrequencies: 10, omega: res.omega }, [99]);
    expect(maxAbsDiff(res.output, same.output)).toBeLessThan(1e-14);
  });

  it("max-subtraction: exponents far beyond exp's range still give the literal ratio (log-space reference)", () => {
    // Here the unshifted positive features of the inputs underflow to 0 (exponents ≈ −‖x‖²/2 ≈ −2e3),
    // so the unshifted map must refuse, while the stabilized path must agree with the literal ratio
    // evaluated in log space (log-sum-exp), which never leaves the double range.
    const big = Matrix.from(6, 4, (i, j) => 60 * Math.sin(3 * i + j));
    const keys = Matrix.from(9, 4, (i, j) => 60 * Math.cos(i + 2 * j));
    const vals = randomMatrix(9, 3, {}, [6, "v"]);
    expect(() => randomFeatures(big, randomMatrix(16, 4, {}, [6, "o"]), { shift: "none" })).toThrow(/shift/);
    const res = randomFeatureAttention(big, keys, vals, { numFrequencies: 16, projection: "iid" }, [6]);
    for (const x of res.output.data) expect(Number.isFinite(x)).toBe(true);
    // Literal ratio in log space (plain loops), immune to overflow: log Â_ij = logφ(q_i) ⊕ logφ(k_j).
    const s = Math.sqrt(1 / Math.sqrt(4));
    const w = res.omega;
    const logPhi = (x: Matrix, i: number, l: number) => {
      let u = 0;
      let n2 = 0;
      for (let t = 0; t < 4; t++) {
        u += s * x.get(i, t) * w.get(l, t);
        n2 += (s * x.get(i, t)) ** 2;
      }
      return u - n2 / 2;
    };
    for (let i = 0; i < big.rows; i++) {
      const logs: number[] = [];
      for (let j = 0; j < keys.rows; j++) {
        const terms = Array.from({ length: 16 }, (_, l) => logPhi(big, i, l) + logPhi(keys, j, l));
        const mx = Math.max(...terms);
        logs.push(mx + Math.log(terms.reduce((acc, t) => acc + Math.exp(t - mx), 0)));
      }
      const mx = Math.max(...logs);
      const wts = logs.map((l) => Math.exp(l - mx));
      const z = wts.reduce((a, b) => a + b, 0);
      for (let c = 0; c < 3; c++) {
        let y = 0;
        for (let j = 0; j < keys.rows; j++) y += (wts[j] / z) * vals.get(j, c);
        expect(Math.abs(res.output.get(i, c) - y)).toBeLessThan(1e-10);
      }
    }
  });
});
