import { describe, expect, it } from "vitest";
import { RandomStream, seedString } from "@randattn/core";
import { cellSeed, expandPlan, inputSeed, loadConfigObject, methodSeed, parseConfigText, planTasks } from "@randattn/experiments/internal";
import { tinyConfig } from "../helpers.js";

const plan = (c: unknown) => expandPlan(loadConfigObject(c, "/tmp", "c.yaml"));

describe("seed derivation", () => {
  it("is stable (non-regression snapshot of keys, a cell id and the first draws)", () => {
    const key = inputSeed(11, "gaussian", { n: 9, nQueries: 0, d: 4, dv: 3, scale: 2 }, ["n", "nQueries", "d", "dv"], 1);
    expect(seedString(key)).toBe('[11,"inputs","gaussian","n",9,"nQueries",0,"d",4,"dv",3,"trial",1]');
    expect(seedString(methodSeed(11, "exact-streaming", { blockSize: 3 }, 0))).toBe(
      '[11,"method","exact-streaming","{\\"blockSize\\":3}","trial",0]',
    );
    // Golden ids: a cell's id is sha256 of (root seed, its own problem point, kernel, mask, method,
    // metrics) — a changed derivation is a visible diff here.
    expect(plan(tinyConfig()).cells.map((c) => c.id)).toEqual([
      "211ab4b4375e333e",
      "9526a8669602b74a",
      "578c99e0048dd787",
      "2452425ac1c7e9fc",
    ]);
    const rng = new RandomStream(key);
    expect([rng.uniform(), rng.uniform()]).toEqual([0.0442239950969886, 0.5115887494839519]);
  });

  it("does not depend on key order, whitespace or comments of the config", () => {
    const a = parseConfigText(
      "experiment: tiny\nseed: 11\ntrials: 2\nproblem: {generator: gaussian, params: {d: 4, dv: 3}}\nmethods: [{method: exact}, {method: exact-streaming, params: {blockSize: 3}}]\nsweep: {problem.n: [5, 9]}\n",
      "yaml",
    );
    const b = parseConfigText(
      "# same, reordered\nsweep:\n  problem.n: [5, 9]\nmethods:\n  - method: exact\n  - params: {blockSize: 3}\n    method: exact-streaming\nproblem:\n  params: {dv: 3, d: 4}\n  generator: gaussian\ntrials: 2\nseed: 11\nexperiment: tiny\n",
      "yaml",
    );
    const pa = plan(a);
    const pb = plan(b);
    expect(pb.loaded.hash).toBe(pa.loaded.hash);
    expect(pb.cells.map((c) => c.id)).toEqual(pa.cells.map((c) => c.id));
    expect(planTasks(pb).map((t) => t.key)).toEqual(planTasks(pa).map((t) => t.key));
  });

  it("a cell's id and seeds do not depend on which other cells or methods are in the plan", () => {
    const small = plan(tinyConfig());
    const bigger = plan(
      tinyConfig({
        methods: [{ method: "exact-streaming", label: "b7", params: { blockSize: 7 } }, ...(tinyConfig().methods as object[])],
        sweep: { "problem.n": [3, 5, 9] },
      }),
    );
    for (const c of small.cells) expect(bigger.cells.some((d) => d.id === c.id)).toBe(true);
  });

  it("inputs depend on (generator, size params, trial) only — not on the method or the input scale", () => {
    const s = ["n", "nQueries", "d", "dv"];
    const base = { n: 9, nQueries: 0, d: 4, dv: 3, scale: 1 };
    expect(inputSeed(11, "gaussian", { ...base, scale: 5 }, s, 0)).toEqual(inputSeed(11, "gaussian", base, s, 0));
    expect(inputSeed(11, "gaussian", { ...base, n: 10 }, s, 0)).not.toEqual(inputSeed(11, "gaussian", base, s, 0));
    expect(inputSeed(11, "gaussian", base, s, 1)).not.toEqual(inputSeed(11, "gaussian", base, s, 0));
    expect(cellSeed(11, { a: 1 })).not.toBe(cellSeed(12, { a: 1 }));
    // Method randomness: (method, params, trial) — the same across problem points.
    expect(methodSeed(11, "m", { k: 2 }, 3)).toEqual(methodSeed(11, "m", { k: 2 }, 3));
    expect(methodSeed(11, "m", { k: 2 }, 3)).not.toEqual(methodSeed(11, "m", { k: 3 }, 3));
  });
});
