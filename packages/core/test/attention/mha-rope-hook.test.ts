// The PositionalRotation hook of multiHeadAttention: applied to every Q_h with the query positions
// (default offset + i, offset = N_KV − N_Q) and to every K_g with the key positions (default j),
// after projection — checked with a test-local rotation against the literal formula.
import { describe, expect, it } from "vitest";
import { Matrix, type PositionalRotation, ShapeError, initMultiHeadWeights, multiHeadAttention, randomMatrix } from "@randattn/core";
import { expKappa, literalAttention, literalConcatCols, literalMatmul, relErr, rows } from "./reference.js";

/** Interleaved pair rotation by angle position·θ_p, θ_p = 10000^(−2p/d) (RoFormer). */
function rotateRow(x: number[], pos: number): number[] {
  const out = x.slice();
  for (let p = 0; 2 * p + 1 < x.length; p++) {
    const a = pos * 10000 ** ((-2 * p) / x.length);
    out[2 * p] = x[2 * p] * Math.cos(a) - x[2 * p + 1] * Math.sin(a);
    out[2 * p + 1] = x[2 * p] * Math.sin(a) + x[2 * p + 1] * Math.cos(a);
  }
  return out;
}

class TestRope implements PositionalRotation {
  calls: { rows: number; positions: number[] }[] = [];
  apply(x: Matrix, positions: ArrayLike<number>): Matrix {
    this.calls.push({ rows: x.rows, positions: Array.from(positions) });
    return Matrix.fromArray(x.toArray().map((r, t) => rotateRow(r, positions[t])));
  }
}

const dIn = 5;
const dh = 4;
const H = 4;
const G = 2;
const w = initMultiHeadWeights({ dIn, numHeads: H, numKvHeads: G, headDim: dh }, [28]);
const xQ = randomMatrix(3, dIn, {}, [28, "xq"]);
const xKV = randomMatrix(6, dIn, {}, [28, "xkv"]);

function literal(qPos: number[], kPos: number[]) {
  const heads = w.queries.map((wq, h) => {
    const g = Math.floor(h / (H / G));
    const q = literalMatmul(rows(xQ), rows(wq)).map((r, i) => rotateRow(r, qPos[i]));
    const k = literalMatmul(rows(xKV), rows(w.keys[g])).map((r, j) => rotateRow(r, kPos[j]));
    const v = literalMatmul(rows(xKV), rows(w.values[g]));
    return literalAttention(q, k, v, expKappa(1 / Math.sqrt(dh)), (i, j) => j <= 3 + i).y;
  });
  return literalMatmul(literalConcatCols(heads), rows(w.output));
}

describe("rope hook", () => {
  it("default positions: queries offset + i (offset = N_KV − N_Q), keys j; once per Q_h and per K_g", () => {
    const rope = new TestRope();
    const y = multiHeadAttention(xQ, xKV, w, { rope, mask: { kind: "causal" } });
    const kCalls = rope.calls.filter((c) => c.rows === 6);
    const qCalls = rope.calls.filter((c) => c.rows === 3);
    expect(kCalls.length).toBe(G);
    expect(qCalls.length).toBe(H);
    for (const c of kCalls) expect(c.positions).toEqual([0, 1, 2, 3, 4, 5]);
    for (const c of qCalls) expect(c.positions).toEqual([3, 4, 5]);
    expect(relErr(y, literal([3, 4, 5], [0, 1, 2, 3, 4, 5]))).toBeLessThan(1e-12);
  });

  it("explicit positions are used; a common shift leaves the output unchanged (relative positions)", () => {
    const qPos = [13, 14, 15];
    const kPos = [10, 11, 12, 13, 14, 15];
    const y = multiHeadAttention(xQ, xKV, w, { rope: new TestRope(), queryPositions: qPos, keyPositions: kPos, mask: { kind: "causal" } });
    expect(relErr(y, literal(qPos, kPos))).toBeLessThan(1e-12);
    const y0 = multiHeadAttention(xQ, xKV, w, { rope: new TestRope(), mask: { kind: "causal" } });
    expect(relErr(y, y0)).toBeLessThan(1e-12);
    const noRope = multiHeadAttention(xQ, xKV, w, { mask: { kind: "causal" } });
    expect(relErr(noRope, y0)).toBeGreaterThan(1e-3);
  });

  it("bad positions and a rotation changing the shape are rejected", () => {
    expect(() => multiHeadAttention(xQ, xKV, w, { rope: new TestRope(), queryPositions: [1, 2] })).toThrow(
      /options\.queryPositions: expected length 3, got length 2/,
    );
    expect(() => multiHeadAttention(xQ, xKV, w, { rope: new TestRope(), keyPositions: [0, 1, 2, 3, 4, Number.NaN] })).toThrow(
      /options\.keyPositions: expected finite entries, got NaN/,
    );
    const bad: PositionalRotation = { apply: (x) => new Matrix(x.rows, x.cols + 1) };
    expect(() => multiHeadAttention(xQ, xKV, w, { rope: bad })).toThrow(ShapeError);
  });
});
