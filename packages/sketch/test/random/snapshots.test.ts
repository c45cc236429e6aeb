// Non-regression: the first values of each stream for a fixed key, as golden arrays in the source
// (issue 9: a changed stream is a visible diff here, never a `vitest -u`). A change means every
// seeded experiment result changes — it must be deliberate.
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
    }).toEqual({
      gaussian: [-0.2842374843501407, -0.8783720533736327, 0.19105665079515058, 0.8241932468112341],
      rademacher: [-1, 1, -1, 1, -1, 1, 1, -1],
      uniform: [0.6530091054151318, 0.7001906619843281, 0.6991439814239807, 0.21374653390468668],
      integers: [65, 70, 69, 21, 56, 91, 90, 13],
      subset: [65, 70, 1, 23, 58],
    });
  });

  it("categorical samplers", () => {
    expect({
      alias: Array.from(sampleWithReplacement(p, { count: 12 }, key)),
      efraimidisSpirakis: Array.from(sampleWithoutReplacement(p, { count: 3 }, key)),
      systematic: Array.from(systematicSample(p, { count: 2 }, key).indices),
      inclusion: Array.from(inclusionProbabilities([0.7, 0.1, 0.1, 0.1], 2)),
    }).toEqual({
      alias: [3, 3, 3, 2, 2, 3, 3, 2, 0, 3, 2, 1],
      efraimidisSpirakis: [2, 1, 3],
      systematic: [3, 2],
      inclusion: [1, 0.3333333333333334, 0.3333333333333334, 0.3333333333333334],
    });
  });
});
