import { describe, expect, it } from "vitest";
import { Rope, matmulTransB, maxAbsDiff, randomMatrix } from "@randattn/core";

// RoFormer §3.4.2 / paper §4.2: R_i R_jᵀ = R_{i−j}, so ⟨q R_i, k R_j⟩ depends on i − j only.
describe("RoPE relative-position identity", () => {
  for (const pairing of ["interleaved", "half"] as const) {
    it(`R_i R_jᵀ = R_{i−j} (${pairing})`, () => {
      const rope = new Rope(8, { pairing });
      for (const [i, j] of [
        [0, 0],
        [5, 2],
        [2, 5],
        [37, 36],
        [100, 3],
      ]) {
        const lhs = matmulTransB(rope.rotationMatrix(i), rope.rotationMatrix(j));
        expect(maxAbsDiff(lhs, rope.rotationMatrix(i - j))).toBeLessThan(1e-12);
      }
    });

    it(`⟨R_i q, R_j k⟩ depends only on i − j (${pairing})`, () => {
      const rope = new Rope(16, { pairing });
      const q = randomMatrix(1, 16, {}, [4, "q"]);
      const k = randomMatrix(1, 16, {}, [4, "k"]);
      const score = (i: number, j: number) => matmulTransB(rope.apply(q, [i]), rope.apply(k, [j])).data[0];
      for (const delta of [-7, 0, 3, 50]) {
        const ref = score(delta + 200, 200);
        for (const j of [0, 1, 9, 123]) expect(Math.abs(score(j + delta, j) - ref)).toBeLessThan(1e-12 * Math.abs(ref) + 1e-13);
      }
      // and it is not constant in i − j: the identity is not vacuous
      expect(Math.abs(score(3, 0) - score(0, 0))).toBeGreaterThan(1e-3);
    });
  }
});
