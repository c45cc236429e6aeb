import { describe, expect, it } from "vitest";
import { Matrix, randomMatrix } from "@randattn/core";
import { exactCost, executeTask, getMethod, type ProblemInstance, SOFTMAX_FLOPS_PER_SCORE } from "@randattn/experiments/internal";
import { toUnaryFunction } from "@randattn/experiments/internal";
import { compileKernelFormula } from "@randattn/experiments/internal";

/** The paper's formula Y = Z⁻¹AV as plain loops (§2.1), kernel κ(q, k) = f(scale·⟨q, k⟩). */
function literalAttention(q: Matrix, k: Matrix, v: Matrix, f: (s: number) => number, scale: number, causal: boolean): Matrix {
  const out = new Matrix(q.rows, v.cols);
  const offset = k.rows - q.rows;
  for (let i = 0; i < q.rows; i++) {
    let z = 0;
    const acc = new Array(v.cols).fill(0);
    for (let j = 0; j < k.rows; j++) {
      if (causal && j > offset + i) continue;
      let s = 0;
      for (let c = 0; c < q.cols; c++) s += q.get(i, c) * k.get(j, c);
      const a = f(scale * s);
      z += a;
      for (let c = 0; c < v.cols; c++) acc[c] += a * v.get(j, c);
    }
    for (let c = 0; c < v.cols; c++) out.set(i, c, acc[c] / z);
  }
  return out;
}

const maxRel = (a: Matrix, b: Matrix) => {
  let m = 0;
  let n = 0;
  for (let i = 0; i < a.data.length; i++) {
    m = Math.max(m, Math.abs(a.data[i] - b.data[i]));
    n = Math.max(n, Math.abs(b.data[i]));
  }
  return m / n;
};

describe("exact methods against the literal formula", () => {
  const q = randomMatrix(5, 3, {}, [9, "q"]);
  const k = randomMatrix(8, 3, {}, [9, "k"]);
  const v = randomMatrix(8, 2, {}, [9, "v"]);
  const problem = (kernel: ProblemInstance["kernel"], causal: boolean): ProblemInstance => ({
    heads: [{ queries: q, keys: k, values: v }],
    kernel,
    mask: causal ? { kind: "causal" } : null,
    numKvHeads: 1,
  });
  const ctx = { baseDir: "/tmp", wantWeights: false };

  it.each([false, true])("softmax, causal=%s: exact and exact-streaming ≤ 1e-12", (causal) => {
    const ref = literalAttention(q, k, v, Math.exp, 1 / Math.sqrt(3), causal);
    const a = getMethod("exact").run(problem({ kind: "softmax" }, causal), {}, ctx, [1]);
    const b = getMethod("exact-streaming").run(problem({ kind: "softmax" }, causal), { blockSize: 3 }, ctx, [1]);
    expect(maxRel(a.output!, ref)).toBeLessThanOrEqual(1e-12);
    expect(maxRel(b.output!, ref)).toBeLessThanOrEqual(1e-12);
  });

  it("a custom kernel formula f(s) = 1 + s + s²/2", () => {
    const expression = compileKernelFormula("1 + s + s^2/2", "k");
    const f = toUnaryFunction(expression);
    const ref = literalAttention(q, k, v, f, 0.5, false);
    const a = getMethod("exact").run(problem({ kind: "dot", formula: "1 + s + s^2/2", expression, scale: 0.5 }, false), {}, ctx, [1]);
    expect(maxRel(a.output!, ref)).toBeLessThanOrEqual(1e-12);
  });

  it("analytic cost follows core's convention", () => {
    const c = exactCost(problem({ kind: "softmax" }, false), true);
    expect(c.flops).toBe(2 * 5 * 8 * 3 + SOFTMAX_FLOPS_PER_SCORE * 5 * 8 + 2 * 5 * 8 * 2 + 5 * 2);
    expect(c.floatsStored).toBe(8 * 3 + 8 * 2 + 5 * 8);
  });

  it("executeTask: exact has zero error and zero KL; errors are recorded, not thrown", () => {
    const base = { key: "c/0", index: 0, trial: 0, rootSeed: 1, kernel: { kind: "softmax" } as const, mask: null, baseDir: "/tmp" };
    const metrics = ["rel_frobenius_error", "rel_spectral_error", "max_abs_error", "mean_kl_divergence"] as const;
    const ok = executeTask({
      ...base,
      problem: { generator: "gaussian", params: { n: 6, nQueries: 0, d: 3, dv: 2, scale: 1 } },
      method: { name: "exact", params: {} },
      metrics: [...metrics],
    });
    expect(ok.status).toBe("ok");
    expect(ok.metrics).toEqual({ rel_frobenius_error: 0, rel_spectral_error: 0, max_abs_error: 0, mean_kl_divergence: 0 });
    const bad = executeTask({
      ...base,
      problem: { generator: "gaussian", params: { n: 6, nQueries: 0, d: 3, dv: 2, scale: 1 } },
      method: { name: "nope", params: {} },
      metrics: [...metrics],
    });
    expect(bad.status).toBe("failed");
    expect(bad.error).toMatch(/^ValueError: method: expected one of .*, got "nope"$/);
  });
});
