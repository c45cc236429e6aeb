// Non-regression: the first values of each stream for a fixed key. A change here means every
// seeded experiment result changes — it must be deliberate (update with `vitest -u`).
import { describe, expect, it } from "vitest";
import {
  gaussianArray,
  inclusionProbabilities,
  rademacherArray,
  sampleWithReplacement,
  sampleWithoutReplacement,
  systematicSample,
  uniformArray,
  uniformIntegers,
  uniformSubset,
} from "@randattn/sketch";

const key = [2026, "snapshot"] as const;
const p = [0.1, 0.2, 0.3, 0.4];

describe("stream snapshots for key [2026, 'snapshot']", () => {
  it("elementary samplers", () => {
    expect({
      gaussian: Array.from(gaussianArray(4, {}, key)),
      rademacher: Array.from(rademacherArray(8, {}, key)),
      uniform: Array.from(uniformArray(4, {}, key)),
      integers: Array.from(uniformIntegers(8, { upper: 100 }, key)),
      subset: Array.from(uniformSubset(100, { count: 5 }, key)),
    }).toMatchSnapshot();
  });

  it("categorical samplers", () => {
    expect({
      alias: Array.from(sampleWithReplacement(p, { count: 12 }, key)),
      efraimidisSpirakis: Array.from(sampleWithoutReplacement(p, { count: 3 }, key)),
      systematic: Array.from(systematicSample(p, { count: 2 }, key).indices),
      inclusion: Array.from(inclusionProbabilities([0.7, 0.1, 0.1, 0.1], 2)),
    }).toMatchSnapshot();
  });
});
