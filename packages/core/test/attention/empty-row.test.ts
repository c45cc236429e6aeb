// A query row with Z[i,i] = 0 — fully masked, or a kernel vanishing on every allowed key — is a
// NumericalError naming the row by default, or a zero row with onEmptyRow: "zero"; never NaN.
import { describe, expect, it } from "vitest";
import {
  type AttentionOptions,
  Matrix,
  NumericalError,
  attention,
  attentionScores,
  attentionWeights,
  dotKernel,
  randomMatrix,
  streamingAttention,
} from "@randattn/core";
import { allFinite, expKappa, literalAttention, relErr, rows } from "./reference.js";

const q = randomMatrix(4, 3, {}, [18, "q"]);
const k = randomMatrix(6, 3, {}, [18, "k"]);
const v = randomMatrix(6, 2, {}, [18, "v"]);
const sets = [[0, 1], [2], [], [5, 3]];
const masked: AttentionOptions = { mask: { kind: "allowed", sets } };

function messageOf(f: () => unknown): string {
  try {
    f();
  } catch (e) {
    expect(e).toBeInstanceOf(NumericalError);
    return (e as Error).message;
  }
  throw new Error("did not throw");
}

describe("fully masked row", () => {
  const forms: [string, (o: AttentionOptions) => Matrix][] = [
    ["attention", (o) => attention(q, k, v, o)],
    ["streamingAttention", (o) => streamingAttention(q, k, v, { ...o, blockSize: 2, queryBlockSize: 3 })],
    ["attentionWeights", (o) => attentionWeights(q, k, o)],
    ["attentionScores", (o) => attentionScores(q, k, o).scores],
  ];
  for (const [name, run] of forms) {
    it(`${name}: NumericalError naming row 2 by default`, () => {
      for (const maskForm of ["additive", "multiplicative"] as const) {
        const msg = messageOf(() => run({ ...masked, maskForm }));
        expect(msg).toContain("options.mask");
        expect(msg).toContain("query row 2");
      }
    });
    it(`${name}: zero row with onEmptyRow "zero", other rows unchanged`, () => {
      const out = run({ ...masked, onEmptyRow: "zero" });
      expect(allFinite(out)).toBe(true);
      expect(Array.from(out.rowView(2)).every((x) => x === 0)).toBe(true);
    });
  }

  it('onEmptyRow "zero": the other rows equal the literal formula', () => {
    const ref = literalAttention(rows(q), rows(k), rows(v), expKappa(1 / Math.sqrt(3)), (i, j) => sets[i].includes(j));
    const y = attention(q, k, v, { ...masked, onEmptyRow: "zero" });
    const keep = [0, 1, 3];
    expect(
      relErr(
        keep.map((i) => Array.from(y.rowView(i))),
        keep.map((i) => ref.y[i]),
      ),
    ).toBeLessThan(1e-12);
    const s = attentionScores(q, k, { ...masked, onEmptyRow: "zero" });
    expect([s.normalizer[2], s.rowShift[2]]).toEqual([0, 0]);
  });

  it("padding keyLength 0 and an all-zero dense row are empty rows too", () => {
    expect(() => attention(q, k, v, { mask: { kind: "padding", keyLength: 0 } })).toThrow(NumericalError);
    const dense = Matrix.from(4, 6, (i) => (i === 1 ? 0 : 1));
    expect(messageOf(() => attention(q, k, v, { mask: { kind: "dense", allowed: dense } }))).toContain("query row 1");
  });
});

describe("kernel vanishing on every allowed key", () => {
  // relu(⟨q,k⟩) with q = −k_j for all keys of a positive cone: every logit ≤ 0, so Z = 0.
  const qq = Matrix.fromArray([
    [1, 1],
    [-1, -1],
  ]);
  const kk = Matrix.fromArray([
    [1, 2],
    [3, 1],
  ]);
  const vv = Matrix.fromArray([[1], [2]]);
  const relu = dotKernel((s) => Math.max(s, 0), { name: "relu" });

  it("NumericalError naming the row and the kernel", () => {
    for (const run of [() => attention(qq, kk, vv, { kernel: relu }), () => streamingAttention(qq, kk, vv, { kernel: relu })]) {
      const msg = messageOf(run);
      expect(msg).toContain("options.kernel");
      expect(msg).toContain("query row 1");
      expect(msg).toContain("relu");
    }
  });

  it('zero row with onEmptyRow "zero"', () => {
    for (const y of [
      attention(qq, kk, vv, { kernel: relu, onEmptyRow: "zero" }),
      streamingAttention(qq, kk, vv, { kernel: relu, onEmptyRow: "zero" }),
    ]) {
      expect(y.get(1, 0)).toBe(0);
      expect(Math.abs(y.get(0, 0) - (3 * 1 + 4 * 2) / 7)).toBeLessThan(1e-15);
    }
  });
});
