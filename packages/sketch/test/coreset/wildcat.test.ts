import { Matrix, ShapeError, ValueError, attention, randomMatrix } from "@randattn/core";
import { describe, expect, it } from "vitest";
import { wildcatAttention } from "../../src/index.js";
import { logLogSlope } from "../helpers/loglog.js";

function maxAbsDiff(a: Matrix, b: Matrix): number {
  let m = 0;
  for (let i = 0; i < a.data.length; i++) m = Math.max(m, Math.abs(a.data[i] - b.data[i]));
  return m;
}

function relFro(a: Matrix, b: Matrix): number {
  let num = 0;
  let den = 0;
  for (let i = 0; i < a.data.length; i++) {
    num += (a.data[i] - b.data[i]) ** 2;
    den += b.data[i] ** 2;
  }
  return Math.sqrt(num / den);
}

/** Rows on the sphere of radius ρ (bounded inputs, the regime of WildCat's theorem). */
function sphere(rows: number, cols: number, radius: number, seed: number): Matrix {
  const m = randomMatrix(rows, cols, {}, [seed, "sphere"]);
  for (let i = 0; i < rows; i++) {
    let s = 0;
    for (let j = 0; j < cols; j++) s += m.data[i * cols + j] ** 2;
    const f = radius / Math.sqrt(s);
    for (let j = 0; j < cols; j++) m.data[i * cols + j] *= f;
  }
  return m;
}

describe("wildcatAttention", () => {
  const q = randomMatrix(10, 8, { scale: 0.6 }, [1, "q"]);
  const k = randomMatrix(16, 8, { scale: 0.6 }, [1, "k"]);
  const v = randomMatrix(16, 5, {}, [1, "v"]);

  it.each(["plain", "accelerated"] as const)("coreset = all keys (%s pivoting) equals core attention to 1e-12", (pivoting) => {
    const r = wildcatAttention(q, k, v, { coresetSize: 16, pivoting, blockSize: 5 }, [3]);
    expect(maxAbsDiff(r.output, attention(q, k, v))).toBeLessThan(1e-12);
    expect([...r.coreset].sort((x, y) => x - y)).toEqual(Array.from({ length: 16 }, (_, i) => i));
  });

  it("bounded inputs: error decays faster than any polynomial (log-log slopes steepen over k)", () => {
    const n = 512;
    const qs = sphere(64, 4, 1, 11);
    const ks = sphere(n, 4, 1, 12);
    const vs = randomMatrix(n, 4, {}, [13, "v"]);
    const exact = attention(qs, ks, vs);
    const sizes = [4, 8, 16, 32, 48];
    const trials = 4;
    const errs = sizes.map((r) => {
      let e = 0;
      for (let t = 0; t < trials; t++) e += relFro(wildcatAttention(qs, ks, vs, { coresetSize: r }, ["decay", t]).output, exact);
      return e / trials;
    });
    const slopes = sizes.slice(1).map((_, i) => logLogSlope([sizes[i], sizes[i + 1]], [errs[i], errs[i + 1]]).slope);
    console.log(
      `WildCat mean rel. error at k = ${sizes.join(", ")}: ${errs.map((e) => e.toExponential(2)).join(", ")}; slopes ${slopes.map((s) => s.toFixed(2)).join(", ")}`,
    );
    for (let i = 1; i < slopes.length; i++) expect(slopes[i]).toBeLessThan(slopes[i - 1]);
    // A polynomial rate k^−p would give constant slopes; the last one is far below the first.
    expect(slopes[slopes.length - 1]).toBeLessThan(2 * slopes[0]);
  });

  it("costs: (r+1)N RPCholesky entries + N_Q·r logits; coreset weights reproduce V for r = N", () => {
    const r = wildcatAttention(q, k, v, { coresetSize: 6 }, [5]);
    expect(r.cost.kernelEvaluations).toBe(16 + 6 * 16 + 10 * 6);
    expect(r.cost.randomBits).toBe(6 * 53);
    expect(r.coresetValues.rows).toBe(6);
  });

  it("typed errors", () => {
    expect(() => wildcatAttention(q, k, v, { coresetSize: 0 }, [1])).toThrow(ValueError);
    expect(() => wildcatAttention(q, k, v, { coresetSize: 17 }, [1])).toThrow(ValueError);
    expect(() => wildcatAttention(q, k, v, { coresetSize: 4, temperature: -1 }, [1])).toThrow(ValueError);
    expect(() => wildcatAttention(q, k, new Matrix(15, 5), { coresetSize: 4 }, [1])).toThrow(ShapeError);
    expect(() => wildcatAttention(q, k, v, null as never, [1])).toThrow(ValueError);
  });
});
