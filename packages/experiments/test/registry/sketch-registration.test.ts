import { describe, expect, it } from "vitest";
import { ConfigError, expandPlan, getMethod, listMethods, loadConfigObject, sketchMethods } from "@randattn/experiments/internal";
import { catchError, tinyConfig } from "../helpers.js";

const load = (c: unknown) => expandPlan(loadConfigObject(c, "/tmp", "test.yaml"));
const NAMES = [
  "row-sampling",
  "top-k",
  "random-features",
  "kernel-value",
  "latent-rsvd",
  "latent-svd",
  "mha-to-mla",
  "hyper-attention",
  "kdeformer",
  "scatterbrain",
  "wildcat",
  "thinformer",
  "nystromformer",
  "skyformer",
];

describe("sketch adapters are registered with validated, defaulted params", () => {
  it("every family is registered and listed, with a default for every param", () => {
    expect(sketchMethods().map((m) => m.name)).toEqual(NAMES);
    const listed = listMethods().map((m) => m.name);
    for (const name of NAMES) {
      expect(listed).toContain(name);
      const def = getMethod(name);
      expect(def.paramsSchema.additionalProperties).toBe(false);
      for (const [param, schema] of Object.entries(def.paramsSchema.properties)) {
        expect(schema.default, `${name}.${param}`).not.toBeUndefined();
      }
    }
  });

  it("defaults fill unspecified params in the plan", () => {
    const plan = load(tinyConfig({ methods: [{ method: "row-sampling" }] }));
    expect(plan.cells[0].method.params).toEqual({
      samples: 32,
      scheme: "uniform",
      design: "with-replacement",
      normalizer: "estimated",
      blockSize: 256,
    });
    expect(plan.extraColumns).toEqual(["dkm_expected_rel_error"]);
  });

  it("bad params and sweep values are rejected with their path, expected and actual", () => {
    const e = catchError(() =>
      load(
        tinyConfig({
          methods: [
            { method: "row-sampling", params: { scheme: "norms", samples: 0 } },
            { method: "random-features", params: { numFrequencies: 8, kernel: "exp" } },
          ],
        }),
      ),
    );
    expect(e).toBeInstanceOf(ConfigError);
    expect(e.message).toContain('methods[0].params.scheme: expected one of "uniform", "value-norm", "optimal", "attention", got "norms"');
    expect(e.message).toContain("methods[0].params.samples: expected a number >= 1, got 0");
    expect(e.message).toContain("methods[1].params.kernel: expected one of the keys numFrequencies");
    const sweep = catchError(() =>
      load(
        tinyConfig({ methods: [{ method: "latent-rsvd", label: "rsvd" }], sweep: { "problem.n": [5], "rsvd.powerIterations": [1, -2] } }),
      ),
    );
    expect(sweep.message).toContain('sweep["rsvd.powerIterations"][1]: expected a number >= 0, got -2');
  });

  it("a method run on a problem that lacks its structure fails with a typed error naming the problem", () => {
    const plan = load(tinyConfig({ methods: [{ method: "exact" }] }));
    expect(plan.cells).toHaveLength(2);
    const gaussian = { heads: [], kernel: { kind: "softmax" as const }, mask: null, numKvHeads: 0 };
    for (const name of ["row-sampling", "random-features", "kernel-value", "latent-rsvd", "mha-to-mla"]) {
      const def = getMethod(name);
      const params = Object.fromEntries(Object.entries(def.paramsSchema.properties).map(([k, v]) => [k, v.default as number]));
      const err = catchError(() => def.run(gaussian, params, { baseDir: "/tmp", wantWeights: false }, [1]));
      expect(err.name, name).toBe("ValueError");
      expect(err.argument, name).toBe("problem");
    }
  });
});
