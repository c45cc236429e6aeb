import { describe, expect, it } from "vitest";
import { applyOverrides, ConfigError, expandPlan, loadConfigObject } from "@randattn/experiments/internal";
import { catchError, tinyConfig } from "../helpers.js";

describe("command-line overrides (Hydra style)", () => {
  const base = tinyConfig({ methods: [{ method: "random-features", label: "rf" }], sweep: { "problem.n": [5, 9] } });

  it("set top-level keys, nested params, sweep axes whose names contain a dot, methods by label; ~ deletes", () => {
    const o = applyOverrides(base, [
      "trials=10",
      "problem.params.d=8",
      "sweep.rf.numFeatures=[64, 128]",
      "methods.rf.params.features=trig",
      "~sweep.problem.n",
      "problem.params.n=16",
    ]) as {
      trials: number;
      problem: { params: object };
      sweep: object;
      methods: { params: object }[];
    };
    expect(o.trials).toBe(10);
    expect(o.problem.params).toEqual({ d: 8, dv: 3, n: 16 });
    expect(o.sweep).toEqual({ "rf.numFeatures": [64, 128] });
    expect(o.methods[0].params).toEqual({ features: "trig" });
    expect((base as { trials: number }).trials).toBe(2); // the input is untouched
  });

  it("are validated by the same schema and recorded", () => {
    const e = catchError(() => loadConfigObject(applyOverrides(base, ["trials=0"]), "/tmp", "c.yaml", ["trials=0"]));
    expect(e).toBeInstanceOf(ConfigError);
    expect(e.issues?.[0]).toMatchObject({ path: "trials", expected: "a number >= 1", actual: "0" });
    const loaded = loadConfigObject(applyOverrides(base, ["trials=3"]), "/tmp", "c.yaml", ["trials=3"]);
    expect(loaded.overrides).toEqual(["trials=3"]);
    expect(expandPlan(loaded).trials).toBe(3);
  });

  it("a malformed override or an unknown method label is a ConfigError naming it", () => {
    expect(catchError(() => applyOverrides(base, ["trials"])).message).toContain('override "trials"');
    expect(catchError(() => applyOverrides(base, ["methods.nope.params.x=1"])).message).toContain('a method label among "rf"');
    const named = { problems: [{ label: "diffuse", generator: "gaussian", params: { n: 8 } }] };
    expect(applyOverrides(named, ["problems.diffuse.params.n=1024"])).toEqual({
      problems: [{ label: "diffuse", generator: "gaussian", params: { n: 1024 } }],
    });
    expect(catchError(() => applyOverrides(named, ["problems.peaked.params.n=1"])).message).toContain('a problem label among "diffuse"');
  });
});
