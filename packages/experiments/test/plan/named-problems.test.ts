/**
 * Several named problems in one experiment (`problems:`): schema and semantic errors, the
 * per-method filter, sweep axes on one named problem, the `problem` column, growth (adding a
 * problem runs only its tasks) and identity (a single `problem:` moved into `problems:` keeps its
 * cell ids and seeds).
 */
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import {
  buildFigure,
  ConfigError,
  expandPlan,
  type JournalRecord,
  loadConfigFile,
  loadConfigObject,
  planTasks,
  resultsCsv,
  runPlan,
} from "@randattn/experiments/internal";
import { LATENT_DECODE_CACHES } from "../../src/registry/decode.js";
import { catchError, tempDir, tinyConfig } from "../helpers.js";

const load = (c: unknown) => expandPlan(loadConfigObject(c, "/tmp", "test.yaml"));
const opts = (outRoot: string) => ({ outRoot, workers: 0, progress: "none" as const, log: () => {} });

/** Two gaussian problems (n = 5 and n = 9, one of them swept in d) and a low-rank one. */
function multi(extra: Record<string, unknown> = {}): Record<string, unknown> {
  const { problem: _p, sweep: _s, ...rest } = tinyConfig();
  return {
    ...rest,
    problems: [
      { label: "small", generator: "gaussian", params: { n: 5, d: 4, dv: 3 } },
      { label: "large", generator: "gaussian", params: { n: 9, dv: 3 } },
      { label: "lowrank", generator: "low-rank", params: { n: 6, d: 4, dv: 3, rank: 2 } },
    ],
    sweep: { "large.d": [4, 6] },
    ...extra,
  };
}

describe("named problems", () => {
  it("expands every problem × method in order, with the label in the problem column", () => {
    const plan = load(multi());
    // small: 2 methods; large: 2 values of d × 2 methods; lowrank: 2 methods.
    expect(plan.cells.map((c) => `${c.problemLabel}:${c.method.label}:${c.problem.params.d}`)).toEqual([
      "small:exact:4",
      "small:exact-streaming:4",
      // a problem point, then every method on it
      "large:exact:4",
      "large:exact-streaming:4",
      "large:exact:6",
      "large:exact-streaming:6",
      "lowrank:exact:4",
      "lowrank:exact-streaming:4",
    ]);
    expect(plan.problemParams).toContain("rank");
  });

  it("a method's `problems:` filter runs it only there", () => {
    const c = multi();
    (c.methods as Record<string, unknown>[])[1].problems = ["lowrank"];
    const plan = load(c);
    expect(plan.cells.filter((x) => x.method.label === "exact-streaming").map((x) => x.problemLabel)).toEqual(["lowrank"]);
    expect(plan.cells).toHaveLength(5);
  });

  it("`problem.<param>` sweeps every problem whose generator has it; `<label>.<param>` one problem", () => {
    const { problems, ...rest } = multi({ sweep: { "problem.rank": [1, 2] } });
    const ps = (problems as Record<string, unknown>[]).map((p) =>
      p.label === "lowrank" ? { ...p, params: { n: 6, d: 4, dv: 3 } } : { ...p, params: { n: 5, d: 4, dv: 3 } },
    );
    ps[1].label = "other";
    ps[1].params = { n: 7, d: 4, dv: 3 };
    const plan = load({ ...rest, problems: ps });
    expect(plan.cells.filter((x) => x.problemLabel === "lowrank").map((x) => x.problem.params.rank)).toEqual([1, 1, 2, 2].sort());
    expect(plan.cells.filter((x) => x.problemLabel === "small")).toHaveLength(2);
  });

  it("rejects, naming the key: both/neither problem forms, duplicate labels, unknown filter labels, bad axes", () => {
    const both = catchError(() => load({ ...multi(), problem: { generator: "gaussian" } }));
    expect(both).toBeInstanceOf(ConfigError);
    expect(both.message).toContain("exactly one of `problem:`");
    const { problems: _p, ...none } = multi();
    expect(catchError(() => load({ ...none, sweep: {} })).message).toContain("got neither");

    const dup = multi();
    (dup.problems as Record<string, unknown>[])[2].label = "small";
    expect(catchError(() => load(dup)).message).toContain(
      'problems[2].label: expected a label unique among problems (problems[0] is already "small")',
    );

    const filter = multi();
    (filter.methods as Record<string, unknown>[])[0].problems = ["small", "tiny-typo"];
    expect(catchError(() => load(filter)).message).toContain(
      'methods[0].problems[1]: expected a problem label ("small", "large", "lowrank"), got "tiny-typo"',
    );

    const clash = multi();
    (clash.problems as Record<string, unknown>[])[0].label = "exact";
    expect(catchError(() => load(clash)).message).toContain("methods[0].label: expected a label other than every problem label");

    expect(catchError(() => load(multi({ sweep: { "small.rank": [1] } }))).message).toContain("expected a parameter of small:");
    expect(catchError(() => load(multi({ sweep: { "nowhere.n": [1] } }))).message).toContain("a problem label (small, large, lowrank)");
    expect(catchError(() => load(multi({ sweep: { "small.n": [5, 6] } }))).message).toContain(
      "n given once (either in problems[0].params or in the sweep)",
    );
    expect(catchError(() => load(multi({ sweep: { "large.d": [4], "problem.d": [4] } }))).message).toContain("swept by one axis");
    // Two problems that compute the same cells are one problem listed twice.
    const same = multi({ sweep: {} });
    (same.problems as Record<string, unknown>[])[1].params = { n: 5, d: 4, dv: 3 };
    expect(catchError(() => load(same)).message).toContain("a repeated cell");
    // A problem's params are validated against its own generator's schema, at its own path.
    const bad = multi();
    (bad.problems as Record<string, unknown>[])[2].params = { n: 6, d: 4, dv: 3, rank: "two" };
    expect(catchError(() => load(bad)).message).toContain("problems[2].params");
  });

  it("a single `problem:` moved into `problems:` keeps its cell ids, seeds and results (label is not identity)", () => {
    const single = load(tinyConfig());
    const { problem, ...rest } = tinyConfig();
    const named = load({ ...rest, problems: [{ label: "gauss", ...(problem as object) }] });
    expect(named.cells.map((c) => c.id)).toEqual(single.cells.map((c) => c.id));
    expect(named.cells.map((c) => c.problemLabel)).toEqual(single.cells.map(() => "gauss"));
  });

  it("adding a problem to a finished experiment runs only its tasks; results.csv equals a from-scratch run", async () => {
    const c = multi();
    const first = { ...c, problems: (c.problems as object[]).slice(0, 2) };
    const out = tempDir();
    expect((await runPlan(load(first), opts(out))).ran).toBe(12);
    const r = await runPlan(load(c), opts(out));
    expect([r.ran, r.skipped]).toEqual([4, 12]);
    const fresh = tempDir();
    await runPlan(load(c), opts(fresh));
    const csv = readFileSync(join(out, "tiny/results.csv"), "utf8");
    expect(csv).toBe(readFileSync(join(fresh, "tiny/results.csv"), "utf8"));
    expect(csv.split("\n")[0]).toMatch(/^experiment,cell,problem,problem_d,/);
    expect(
      new Set(
        csv
          .trim()
          .split("\n")
          .slice(1)
          .map((l) => l.split(",")[2]),
      ),
    ).toEqual(new Set(["small", "large", "lowrank"]));
    expect(resultsCsv).toBeTypeOf("function");
    expect(planTasks(load(c))).toHaveLength(16);
  });

  it("dropping a problem (or a value of a named problem's axis) keeps its tasks aside instead of refusing; growing back reuses them", async () => {
    const c = multi();
    const out = tempDir();
    expect((await runPlan(load(c), opts(out))).ran).toBe(16);
    // Positions of tasks of two problems with one generator must not collide: dropping `large`
    // leaves `small`'s tasks at what would otherwise be the same grid position.
    const problems = c.problems as object[];
    const fewer = { ...c, problems: [problems[0], problems[2]], sweep: {} };
    const r = await runPlan(load(fewer), opts(out));
    expect([r.ran, r.skipped]).toEqual([0, 8]);
    const fresh = tempDir();
    await runPlan(load(fewer), opts(fresh));
    expect(readFileSync(join(out, "tiny/results.csv"), "utf8")).toBe(readFileSync(join(fresh, "tiny/results.csv"), "utf8"));
    const fewerD = { ...c, sweep: { "large.d": [6] } };
    const r2 = await runPlan(load(fewerD), opts(out));
    expect([r2.ran, r2.skipped]).toEqual([0, 12]);
    expect((await runPlan(load(c), opts(out))).ran).toBe(0);
  });

  it("figures facet by problem by default: one panel per problem, none per parameter that only tells problems apart", () => {
    const plan = load(multi());
    const tasks = planTasks(plan);
    const records = new Map<string, JournalRecord>();
    for (const t of tasks)
      records.set(t.key, {
        type: "task",
        session: "s",
        key: t.key,
        index: t.index,
        status: "ok",
        error: "",
        metrics: { rel_frobenius_error: 0.1 + t.trial, rel_spectral_error: null, max_abs_error: null, mean_kl_divergence: null },
        flops: 100 + t.cell,
        floatsStored: 1,
        wallMs: 1,
        setupMs: 0,
      });
    const fig = buildFigure(plan, tasks, records, { name: "f" });
    // n (5, 9, 6) and the generator only tell problems apart; d varies within "large", so it facets too.
    expect(fig.panels.map((p) => p.title)).toEqual([
      "problem = small, d = 4",
      "problem = large, d = 4",
      "problem = large, d = 6",
      "problem = lowrank, d = 4",
    ]);
    expect(fig.caption).toContain("One panel per problem × ");
  });

  it("kv-compression-real: the filters pair every KV cache with the GQA checkpoint and every latent cache with the MLA one", () => {
    const configs = fileURLToPath(new URL("../../configs/", import.meta.url));
    const plan = expandPlan(loadConfigFile(join(configs, "kv-compression-real.yaml")));
    const pairs = plan.cells.map((c) => [c.problemLabel, LATENT_DECODE_CACHES.includes(c.method.params.cache as never) ? "latent" : "kv"]);
    expect(pairs.filter(([p, kind]) => (p === "deepseek-mla") !== (kind === "latent"))).toEqual([]);
    expect(plan.cells).toHaveLength(28);
  });
});
