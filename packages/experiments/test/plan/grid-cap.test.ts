import { describe, expect, it } from "vitest";
import { ConfigError, DEFAULT_MAX_CELLS, expandPlan, loadConfigObject } from "@randattn/experiments/internal";
import { catchError, tinyConfig } from "../helpers.js";

describe("grid cap", () => {
  it("a grid over the cap is refused from the counts alone (a 10^12-cell grid costs nothing)", () => {
    const c = tinyConfig({
      problem: { generator: "gaussian" },
      sweep: {
        "problem.n": "1..10000",
        "problem.d": "1..100",
        "problem.dv": "1..100",
        "problem.scale": { from: 0.1, to: 10, count: 10_000 },
      },
    });
    // No wall-clock assert (timings are for benches): enumerating 2·10^12 cells would never finish,
    // so the test's own timeout is what fails if the cap were checked after expanding.
    const e = catchError(() => expandPlan(loadConfigObject(c, "/tmp", "big.yaml")));
    expect(e).toBeInstanceOf(ConfigError);
    expect(e.message).toContain(
      `sweep: expected a grid of at most ${DEFAULT_MAX_CELLS} cells (raise the cap with --max-cells), got ${10000 * 100 * 100 * 10000 * 2} cells`,
    );
  });

  it("maxCells lifts (or lowers) the cap", () => {
    const loaded = loadConfigObject(tinyConfig({ sweep: { "problem.n": "1..30" } }), "/tmp", "c.yaml");
    expect(catchError(() => expandPlan(loaded, { maxCells: 59 })).message).toContain("got 60 cells");
    expect(expandPlan(loaded, { maxCells: 60 }).cells).toHaveLength(60);
  });
});
