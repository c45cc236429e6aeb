import { describe, expect, it } from "vitest";
import { ConfigError, expandPlan, loadConfigObject } from "@randattn/experiments/internal";
import { catchError, tinyConfig } from "../helpers.js";

const load = (c: unknown) => expandPlan(loadConfigObject(c, "/tmp", "test.yaml"));

describe("config schema rejections name the bad key, what was expected and what was found", () => {
  it("accepts the tiny config", () => {
    expect(load(tinyConfig()).cells).toHaveLength(4);
  });

  it("rejects an unknown top-level key, listing the allowed keys", () => {
    const e = catchError(() => load({ ...tinyConfig(), trails: 3 }));
    expect(e).toBeInstanceOf(ConfigError);
    expect(e.message).toContain("trails: expected one of the keys experiment, description, seed, trials");
    expect(e.message).toContain("got an unknown key");
  });

  it("rejects an unknown key inside a method entry with its index", () => {
    const c = tinyConfig({ methods: [{ method: "exact", parms: {} }] });
    expect(catchError(() => load(c)).message).toContain("methods[0].parms: expected one of the keys method, label, params");
  });

  it("rejects wrong types with the actual value", () => {
    const e = catchError(() => load({ ...tinyConfig(), trials: "three" }));
    expect(e.message).toContain('trials: expected integer, got "three"');
  });

  it("rejects impossible values (trials 0, negative seed)", () => {
    const e = catchError(() => load({ ...tinyConfig(), trials: 0, seed: -1 }));
    expect(e.message).toContain("trials: expected a number >= 1, got 0");
    expect(e.message).toContain("seed: expected a number >= 0, got -1");
    expect((e as ConfigError).issues).toHaveLength(2);
  });

  it("rejects a missing required key", () => {
    const { methods: _m, ...rest } = tinyConfig();
    expect(catchError(() => load(rest)).message).toContain("methods: expected a value (this key is required), got nothing");
  });

  it("rejects an unknown method and an unknown generator, listing the registered names", () => {
    const e = catchError(() => load(tinyConfig({ methods: [{ method: "magic" }] })));
    expect(e.message).toMatch(/methods\[0\]\.method: expected one of .*exact.*, got "magic"/);
    const p = catchError(() => load(tinyConfig({ problem: { generator: "nope" } })));
    expect(p.message).toMatch(/problem\.generator: expected one of .*gaussian.*, got "nope"/);
  });

  it("rejects a method param of the wrong type, naming the method's param path", () => {
    const e = catchError(() => load(tinyConfig({ methods: [{ method: "exact-streaming", params: { blockSize: 0 } }] })));
    expect(e.message).toContain("methods[0].params.blockSize: expected a number >= 1, got 0");
    const u = catchError(() => load(tinyConfig({ methods: [{ method: "exact", params: { rank: 3 } }] })));
    expect(u.message).toContain("methods[0].params.rank: expected no such key, got an unknown key");
  });

  it("rejects a bad sweep value with the axis and the value's index", () => {
    const e = catchError(() => load(tinyConfig({ sweep: { "problem.n": [5, -9] } })));
    expect(e.message).toContain('sweep["problem.n"][1]: expected a number >= 1, got -9');
  });

  it("rejects a sweep axis on an unknown label or parameter", () => {
    expect(catchError(() => load(tinyConfig({ sweep: { "rsvd.rank": [1] } }))).message).toContain(
      'sweep["rsvd.rank"]: expected an axis on "problem" or a method label (exact, exact-streaming), got "rsvd"',
    );
    expect(catchError(() => load(tinyConfig({ sweep: { "problem.size": [1] } }))).message).toContain(
      'sweep["problem.size"]: expected a parameter of problem: n, nQueries, d, dv, scale, got "size"',
    );
  });

  it("rejects a param given both fixed and swept, and duplicate labels", () => {
    const c = tinyConfig({ problem: { generator: "gaussian", params: { n: 4 } } });
    expect(catchError(() => load(c)).message).toContain('sweep["problem.n"]: expected n given once');
    const d = tinyConfig({ methods: [{ method: "exact" }, { method: "exact" }] });
    expect(catchError(() => load(d)).message).toContain("methods[1].label: expected a label unique among methods");
  });

  it("rejects a bad kernel kind via the discriminator", () => {
    const c = tinyConfig({ problem: { generator: "gaussian", params: { d: 4 }, kernel: { kind: "laplace" } } });
    expect(catchError(() => load(c)).message).toContain('problem.kernel.kind: expected one of "softmax", "dot", got "laplace"');
  });
});
