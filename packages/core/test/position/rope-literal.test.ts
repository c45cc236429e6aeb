import { describe, expect, it } from "vitest";
import { Matrix, Rope, randomMatrix } from "@randattn/core";

// Independent literal forms, written as plain loops from the source formulas.

/** RoFormer eq. (34): column-vector R_{Θ,m} with blocks [[cos, −sin], [sin, cos]] on pairs (2p, 2p+1). */
function roformerMatrix(d: number, m: number, base: number): number[][] {
  const r = Array.from({ length: d }, () => new Array<number>(d).fill(0));
  for (let p = 0; p < d / 2; p++) {
    const phi = m * base ** ((-2 * p) / d);
    r[2 * p][2 * p] = Math.cos(phi);
    r[2 * p][2 * p + 1] = -Math.sin(phi);
    r[2 * p + 1][2 * p] = Math.sin(phi);
    r[2 * p + 1][2 * p + 1] = Math.cos(phi);
  }
  return r;
}

/** Hugging Face: q·cos + rotate_half(q)·sin, cos = cat(cos θm, cos θm), rotate_half(x) = cat(−x₂, x₁). */
function hfRotateHalf(x: ArrayLike<number>, m: number, base: number): number[] {
  const d = x.length;
  const h = d / 2;
  const out: number[] = [];
  for (let j = 0; j < d; j++) {
    const p = j % h;
    const phi = m * base ** ((-2 * p) / d);
    const rot = j < h ? -x[j + h] : x[j - h];
    out.push(x[j] * Math.cos(phi) + rot * Math.sin(phi));
  }
  return out;
}

function relErr(a: ArrayLike<number>, b: ArrayLike<number>): number {
  let num = 0;
  let den = 0;
  for (let i = 0; i < a.length; i++) {
    num += (a[i] - b[i]) ** 2;
    den += b[i] ** 2;
  }
  return Math.sqrt(num / den);
}

// Positions cover the first table block, a table extension past 16 rows, a large integer, a negative and a fractional one.
const positions = [0, 1, 2, 7, 15, 16, 40, 1000, 70000, -3, 2.5];

describe("RoPE matches the literal rotation of each pairing", () => {
  for (const base of [10000, 500]) {
    for (const d of [2, 8, 12]) {
      it(`interleaved = RoFormer R_{Θ,m} x (d=${d}, base=${base})`, () => {
        const rope = new Rope(d, { base });
        const x = randomMatrix(positions.length, d, {}, [3, "rope-literal", d, base]);
        const y = rope.apply(x, positions);
        for (let i = 0; i < positions.length; i++) {
          const r = roformerMatrix(d, positions[i], base);
          const want: number[] = [];
          for (let a = 0; a < d; a++) {
            let s = 0;
            for (let b = 0; b < d; b++) s += r[a][b] * x.get(i, b);
            want.push(s);
          }
          expect(relErr(y.row(i), want)).toBeLessThan(1e-12);
          // rotationMatrix is the row-convention transpose: x R_m = (R_{Θ,m} xᵀ)ᵀ.
          const rm = rope.rotationMatrix(positions[i]);
          for (let a = 0; a < d; a++) for (let b = 0; b < d; b++) expect(rm.get(a, b)).toBeCloseTo(r[b][a], 14);
        }
      });

      it(`half = Hugging Face rotate_half (d=${d}, base=${base})`, () => {
        const rope = new Rope(d, { base, pairing: "half" });
        const x = randomMatrix(positions.length, d, {}, [3, "rope-half", d, base]);
        const y = rope.apply(x, positions);
        for (let i = 0; i < positions.length; i++) {
          expect(relErr(y.row(i), hfRotateHalf(x.row(i), positions[i], base))).toBeLessThan(1e-12);
          // and apply(x, [m]) = x R_m with the returned matrix
          const rm = rope.rotationMatrix(positions[i]);
          const viaMatrix: number[] = [];
          for (let b = 0; b < d; b++) {
            let s = 0;
            for (let a = 0; a < d; a++) s += x.get(i, a) * rm.get(a, b);
            viaMatrix.push(s);
          }
          expect(relErr(y.row(i), viaMatrix)).toBeLessThan(1e-12);
        }
      });
    }
  }

  it("position 0 is the identity and the same position gives the same rotation on every call", () => {
    const rope = new Rope(6);
    const x = randomMatrix(3, 6, {}, [3, "rope-id"]);
    expect(Array.from(rope.apply(x, [0, 0, 0]).data)).toEqual(Array.from(x.data));
    const first = rope.apply(x, [5, 300, 2]);
    rope.apply(Matrix.zeros(1, 6), [5000]); // grows the table
    expect(Array.from(rope.apply(x, [5, 300, 2]).data)).toEqual(Array.from(first.data));
  });
});
