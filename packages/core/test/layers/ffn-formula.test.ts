import { describe, expect, it } from "vitest";
import { FFN_KINDS, type FfnKind, type FfnWeights, Matrix, erf, feedForward, initFfn, isGatedFfn, randomMatrix } from "@randattn/core";
import { relErr, vec } from "./helpers.js";

// Each nonlinearity written out (Vaswani et al.; Shazeer 2020, "GLU Variants Improve Transformer").
const sig = (z: number) => 1 / (1 + Math.exp(-z));
const f: Record<FfnKind, (z: number) => number> = {
  relu: (z) => Math.max(0, z),
  gelu: (z) => 0.5 * z * (1 + erf(z / Math.SQRT2)),
  "gelu-tanh": (z) => 0.5 * z * (1 + Math.tanh(Math.sqrt(2 / Math.PI) * (z + 0.044715 * z ** 3))),
  glu: sig, // GLU: σ(xW) ⊗ xV
  bilinear: (z) => z, // Bilinear: xW ⊗ xV
  reglu: (z) => Math.max(0, z),
  geglu: (z) => 0.5 * z * (1 + erf(z / Math.SQRT2)),
  "geglu-tanh": (z) => 0.5 * z * (1 + Math.tanh(Math.sqrt(2 / Math.PI) * (z + 0.044715 * z ** 3))),
  swiglu: (z) => z * sig(z), // Swish_1
};

// y[i,m] = Σ_j h[i,j] W₂[j,m] + b₂[m],  h[i,j] = f(Σ_k x[i,k] W₁[k,j] + b₁[j]) · (Σ_k x[i,k] V[k,j] + c[j])
function literal(x: Matrix, w: FfnWeights): Matrix {
  const dh = w.w1.cols;
  const out = new Matrix(x.rows, w.w2.cols);
  for (let i = 0; i < x.rows; i++) {
    const h = new Float64Array(dh);
    for (let j = 0; j < dh; j++) {
      let a = w.b1 ? w.b1[j] : 0;
      for (let k = 0; k < x.cols; k++) a += x.get(i, k) * w.w1.get(k, j);
      h[j] = f[w.kind](a);
      if (w.v) {
        let l = w.c ? w.c[j] : 0;
        for (let k = 0; k < x.cols; k++) l += x.get(i, k) * w.v.get(k, j);
        h[j] *= l;
      }
    }
    for (let m = 0; m < w.w2.cols; m++) {
      let s = w.b2 ? w.b2[m] : 0;
      for (let j = 0; j < dh; j++) s += h[j] * w.w2.get(j, m);
      out.set(i, m, s);
    }
  }
  return out;
}

describe("feedForward = literal formula for every kind", () => {
  for (const kind of FFN_KINDS) {
    for (const bias of [false, true]) {
      it(`${kind}, ${bias ? "with" : "without"} biases`, () => {
        const [n, d, dh, dOut] = [5, 6, 11, 4];
        const init = initFfn({ kind, dModel: d, dHidden: dh, dOut, bias }, [9, "ffn", kind]);
        // non-zero biases so they are exercised
        const w: FfnWeights = bias
          ? { ...init, b1: vec(dh, 1, 0.3), c: init.v ? vec(dh, 2, 0.3) : undefined, b2: vec(dOut, 3, 0.3) }
          : init;
        expect(w.v !== undefined).toBe(isGatedFfn(kind));
        const x = randomMatrix(n, d, { scale: 1.5 }, [9, "x", kind]);
        expect(relErr(feedForward(x, w), literal(x, w))).toBeLessThan(1e-13);
      });
    }
  }

  it("default biases: plain kinds have b₁, b₂ (Vaswani), GLU kinds have none (Shazeer)", () => {
    const plain = initFfn({ kind: "relu", dModel: 2, dHidden: 3 }, [1]);
    const gated = initFfn({ kind: "swiglu", dModel: 2, dHidden: 3 }, [1]);
    expect([plain.b1?.length, plain.b2?.length, plain.v]).toEqual([3, 2, undefined]);
    expect([gated.b1, gated.c, gated.b2, gated.v?.shape]).toEqual([undefined, undefined, undefined, "2×3"]);
  });

  it("seeded: same key → same weights, distinct purposes for W₁, V, W₂", () => {
    const a = initFfn({ kind: "geglu", dModel: 4, dHidden: 4 }, [5, "layer", 0]);
    const b = initFfn({ kind: "geglu", dModel: 4, dHidden: 4 }, [5, "layer", 0]);
    expect(a.w1.data).toEqual(b.w1.data);
    expect(a.w1.data).not.toEqual(a.v?.data);
    expect(a.w1.data).not.toEqual(a.w2.data);
  });
});
