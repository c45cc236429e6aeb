import { describe, expect, it } from "vitest";
import { getProblem } from "@randattn/experiments/internal";
import { catchError } from "../helpers.js";

const ctx = { baseDir: "/tmp", wantWeights: false };
const gen = getProblem("kernel-pairs");

describe("kernel-pairs: pairs at controlled norm and angle after the kernel's scale", () => {
  it("‖x‖ = ‖y‖ = norm and xᵀy = norm²·cosine for x = √scale·q, y = √scale·k (default and explicit scale)", () => {
    for (const scale of [undefined, 0.3]) {
      const kernel = scale === undefined ? { kind: "softmax" as const } : { kind: "softmax" as const, scale };
      const s = scale ?? 1 / Math.sqrt(7);
      const inst = gen.generate({ n: 5, d: 7, norm: 1.7, cosine: -0.6 }, { ...ctx, kernel, mask: null }, [1, "i"]);
      const { queries: q, keys: k } = inst.kernelPairs!;
      expect(inst.heads).toHaveLength(0);
      for (let i = 0; i < 5; i++) {
        let qq = 0;
        let kk = 0;
        let qk = 0;
        for (let j = 0; j < 7; j++) {
          qq += s * q.get(i, j) ** 2;
          kk += s * k.get(i, j) ** 2;
          qk += s * q.get(i, j) * k.get(i, j);
        }
        expect(Math.sqrt(qq)).toBeCloseTo(1.7, 12);
        expect(Math.sqrt(kk)).toBeCloseTo(1.7, 12);
        expect(qk).toBeCloseTo(1.7 * 1.7 * -0.6, 12);
      }
    }
  });

  it("the same directions for every norm (common random numbers across a norm sweep)", () => {
    const a = gen.generate({ n: 3, d: 4, norm: 1, cosine: 0.2 }, { ...ctx, kernel: { kind: "softmax" }, mask: null }, [2]).kernelPairs!;
    const b = gen.generate({ n: 3, d: 4, norm: 2, cosine: 0.2 }, { ...ctx, kernel: { kind: "softmax" }, mask: null }, [2]).kernelPairs!;
    for (let i = 0; i < a.queries.data.length; i++) expect(b.queries.data[i]).toBeCloseTo(2 * a.queries.data[i], 12);
  });

  it("refuses a non-softmax kernel and d < 2, naming the argument", () => {
    const dot = catchError(() =>
      gen.generate(
        { n: 3, d: 4, norm: 1, cosine: 0 },
        { ...ctx, kernel: { kind: "dot", formula: "s", expression: {} as never }, mask: null },
        [2],
      ),
    );
    expect(dot.argument).toBe("problem.kernel");
    const d1 = catchError(() => gen.generate({ n: 3, d: 1, norm: 1, cosine: 0 }, { ...ctx, kernel: { kind: "softmax" }, mask: null }, [2]));
    expect([d1.argument, d1.expected, d1.actual]).toEqual(["problem.params.d", "d ≥ 2 (two directions per pair)", "1"]);
  });
});
