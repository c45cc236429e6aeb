// The per-query "attention" draw with replacement (sampling/perQuery.ts). Issue 14 changed the
// draws on purpose — inverse CDF instead of an alias table per row, one stream per 64 queries
// instead of one per query — so the golden arrays below were regenerated deliberately; the
// probabilities are still those of normalizeWeights → defensiveMixture bit for bit.
import { Matrix, RandomStream, type SeedKey, derive, randomMatrix } from "@randattn/core";
import { defensiveMixture, normalizeWeights, sampledValueProduct } from "@randattn/sketch";
import { describe, expect, it } from "vitest";
import { chiSquareQuantile, chiSquareStatistic, counts } from "../helpers/stats.js";
import { values, weightsP } from "./fixtures.js";

/** The documented draw restated literally: probabilities by the public composition, then query i's
 * s uniforms at offset (i mod 64)·s of derive(seed, "queries", ⌊i/64⌋), each mapped to the first j
 * whose running sum C_j exceeds u·C_{N−1}. */
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
    const rng = new RandomStream(derive(seed, "queries", Math.floor(i / 64)));
    for (let skip = 0; skip < (i % 64) * s; skip++) rng.uniform();
    const cum: number[] = [];
    let total = 0;
    for (const x of p) cum.push((total += x));
    for (let t = 0; t < s; t++) {
      const x = rng.uniform() * total;
      let j = cum.findIndex((y) => y > x);
      if (j < 0) j = p.findLastIndex((y) => y > 0);
      indices[i * s + t] = j;
      c[i * s + t] = 1 / (s * p[j]);
      const coef = c[i * s + t] * w.data[i * n + j];
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
/** 150 queries: three streams (0–63, 64–127, 128–149). */
const tall = Matrix.from(150, 24, (i, j) => weightsP.data[(i % weightsP.rows) * 24 + j] * (1 + (i % 7)));

describe("per-query attention draw: inverse CDF, one stream per 64 queries", () => {
  for (const [label, w, v] of [
    ["softmax weights P", weightsP, values],
    ["weights with zeros and a one-key row", sparse, sparseValues],
    ["150 queries over three streams", tall, values],
  ] as const) {
    for (const eps of [0, 0.1, 0.37]) {
      it(`${label}, ε = ${eps}: indices, weights, probabilities and output as documented`, () => {
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

  it("golden draws (regenerated deliberately in issue 14: a change of stream is a reviewed diff)", () => {
    const got = sampledValueProduct(tall, values, { samples: 4, scheme: "attention" }, [14, "golden"]);
    const rows = [0, 1, 63, 64, 149].map((i) => Array.from(got.indices.subarray(i * 4, i * 4 + 4)));
    expect(rows).toEqual(GOLDEN);
  });

  it("never draws a zero-probability key; a one-key row always draws that key", () => {
    const got = sampledValueProduct(sparse, sparseValues, { samples: 500, scheme: "attention" }, [4, "zeros"]);
    for (let i = 0; i < 7; i++) {
      for (let t = 0; t < 500; t++) expect(sparse.data[i * 300 + got.indices[i * 500 + t]]).toBeGreaterThan(0);
    }
    expect(Array.from(got.indices.subarray(3 * 500, 4 * 500)).every((j) => j === 123)).toBe(true);
  });

  it("a query's draws depend on (seed, i, s) only — not on the other rows' weights", () => {
    const a = sampledValueProduct(tall, values, { samples: 16, scheme: "attention" }, [8, "indep"]);
    const changed = Matrix.from(150, 24, (i, j) => (i === 70 ? (j === 5 ? 1 : 0) : tall.data[i * 24 + j]));
    const b = sampledValueProduct(changed, values, { samples: 16, scheme: "attention" }, [8, "indep"]);
    for (const i of [0, 69, 71, 127, 149])
      expect(same(a.indices.subarray(i * 16, i * 16 + 16), b.indices.subarray(i * 16, i * 16 + 16))).toBe(true);
    expect(Array.from(b.indices.subarray(70 * 16, 71 * 16)).every((j) => j === 5)).toBe(true);
    const c = sampledValueProduct(tall, values, { samples: 16, scheme: "attention" }, [9, "indep"]);
    expect(same(a.indices, c.indices)).toBe(false);
  });

  it("χ²: drawn indices follow p_i within one query and pooled over queries sharing streams", () => {
    // One row, 24 keys, s = 20,000 draws; and 128 queries (two streams) × 160 draws of the same row.
    const row = Matrix.from(1, 24, (_, j) => weightsP.data[j]);
    const p = normalizeWeights(row.data, "row");
    const one = sampledValueProduct(row, values, { samples: 20_000, scheme: "attention" }, [21, "chi"]);
    const q999 = chiSquareQuantile(1e-3, 23);
    expect(chiSquareStatistic(counts(one.indices, 24), p)).toBeLessThan(q999);
    const many = Matrix.from(128, 24, (_, j) => row.data[j]);
    const pooled = sampledValueProduct(many, values, { samples: 160, scheme: "attention" }, [22, "chi"]);
    expect(chiSquareStatistic(counts(pooled.indices, 24), p)).toBeLessThan(q999);
    // Power: the same counts against the uniform distribution are rejected.
    expect(chiSquareStatistic(counts(pooled.indices, 24), new Float64Array(24).fill(1 / 24))).toBeGreaterThan(q999);
  });

  it("χ²: consecutive queries of one stream are independent (2 × 2 contingency of paired draws)", () => {
    // p = (1/2, 1/2): draw t of query i against draw t of query i + 1, 64 queries × 64 draws.
    const half = Matrix.from(64, 2, () => 1);
    const got = sampledValueProduct(half, randomMatrix(2, 1, {}, [1]), { samples: 64, scheme: "attention" }, [23, "pairs"]);
    const table = [0, 0, 0, 0];
    for (let i = 0; i + 1 < 64; i += 2) for (let t = 0; t < 64; t++) table[2 * got.indices[i * 64 + t] + got.indices[(i + 1) * 64 + t]]++;
    const n = table[0] + table[1] + table[2] + table[3];
    const r0 = (table[0] + table[1]) / n;
    const c0 = (table[0] + table[2]) / n;
    const expected = [r0 * c0, r0 * (1 - c0), (1 - r0) * c0, (1 - r0) * (1 - c0)].map((x) => x * n);
    const stat = table.reduce((acc, o, m) => acc + (o - expected[m]) ** 2 / expected[m], 0);
    expect(stat).toBeLessThan(10.828); // χ²_1 upper 1e-3 quantile
  });

  it("an all-zero row is refused as before, naming the row", () => {
    const w = Matrix.from(3, 5, (i, j) => (i === 1 ? 0 : j + 1));
    expect(() => sampledValueProduct(w, randomMatrix(5, 2, {}, [1]), { samples: 4, scheme: "attention" }, [1])).toThrow(
      /weights\[1\]: expected at least one positive weight, got all zero/,
    );
  });
});

/** Indices of queries 0, 1, 63, 64, 149 (4 draws each) of `tall`, seed [14, "golden"]. */
const GOLDEN: number[][] = [
  [18, 11, 18, 11],
  [15, 5, 11, 22],
  [12, 0, 12, 4],
  [1, 1, 5, 14],
  [5, 3, 1, 1],
];
