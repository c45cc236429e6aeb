import { describe, expect, it } from "vitest";
import { Matrix, matmul } from "@randattn/core";
import { writeNpyFile } from "@randattn/core/node";
import { getProblem, inputSeed, type KernelSpec, listProblems, type Params } from "@randattn/experiments/internal";
import { join } from "node:path";
import { tempDir } from "../helpers.js";

const softmax: KernelSpec = { kind: "softmax" };
const ctx = { baseDir: "/tmp", wantWeights: false };
const gen = (name: string, params: Params, trial = 0) => {
  const def = getProblem(name);
  return def.generate(params, { ...ctx, kernel: softmax, mask: null }, inputSeed(5, name, params, def.structuralParams, trial));
};

describe("problem generators", () => {
  it("gaussian: shapes, determinism, and scale rescales the same draw", () => {
    const p = { n: 6, nQueries: 4, d: 3, dv: 2, scale: 1 };
    const a = gen("gaussian", p);
    expect([a.heads[0].queries.shape, a.heads[0].keys.shape, a.heads[0].values.shape]).toEqual(["4×3", "6×3", "6×2"]);
    expect(gen("gaussian", p).heads[0].keys.data).toEqual(a.heads[0].keys.data);
    const b = gen("gaussian", { ...p, scale: 3 });
    b.heads[0].keys.data.forEach((v, i) => {
      expect(v).toBe(3 * a.heads[0].keys.data[i]);
    });
    expect(b.heads[0].values.data).toEqual(a.heads[0].values.data);
    expect(gen("gaussian", p, 1).heads[0].keys.data).not.toEqual(a.heads[0].keys.data);
  });

  it("low-rank with zero noise has rank ≤ r (Gram determinant of r+1 columns vanishes)", () => {
    const inst = gen("low-rank", { n: 12, nQueries: 0, d: 6, dv: 6, scale: 1, rank: 2, noise: 0 });
    const v = inst.heads[0].values;
    // Any 3 columns of a rank-2 matrix are dependent: det(VᵀV restricted) ≈ 0 relative to its scale.
    const cols = [0, 2, 5];
    const g = Matrix.from(3, 3, (a, b) => {
      let s = 0;
      for (let i = 0; i < v.rows; i++) s += v.get(i, cols[a]) * v.get(i, cols[b]);
      return s;
    });
    const det =
      g.get(0, 0) * (g.get(1, 1) * g.get(2, 2) - g.get(1, 2) * g.get(2, 1)) -
      g.get(0, 1) * (g.get(1, 0) * g.get(2, 2) - g.get(1, 2) * g.get(2, 0)) +
      g.get(0, 2) * (g.get(1, 0) * g.get(2, 1) - g.get(1, 1) * g.get(2, 0));
    expect(Math.abs(det)).toBeLessThan(1e-9 * g.get(0, 0) * g.get(1, 1) * g.get(2, 2));
  });

  it("heavy-tailed key norms: every row norm factor ≥ 1 relative to the same directions at α → ∞", () => {
    const light = gen("heavy-tailed", { n: 50, nQueries: 0, d: 4, dv: 4, scale: 1, tailIndex: 100 });
    const heavy = gen("heavy-tailed", { n: 50, nQueries: 0, d: 4, dv: 4, scale: 1, tailIndex: 0.8 });
    const norm = (m: Matrix, i: number) => Math.hypot(...m.row(i));
    let maxRatio = 0;
    for (let i = 0; i < 50; i++) maxRatio = Math.max(maxRatio, norm(heavy.heads[0].keys, i) / norm(light.heads[0].keys, i));
    // Pareto(0.8) over 50 draws: the largest factor exceeds 50^(1/0.8)/e ≈ 50 with overwhelming probability.
    expect(maxRatio).toBeGreaterThan(10);
  });

  it("clustered keys sit within spread·(a few σ) of a centre", () => {
    const inst = gen("clustered", { n: 40, nQueries: 0, d: 4, dv: 2, scale: 1, clusters: 3, spread: 0 });
    const distinct = new Set(Array.from({ length: 40 }, (_, i) => inst.heads[0].keys.row(i).join(",")));
    expect(distinct.size).toBeLessThanOrEqual(3);
  });

  it("llama3-gqa: H = G·groupSize heads, contiguous query heads share one K/V object", () => {
    const inst = gen("llama3-gqa", { n: 5, numKvHeads: 2, groupSize: 3, headDim: 4, dIn: 0, scale: 1 });
    expect(inst.heads).toHaveLength(6);
    expect(inst.numKvHeads).toBe(2);
    expect(inst.heads[0].keys).toBe(inst.heads[2].keys);
    expect(inst.heads[3].keys).toBe(inst.heads[5].keys);
    expect(inst.heads[2].keys).not.toBe(inst.heads[3].keys);
  });

  it("deepseek-v2-mla: K_h = L W_LK^h and V_h = L W_LV^h from the latent", () => {
    const inst = gen("deepseek-v2-mla", { n: 4, shrink: 32, scale: 1 });
    expect(inst.heads).toHaveLength(4);
    const { latent, keyUp, valueUp } = inst.latent!;
    expect(latent.cols).toBe(16);
    expect(matmul(latent, keyUp[1]).data).toEqual(inst.heads[1].keys.data);
    expect(matmul(latent, valueUp[3]).data).toEqual(inst.heads[3].values.data);
  });

  it("npy: loads 2-D and 3-D arrays relative to the config folder", () => {
    const dir = tempDir();
    writeNpyFile(
      join(dir, "q.npy"),
      Matrix.fromArray([
        [1, 2],
        [3, 4],
        [5, 6],
      ]),
    );
    writeNpyFile(join(dir, "k.npy"), [
      Matrix.fromArray([
        [1, 0],
        [0, 1],
      ]),
    ]);
    writeNpyFile(join(dir, "v.npy"), Matrix.fromArray([[2], [4]]));
    const def = getProblem("npy");
    const inst = def.generate(
      { queries: "q.npy", keys: "k.npy", values: "v.npy", scale: 1 },
      { baseDir: dir, wantWeights: false, kernel: softmax, mask: null },
      [1],
    );
    expect(inst.heads[0].queries.toArray()).toEqual([
      [1, 2],
      [3, 4],
      [5, 6],
    ]);
    expect(inst.heads[0].values.shape).toBe("2×1");
    expect(inst.heads[0].keys.toArray()).toEqual([
      [1, 0],
      [0, 1],
    ]);
  });

  it("every registered generator has a description and a closed params schema", () => {
    for (const p of listProblems()) {
      expect(p.description.length).toBeGreaterThan(10);
      expect(p.paramsSchema.additionalProperties).toBe(false);
    }
  });
});
