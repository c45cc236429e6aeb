// SimHash and sortLSH: Gray order, stable bucket sort, block structure, and SimHash's collision
// probability 1 − θ/π per bit (Charikar 2002) checked by Monte Carlo.
import { Matrix, ValueError, randomMatrix } from "@randattn/core";
import { bucketSort, grayRank, simHash, sortLsh } from "@randattn/sketch";
import { describe, expect, it } from "vitest";
import { bonferroniZ } from "../helpers/stats.js";
import { keys, queries } from "./fixtures.js";

describe("Gray order", () => {
  it("buckets adjacent in rank differ in exactly one bit (r = 6)", () => {
    const r = 6;
    const byRank = new Int32Array(1 << r);
    for (let c = 0; c < 1 << r; c++) byRank[grayRank(c)] = c;
    for (let t = 1; t < 1 << r; t++) {
      const x = byRank[t] ^ byRank[t - 1];
      expect(x & (x - 1)).toBe(0);
      expect(x).not.toBe(0);
    }
  });
  it("bucketSort is a stable sort by key", () => {
    const keysArr = Int32Array.from([3, 1, 3, 0, 1, 2, 0]);
    expect([...bucketSort(keysArr, 4)]).toEqual([3, 6, 1, 4, 5, 0, 2]);
  });
});

describe("sortLsh", () => {
  it("cuts both sorted orders into ⌈N_Q/b⌉ blocks; the mask is block diagonal after sorting", () => {
    const r = sortLsh(queries, keys, { numBits: 4, blockSize: 10 }, [1, "lsh"]);
    expect(r.numBlocks).toBe(Math.ceil(queries.rows / 10));
    expect(new Set(r.queryOrder).size).toBe(queries.rows);
    expect(new Set(r.keyOrder).size).toBe(keys.rows);
    for (let c = 0; c < r.numBlocks; c++) {
      for (let t = r.queryStart[c]; t < r.queryStart[c + 1]; t++) expect(r.queryBlock[r.queryOrder[t]]).toBe(c);
      for (let t = r.keyStart[c]; t < r.keyStart[c + 1]; t++) expect(r.keyBlock[r.keyOrder[t]]).toBe(c);
    }
    // Sorted by Gray rank of the bucket.
    const codes = simHash(keys, r.planes);
    for (let t = 1; t < keys.rows; t++) expect(grayRank(codes[r.keyOrder[t]])).toBeGreaterThanOrEqual(grayRank(codes[r.keyOrder[t - 1]]));
    expect(r.cost.hashes).toBe(queries.rows + keys.rows);
    expect(r.cost.randomBits).toBe(64 * 4 * queries.cols);
  });
  it("typed errors", () => {
    expect(() => sortLsh(queries, keys, { numBits: 25 }, [1])).toThrow(ValueError);
    expect(() => sortLsh(queries, keys, { blockSize: 0 }, [1])).toThrow(ValueError);
  });
});

describe("SimHash collision probability", () => {
  it("one bit agrees with probability 1 − θ/π", () => {
    const x = new Matrix(2, 3, Float64Array.from([1, 0, 0, Math.cos(1.1), Math.sin(1.1), 0]));
    const T = 4000;
    const planes = randomMatrix(T, 3, {}, [9, "planes"]);
    // T independent one-bit hashes = T rows of one plane matrix.
    let agree = 0;
    for (let b = 0; b < T; b++) {
      const one = new Matrix(1, 3, planes.data.subarray(b * 3, b * 3 + 3));
      const c = simHash(x, one);
      if (c[0] === c[1]) agree++;
    }
    const p = 1 - 1.1 / Math.PI;
    const se = Math.sqrt((p * (1 - p)) / T);
    expect(Math.abs(agree / T - p)).toBeLessThanOrEqual(bonferroniZ(1e-3) * se);
  });
});
