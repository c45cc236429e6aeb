// §3.2: κ(QKᵀ + M) (M = 0 on S_i, ∅_κ elsewhere) = κ(QKᵀ) ⊙ M̃ (M̃ = 1_{S_i}) = the indicator
// formula 1_{j∈S_i}κ — for every mask kind and kernel, via attention's maskForm option and via
// the explicit M and M̃ builders fed to the literal formula.
import { describe, expect, it } from "vitest";
import {
  type Kernel,
  Matrix,
  type Mask,
  ValueError,
  additiveMask,
  attention,
  dotKernel,
  kernelEmptyValue,
  multiplicativeMask,
  pairwiseKernel,
  randomMatrix,
} from "@randattn/core";
import { dot, literalAttention, relErr, rows } from "./reference.js";

const nQ = 6;
const nKV = 9;
const d = 3;
const q = randomMatrix(nQ, d, {}, [16, "q"]);
const k = randomMatrix(nKV, d, {}, [16, "k"]);
const v = randomMatrix(nKV, 4, {}, [16, "v"]);

const dense = Matrix.from(nQ, nKV, (i, j) => ((i * 7 + j * 3) % 4 === 0 || j === i ? 1 : 0));
const masks: [string, Mask, (i: number, j: number) => boolean][] = [
  ["causal (offset N_KV − N_Q)", { kind: "causal" }, (i, j) => j <= nKV - nQ + i],
  ["causal offset 1", { kind: "causal", offset: 1 }, (i, j) => j <= 1 + i],
  ["padding keyLength 5", { kind: "padding", keyLength: 5 }, (_i, j) => j < 5],
  [
    "allowed sets",
    { kind: "allowed", sets: [[0], [8, 2, 2], [1, 3, 5, 7], [4], [0, 1, 2, 3, 4, 5, 6, 7, 8], [6, 0]] },
    (i, j) => [[0], [2, 8], [1, 3, 5, 7], [4], [0, 1, 2, 3, 4, 5, 6, 7, 8], [0, 6]][i].includes(j),
  ],
  ["dense 0/1", { kind: "dense", allowed: dense }, (i, j) => dense.get(i, j) === 1],
];

const sq = (s: number) => s * s + 1;
const kernels: [string, Kernel, (a: number[], b: number[]) => number][] = [
  ["softmax", { kind: "softmax" }, (a, b) => Math.exp(dot(a, b) / Math.sqrt(d))],
  ["dot relu+0.2", dotKernel((s) => Math.max(s, 0) + 0.2, { scale: 0.8 }), (a, b) => Math.max(0.8 * dot(a, b), 0) + 0.2],
  ["dot sigmoid", dotKernel((s) => 1 / (1 + Math.exp(-s))), (a, b) => 1 / (1 + Math.exp(-dot(a, b)))],
  ["dot s²+1 (no ∅_κ)", dotKernel(sq), (a, b) => sq(dot(a, b))],
  ["pairwise", pairwiseKernel((a, b) => 1 / (1 + Math.abs(a[0] - b[1]))), (a, b) => 1 / (1 + Math.abs(a[0] - b[1]))],
];

describe("additive = multiplicative = indicator formula", () => {
  for (const [mname, mask, allowed] of masks) {
    for (const [kname, kernel, kappa] of kernels) {
      it(`${mname}, ${kname}`, () => {
        const ref = literalAttention(rows(q), rows(k), rows(v), kappa, allowed);
        const add = attention(q, k, v, { kernel, mask, maskForm: "additive" });
        const mul = attention(q, k, v, { kernel, mask, maskForm: "multiplicative" });
        expect(relErr(add, ref.y)).toBeLessThan(1e-12);
        expect(relErr(mul, ref.y)).toBeLessThan(1e-12);
        expect(relErr(add, mul)).toBeLessThan(1e-15);
      });
    }
  }
});

describe("mask builders M and M̃", () => {
  for (const [mname, mask, allowed] of masks) {
    it(`${mname}: M̃ = 1_{S_i}, M = 0 / −∞, and κ(QKᵀ + M) = κ(QKᵀ) ⊙ M̃`, () => {
      const mt = multiplicativeMask(mask, nQ, nKV);
      const m = additiveMask(mask, nQ, nKV);
      const scale = 1 / Math.sqrt(d);
      const qr = rows(q);
      const kr = rows(k);
      for (let i = 0; i < nQ; i++) {
        for (let j = 0; j < nKV; j++) {
          expect(mt.get(i, j)).toBe(allowed(i, j) ? 1 : 0);
          expect(m.get(i, j)).toBe(allowed(i, j) ? 0 : Number.NEGATIVE_INFINITY);
          const viaM = Math.exp(scale * (dot(qr[i], kr[j]) + m.get(i, j)));
          const viaMt = Math.exp(scale * dot(qr[i], kr[j])) * mt.get(i, j);
          expect(viaM).toBe(viaMt);
        }
      }
    });
  }

  it("∅_κ: −∞ for exp and for f with f(−∞) = 0; none otherwise (additiveMask refuses)", () => {
    expect(kernelEmptyValue({ kind: "softmax" })).toBe(Number.NEGATIVE_INFINITY);
    expect(kernelEmptyValue(dotKernel((s) => Math.max(s, 0)))).toBe(Number.NEGATIVE_INFINITY);
    expect(kernelEmptyValue(dotKernel(sq))).toBeUndefined();
    expect(kernelEmptyValue(pairwiseKernel(() => 1))).toBeUndefined();
    expect(() => additiveMask({ kind: "causal" }, 3, 3, dotKernel(sq))).toThrow(ValueError);
    const relu = additiveMask(
      { kind: "padding", keyLength: 1 },
      1,
      2,
      dotKernel((s) => Math.max(s, 0)),
    );
    expect(Array.from(relu.data)).toEqual([0, Number.NEGATIVE_INFINITY]);
  });

  it("a masked logit of 1e4 (exp overflows) leaks into neither form", () => {
    const qq = Matrix.fromArray([[1], [1]]);
    const kk = Matrix.fromArray([[1e4], [1], [2]]);
    const vv = Matrix.fromArray([[100], [1], [3]]);
    const mask: Mask = { kind: "allowed", sets: [[1, 2], [2]] };
    const kernel: Kernel = { kind: "softmax", scale: 1 };
    const e = Math.exp(1);
    const ref = [[(1 + 3 * e) / (1 + e)], [3]];
    for (const maskForm of ["additive", "multiplicative"] as const) {
      const y = attention(qq, kk, vv, { kernel, mask, maskForm });
      expect(relErr(y, ref)).toBeLessThan(1e-15);
    }
  });
});
