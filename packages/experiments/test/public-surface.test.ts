// The public value exports of @randattn/experiments, pinned (issue 9): index.ts is an explicit list
// (no `export *` of internals); the package's own tests reach the rest through the
// `@randattn/experiments/internal` alias. Growing the surface is a deliberate, reviewed diff here.
import * as api from "@randattn/experiments";
import { describe, expect, it } from "vitest";

const PUBLIC = [
  "CONFIG_SCHEMA",
  "ConfigError",
  "DEFAULT_MAX_CELLS",
  "DEFAULT_MAX_TASKS",
  "METRIC_NAMES",
  "RunRefusedError",
  "boolParam",
  "cellSeed",
  "defineMethod",
  "defineProblem",
  "enumParam",
  "expandPlan",
  "getMethod",
  "getProblem",
  "inputSeed",
  "intParam",
  "latexTable",
  "lineChartSvg",
  "listMethods",
  "listProblems",
  "loadConfigFile",
  "loadConfigObject",
  "markdownTable",
  "maxAbsError",
  "meanKlDivergence",
  "mergeShards",
  "methodSeed",
  "numberParam",
  "paramsSchema",
  "parseConfigText",
  "planTasks",
  "regenerateOutputs",
  "registerMethod",
  "registerProblem",
  "relativeFrobenius",
  "relativeSpectral",
  "reproduceAll",
  "resultColumns",
  "resultsCsv",
  "runPlan",
  "spectralNorm",
  "summarize",
  "validateConfigObject",
];

describe("@randattn/experiments public surface", () => {
  it("exports exactly the pinned names", () => {
    expect(Object.keys(api).sort()).toEqual(PUBLIC);
  });
  it("does not export the runner's internals", () => {
    for (const name of ["FolderLock", "WorkerPool", "readJournal", "writeFileAtomic", "executeTask", "toUnaryFunction", "canonicalJson"]) {
      expect(name in api, name).toBe(false);
    }
  });
});
