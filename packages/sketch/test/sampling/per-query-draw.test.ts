import { Matrix, type SeedKey, derive, randomMatrix } from "@randattn/core";
import { defensiveMixture, drawWeightedSample, normalizeWeights, sampledValueProduct } from "@randattn/sketch";
import { describe, expect, it } from "vitest";
import { values, weightsP } from "./fixtures.js";

/** The former per-query draw (one normalize → mixture → alias table → sample chain per row), kept as the oracle. */
function oracle(w: Matrix, v: Matrix, s: number, eps: number, seed: SeedKey) {
  const { rows: nQ, cols: n } = w;
  const dV = v.cols;
  const indices = new Int32Array(nQ * s);
  const c = new Float64Array(nQ * s);
  const probabilities = new Float64Array(nQ * n);
  const out = new Float64Array(nQ * dV);
  for (let i = 0; i < nQ; i++) {
    const p = defensiveMixture(normalizeWeights(w.data.subarray(i * n, (i + 1) * n), `weights[${i}]`), eps);
    probabilities.set(p, i * n);
    const draw = drawWeightedSample(p, { samples: s, design: "with-replacement" }, derive(seed, "query", i));
    indices.set(draw.indices, i * s);
    c.set(draw.weights, i * s);
    for (let t = 0; t < s; t++) {
      const j = draw.indices[t];
      const coef = draw.weights[t] * w.data[i * n + j];
      for (let col = 0; col < dV; col++) out[i * dV + col] += coef * v.data[j * dV + col];
    }
  }
  return { indices, weights: c, probabilities, out };
}

const same = (a: ArrayLike<number>, b: ArrayLike<number>): boolean =>
  a.length === b.length && Array.from(a).every((x, i) => Object.is(x, b[i]));

/** Weights over many orders of magnitude with exact zeros (support smaller than N_KV) and a one-key row. */
const sparse = (() => {
  const g = randomMatrix(7, 300, {}, [5, "w"]);
  const w = Matrix.from(7, 300, (i, j) => (j % (i + 2) === 0 ? 0 : Math.exp(4 * g.data[i * 300 + j])));
  for (let j = 0; j < 300; j++) w.data[3 * 300 + j] = j === 123 ? 2.5 : 0;
  return w;
})();
const sparseValues = randomMatrix(300, 4, {}, [5, "v"]);

describe("per-query attention draw: bit-identical to the former per-row composition", () => {
  for (const [label, w, v] of [
    ["softmax weights P", weightsP, values],
    ["weights with zeros and a one-key row", sparse, sparseValues],
  ] as const) {
    for (const eps of [0, 0.1, 0.37]) {
      it(`${label}, ε = ${eps}: indices, weights, probabilities and output`, () => {
        for (const s of [1, 7, 64]) {
          const seed: SeedKey = [3, "pq", s];
          const ref = oracle(w, v, s, eps, seed);
          const got = sampledValueProduct(w, v, { samples: s, scheme: "attention", defensiveWeight: eps }, seed);
          expect(same(got.indices, ref.indices)).toBe(true);
          expect(same(got.weights, ref.weights)).toBe(true);
          expect(same(got.probabilities, ref.probabilities)).toBe(true);
          expect(same(got.output.data, ref.out)).toBe(true);
        }
      });
    }
  }

  it("an all-zero row is refused as before, naming the row", () => {
    const w = Matrix.from(3, 5, (i, j) => (i === 1 ? 0 : j + 1));
    expect(() => sampledValueProduct(w, randomMatrix(5, 2, {}, [1]), { samples: 4, scheme: "attention" }, [1])).toThrow(
      /weights\[1\]: expected at least one positive weight, got all zero/,
    );
  });
});
