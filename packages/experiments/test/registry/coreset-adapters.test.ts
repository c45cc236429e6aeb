import { describe, expect, it } from "vitest";
import { type Matrix, type SeedKey, attention, concatCols, derive } from "@randattn/core";
import { nystromformerAttention, skyformerAttention, thinformerAttention, wildcatAttention } from "@randattn/sketch";
import { getMethod, getProblem, type Params, type ProblemInstance } from "@randattn/experiments/internal";

const ctx = { baseDir: "/tmp", wantWeights: false };
const seed: SeedKey = [5, "method"];

function instance(params: Params, mask: ProblemInstance["mask"] = null): ProblemInstance {
  const def = getProblem("gaussian");
  const full: Params = {};
  for (const [k, v] of Object.entries(def.paramsSchema.properties)) if (v.default !== undefined) full[k] = v.default as number;
  return def.generate({ ...full, ...params }, { ...ctx, kernel: { kind: "softmax" }, mask }, [3, "inputs"]);
}

function withDefaults(name: string, params: Params): Params {
  const full: Params = {};
  for (const [k, v] of Object.entries(getMethod(name).paramsSchema.properties)) full[k] = v.default as number;
  return { ...full, ...params };
}

const run = (name: string, problem: ProblemInstance, params: Params) => getMethod(name).run(problem, withDefaults(name, params), ctx, seed);
const same = (a: Matrix, b: Matrix) => expect(Array.from(a.data)).toEqual(Array.from(b.data));

describe("coreset and Nyström adapters = the sketch functions per head", () => {
  const p = instance({ n: 32, d: 4, dv: 3 });
  const h = p.heads[0];

  it("wildcat, thinformer, nystromformer, skyformer", () => {
    same(
      run("wildcat", p, { coresetSize: 8 }).output!,
      wildcatAttention(h.queries, h.keys, h.values, { coresetSize: 8, temperature: 1, pivoting: "plain" }, derive(seed, "head", 0)).output,
    );
    same(
      run("thinformer", p, { halvings: 2 }).output!,
      thinformerAttention(h.queries, h.keys, h.values, { halvings: 2, delta: 0.5 }, derive(seed, "head", 0)).output,
    );
    same(run("nystromformer", p, { landmarks: 8 }).output!, nystromformerAttention(h.queries, h.keys, h.values, { landmarks: 8 }).output);
    same(
      run("skyformer", p, { landmarks: 8 }).output!,
      skyformerAttention(h.queries, h.keys, h.values, { landmarks: 8 }, derive(seed, "head", 0)).output,
    );
    const c = run("wildcat", p, { coresetSize: 8 }).cost;
    expect(c.flops).toBe(wildcatAttention(h.queries, h.keys, h.values, { coresetSize: 8 }, derive(seed, "head", 0)).cost.flops);
  });

  it("exact limits through the registry: r = N, h = 0", () => {
    const exact = attention(h.queries, h.keys, h.values);
    for (const [name, params] of [
      ["wildcat", { coresetSize: 32 }],
      ["thinformer", { algorithm: "kh", halvings: 0 }],
      ["thinformer", { oversampling: 3 }],
    ] as const) {
      const out = run(name, p, params).output!;
      let err = 0;
      for (let i = 0; i < exact.data.length; i++) err = Math.max(err, Math.abs(out.data[i] - exact.data[i]));
      expect(err, name).toBeLessThan(1e-12);
    }
    expect(concatCols([exact]).rows).toBe(32);
  });

  it("a causal problem is refused with a ValueError naming problem.mask (no causal form in these papers)", () => {
    const masked = instance({ n: 16, d: 4, dv: 3 }, { kind: "causal" });
    for (const name of ["wildcat", "thinformer", "nystromformer", "skyformer"]) {
      let err: { name?: string; argument?: string } = {};
      try {
        run(name, masked, {});
      } catch (e) {
        err = e as typeof err;
      }
      expect(err.name, name).toBe("ValueError");
      expect(err.argument, name).toBe("problem.mask");
    }
  });
});
