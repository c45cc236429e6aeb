/**
 * The bidirectional path streams the features in blocks of 256 rows (issue 14): keys transposed per
 * block into state += φ(K)ᵀV with z = φ(K)ᵀ1 and the feature norm folded into that pass, queries'
 * numerators and normalizers as one product with [state | z]. Here N_Q and N_KV span several
 * blocks with partial last ones (and a padding length inside a block), m is not a power of 4 (the
 * norm folding then reassociates), and the result is checked against plain-loop features and the
 * literal ratio D⁻¹ Â V — a dropped, repeated or misplaced block moves the output by O(1), far
 * beyond the 1e-12 allowed for rounding. A large call then a small one checks that the reused
 * workspace of the keys' projection leaks nothing into the next call.
 */
import { Matrix, maxAbs, maxAbsDiff, randomMatrix } from "@randattn/core";
import { describe, expect, it } from "vitest";
import { randomFeatureAttention, randomFeatures } from "../../src/features/index.js";
import { featureProductMatrix, maskedRatio } from "./reference.js";

type Kind = "positive" | "hyperbolic" | "trig";

/** φ(x) by plain loops, unshifted (module doc of features/maps.ts), softmax kernel, x = q/d^¼. */
function plainFeatures(x: Matrix, omega: Matrix, kind: Kind): Matrix {
  const d = x.cols;
  const m = omega.rows;
  const s = Math.sqrt(1 / Math.sqrt(d));
  const out = new Matrix(x.rows, kind === "positive" ? m : 2 * m);
  for (let i = 0; i < x.rows; i++) {
    let n2 = 0;
    for (let t = 0; t < d; t++) n2 += (s * x.get(i, t)) ** 2;
    for (let l = 0; l < m; l++) {
      let u = 0;
      for (let t = 0; t < d; t++) u += s * x.get(i, t) * omega.get(l, t);
      if (kind === "positive") out.set(i, l, Math.exp(u - n2 / 2) / Math.sqrt(m));
      else if (kind === "hyperbolic") {
        out.set(i, l, Math.exp(u - n2 / 2) / Math.sqrt(2 * m));
        out.set(i, m + l, Math.exp(-u - n2 / 2) / Math.sqrt(2 * m));
      } else {
        out.set(i, l, (Math.exp(n2 / 2) * Math.sin(u)) / Math.sqrt(m));
        out.set(i, m + l, (Math.exp(n2 / 2) * Math.cos(u)) / Math.sqrt(m));
      }
    }
  }
  return out;
}

function check(nQ: number, nKV: number, keyLength: number, m: number, kind: Kind, seed: number): void {
  const q = randomMatrix(nQ, 8, { scale: 0.5 }, [seed, "q"]);
  const k = randomMatrix(nKV, 8, { scale: 0.5 }, [seed, "k"]);
  const v = randomMatrix(nKV, 3, {}, [seed, "v"]);
  const mask = keyLength < nKV ? { mask: { kind: "padding" as const, keyLength } } : {};
  const res = randomFeatureAttention(q, k, v, { numFrequencies: m, features: kind, onNonPositiveNormalizer: "keep", ...mask }, [
    seed,
    "rf",
  ]);
  const a = featureProductMatrix(plainFeatures(q, res.omega, kind), plainFeatures(k, res.omega, kind));
  const ref = maskedRatio(a, v, (_, j) => j < keyLength);
  expect(maxAbsDiff(res.output, ref) / maxAbs(ref)).toBeLessThan(1e-12);
  let worst = 0;
  for (let i = 0; i < nQ; i++) {
    let dTrue = 0;
    for (let j = 0; j < keyLength; j++) dTrue += a.get(i, j);
    const dRep = res.normalizer[i] * Math.exp(res.normalizerLogScale[i]);
    worst = Math.max(worst, Math.abs(dRep - dTrue) / Math.abs(dTrue));
  }
  expect(worst).toBeLessThan(1e-12);
}

describe("streamed bidirectional random-feature attention (blocks of 256 rows)", () => {
  for (const kind of ["positive", "hyperbolic", "trig"] as const) {
    it(`${kind}: N_Q = 600, N_KV = 530 padded to 517, m = 12, equals the literal ratio`, () => {
      check(600, 530, 517, 12, kind, 41);
    });
  }

  it("m = 16 (norm a power of 2) and N = 513: one row past two full blocks", () => {
    check(513, 513, 513, 16, "positive", 42);
  });

  it("a small call after a large one: the reused key workspace leaks nothing", () => {
    check(700, 900, 900, 16, "positive", 43);
    check(40, 37, 37, 16, "positive", 44);
  });

  it("randomFeatures with the global shift over several blocks equals the plain map up to its one shift", () => {
    const x = randomMatrix(600, 8, { scale: 0.5 }, [45, "x"]);
    const omega = randomMatrix(12, 8, {}, [45, "o"]);
    const { features, logScale } = randomFeatures(x, omega, { shift: "global" });
    const plain = plainFeatures(x, omega, "positive");
    let worst = 0;
    for (let i = 0; i < x.rows; i++)
      for (let l = 0; l < 12; l++) {
        const want = plain.get(i, l);
        worst = Math.max(worst, Math.abs(features.get(i, l) * Math.exp(logScale[i]) - want) / want);
      }
    expect(new Set(logScale).size).toBe(1);
    expect(worst).toBeLessThan(1e-12);
  });
});
