import { Matrix, ShapeError, ValueError, attention, randomMatrix, softmaxRows } from "@randattn/core";
import { describe, expect, it } from "vitest";
import { exactPinv, iterativePinv, nystromformerAttention, segmentMeans, skyformerAttention } from "../../src/index.js";

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

describe("Nyströmformer", () => {
  const q = randomMatrix(12, 8, {}, [1, "q"]);
  const k = randomMatrix(12, 8, {}, [1, "k"]);
  const v = randomMatrix(12, 4, {}, [1, "v"]);

  it("m = N landmarks with the exact pseudo-inverse equals core attention to 1e-12", () => {
    const r = nystromformerAttention(q, k, v, { landmarks: 12, pinv: "exact" });
    expect(maxAbsDiff(r.output, attention(q, k, v))).toBeLessThan(1e-12);
  });

  it("the paper's iteration converges to the pseudo-inverse (third order) on a softmax landmark matrix", () => {
    const a = softmaxRows(randomMatrix(6, 6, {}, [2, "a"]));
    const exact = exactPinv(a);
    const errs = [4, 6, 8, 10].map((it) => maxAbsDiff(iterativePinv(a, it), exact));
    for (let i = 1; i < errs.length; i++) expect(errs[i]).toBeLessThan(errs[i - 1]);
    expect(errs[3]).toBeLessThan(1e-12);
  });

  it("segment means: near-equal contiguous segments", () => {
    const x = new Matrix(5, 1, Float64Array.from([1, 2, 3, 4, 5]));
    expect([...segmentMeans(x, 2).data]).toEqual([1.5, 4]);
  });

  it("error → 0 as m → N: monotone with the paper's iterative pseudo-inverse, exact at m = N", () => {
    const n = 64;
    const qs = randomMatrix(n, 8, { scale: 0.7 }, [3, "q"]);
    const ks = randomMatrix(n, 8, { scale: 0.7 }, [3, "k"]);
    const vs = randomMatrix(n, 4, {}, [3, "v"]);
    const exact = attention(qs, ks, vs);
    const ms = [4, 8, 16, 32, 64];
    const errs = ms.map((m) => relFro(nystromformerAttention(qs, ks, vs, { landmarks: m }).output, exact));
    // The exact pseudo-inverse is not monotone in between (Ã is near-singular: 13.5 at m = 16 here),
    // which is why the paper's truncated iteration, a regularizer, is the default.
    const exactPinvErrs = ms.map((m) => relFro(nystromformerAttention(qs, ks, vs, { landmarks: m, pinv: "exact" }).output, exact));
    console.log(
      `Nyströmformer rel. error at m = ${ms.join(", ")} (N = 64): iterative ${errs.map((e) => e.toExponential(2)).join(", ")}; exact pinv ${exactPinvErrs.map((e) => e.toExponential(2)).join(", ")}`,
    );
    for (let i = 1; i < errs.length; i++) expect(errs[i]).toBeLessThan(errs[i - 1]);
    expect(exactPinvErrs[4]).toBeLessThan(1e-12);
  });

  it("typed errors; costs count the three softmax blocks", () => {
    expect(() => nystromformerAttention(q, k, v, { landmarks: 13 })).toThrow(ValueError);
    expect(() => nystromformerAttention(q, k, v, { landmarks: 2, pinv: "svd" as never })).toThrow(ValueError);
    expect(() => nystromformerAttention(q, randomMatrix(12, 7, {}, [1]), v, { landmarks: 2 })).toThrow(ShapeError);
    expect(nystromformerAttention(q, k, v, { landmarks: 3 }).cost.kernelEvaluations).toBe(12 * 3 + 9 + 3 * 12);
  });
});

describe("Skyformer (Nyström of the PSD Gaussian embedding)", () => {
  const q = randomMatrix(6, 8, {}, [4, "q"]);
  const k = randomMatrix(8, 8, {}, [4, "k"]);
  const v = randomMatrix(8, 3, {}, [4, "v"]);

  it("all N_Q + N_KV landmarks, λ = 0, exact pseudo-inverse equals core attention to 1e-12", () => {
    const r = skyformerAttention(q, k, v, { landmarks: 14 }, [1]);
    expect(maxAbsDiff(r.output, attention(q, k, v))).toBeLessThan(1e-12);
  });

  it("mean error decreases as m → N_Q + N_KV and vanishes there", () => {
    const n = 48;
    const qs = randomMatrix(n, 8, { scale: 0.7 }, [5, "q"]);
    const ks = randomMatrix(n, 8, { scale: 0.7 }, [5, "k"]);
    const vs = randomMatrix(n, 4, {}, [5, "v"]);
    const exact = attention(qs, ks, vs);
    const ms = [8, 24, 48, 96];
    const errs = ms.map((m) => {
      let e = 0;
      for (let t = 0; t < 6; t++)
        e += relFro(skyformerAttention(qs, ks, vs, { landmarks: m, regularization: 0 }, ["sky", t]).output, exact);
      return e / 6;
    });
    console.log(`Skyformer mean rel. error at m = ${ms.join(", ")} (N_Q + N_KV = 96): ${errs.map((e) => e.toExponential(2)).join(", ")}`);
    for (let i = 1; i < errs.length; i++) expect(errs[i]).toBeLessThan(errs[i - 1]);
    expect(errs[3]).toBeLessThan(1e-12);
  });

  it("landmarks are a uniform sample without replacement of [Q; K]; typed errors", () => {
    const r = skyformerAttention(q, k, v, { landmarks: 5 }, [9]);
    expect(new Set(r.landmarks).size).toBe(5);
    expect(r.cost.randomBits).toBe(5 * 53);
    expect(() => skyformerAttention(q, k, v, { landmarks: 15 }, [1])).toThrow(ValueError);
    expect(() => skyformerAttention(q, k, v, { landmarks: 3, regularization: -1 }, [1])).toThrow(ValueError);
  });

  it("a query far from every landmark has Â1 = 0: an error by default, a zero row listed in nonPositiveRows on request", () => {
    // Query 0 sits at distance ≈ 100 from every other row: exp(−β‖q − l‖²/2) underflows to 0 for
    // every landmark not equal to it, so its Nyström normalizer is exactly 0.
    const qf = new Matrix(4, 3, Float64Array.from([100, 100, 100, 0.1, 0, 0, 0, 0.2, 0, 0, 0, 0.3]));
    const kf = randomMatrix(6, 3, { scale: 0.3 }, ["far", "k"]);
    const vf = randomMatrix(6, 2, {}, ["far", "v"]);
    const seedKey = [3];
    const drawn = skyformerAttention(qf, kf, vf, { landmarks: 2, onNonPositiveNormalizer: "zero" }, seedKey);
    expect(Array.from(drawn.landmarks)).not.toContain(0); // the seed leaves the far query out
    expect(Array.from(drawn.nonPositiveRows)).toEqual([0]);
    expect(Array.from(drawn.output.data.subarray(0, 2))).toEqual([0, 0]);
    for (let i = 1; i < 4; i++) for (let c = 0; c < 2; c++) expect(Number.isFinite(drawn.output.get(i, c))).toBe(true);
    expect(() => skyformerAttention(qf, kf, vf, { landmarks: 2 }, seedKey)).toThrow(/query 0/);
    expect(() => skyformerAttention(qf, kf, vf, { landmarks: 2, onNonPositiveNormalizer: "clip" as "zero" }, seedKey)).toThrow(ValueError);
    // the policy changes nothing where every normalizer is positive
    const a = skyformerAttention(q, k, v, { landmarks: 5 }, [9]);
    const b = skyformerAttention(q, k, v, { landmarks: 5, onNonPositiveNormalizer: "zero" }, [9]);
    expect(b.output.data).toEqual(a.output.data);
    expect(b.nonPositiveRows.length).toBe(0);
  });
});
