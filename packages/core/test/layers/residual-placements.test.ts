import { describe, expect, it } from "vitest";
import { Matrix, type NormParams, feedForward, initFfn, initSublayerNorms, normsUsed, randomMatrix, residualBlock } from "@randattn/core";
import { relErr, vec } from "./helpers.js";

// Literal norms (loops) so the check does not reuse the library's norm code.
function norm(x: Matrix, p: NormParams): Matrix {
  const out = new Matrix(x.rows, x.cols);
  for (let i = 0; i < x.rows; i++) {
    const row = x.row(i);
    const mu = p.kind === "layer" ? row.reduce((a, b) => a + b, 0) / x.cols : 0;
    const s2 = row.reduce((a, b) => a + (b - mu) ** 2, 0) / x.cols;
    for (let j = 0; j < x.cols; j++) {
      const v = (p.gain[j] * (row[j] - mu)) / Math.sqrt(s2 + p.epsilon);
      out.set(i, j, p.kind === "layer" ? v + p.shift[j] : v);
    }
  }
  return out;
}
const plus = (a: Matrix, b: Matrix) =>
  new Matrix(
    a.rows,
    a.cols,
    a.data.map((v, i) => v + b.data[i]),
  );

describe("residualBlock placements = literal compositions", () => {
  const d = 8;
  const x = randomMatrix(5, d, { scale: 2 }, [2, "res-x"]);
  const w = initFfn({ kind: "gelu", dModel: d, dHidden: 12 }, [2, "res-ffn"]);
  const F = (h: Matrix) => feedForward(h, w);
  for (const kind of ["layer", "rms"] as const) {
    // non-trivial gains/shifts so that before ≠ after matters
    const mk = (seed: number): NormParams =>
      kind === "layer"
        ? { kind, gain: vec(d, seed, 1), shift: vec(d, seed + 10, 0.5), epsilon: 1e-5 }
        : { kind, gain: vec(d, seed, 1), epsilon: 1e-6 };
    const before = mk(1);
    const after = mk(2);
    it(`post (${kind}): norm(x + F(x))`, () => {
      expect(relErr(residualBlock(x, F, "post", { after }), norm(plus(x, F(x)), after))).toBeLessThan(1e-13);
    });
    it(`pre (${kind}): x + F(norm(x))`, () => {
      expect(relErr(residualBlock(x, F, "pre", { before }), plus(x, F(norm(x, before))))).toBeLessThan(1e-13);
    });
    it(`peri (${kind}): x + norm_out(F(norm_in(x)))`, () => {
      expect(relErr(residualBlock(x, F, "peri", { before, after }), plus(x, norm(F(norm(x, before)), after)))).toBeLessThan(1e-13);
    });
  }
  it("initSublayerNorms allocates exactly the norms each placement uses", () => {
    for (const p of ["post", "pre", "peri"] as const) {
      const n = initSublayerNorms(p, "rms", 4);
      expect({ before: n.before !== undefined, after: n.after !== undefined }).toEqual(normsUsed(p));
    }
  });
});
