/**
 * Features are a pure function of the seed: the same SeedKey redraws the same Ω and the same output,
 * another seed redraws them; `omega` passed explicitly reproduces a run. The Ω streams are pinned
 * by golden arrays in the source (non-regression of the random streams; a change is a visible diff).
 */
import { randomMatrix } from "@randattn/core";
import { describe, expect, it } from "vitest";
import { drawProjection, randomFeatureAttention } from "../../src/features/index.js";

describe("redrawing random features by seed", () => {
  const q = randomMatrix(10, 6, {}, [9, "q"]);
  const k = randomMatrix(12, 6, {}, [9, "k"]);
  const v = randomMatrix(12, 3, {}, [9, "v"]);

  it("same seed → identical output; another seed → different Ω and output", () => {
    const a = randomFeatureAttention(q, k, v, { numFrequencies: 9 }, [1, "layer", 0]);
    const b = randomFeatureAttention(q, k, v, { numFrequencies: 9 }, [1, "layer", 0]);
    const c = randomFeatureAttention(q, k, v, { numFrequencies: 9 }, [1, "layer", 1]);
    expect(Array.from(b.output.data)).toEqual(Array.from(a.output.data));
    expect(Array.from(c.omega.data)).not.toEqual(Array.from(a.omega.data));
    expect(Array.from(c.output.data)).not.toEqual(Array.from(a.output.data));
    const again = randomFeatureAttention(q, k, v, { numFrequencies: 9, omega: a.omega }, [123]);
    expect(Array.from(again.output.data)).toEqual(Array.from(a.output.data));
  });

  it("Ω streams are stable (golden values)", () => {
    const round = (x: Float64Array) => Array.from(x.slice(0, 6), (t) => Number(t.toPrecision(12)));
    expect({
      iid: round(drawProjection(4, 3, { projection: "iid" }, [2026, "snap"]).data),
      orthogonal: round(drawProjection(4, 3, { projection: "orthogonal" }, [2026, "snap"]).data),
      cauchy: round(drawProjection(4, 3, { distribution: "cauchy" }, [2026, "snap"]).data),
    }).toEqual({
      iid: [1.06627400517, -1.60333953755, -0.513354122792, 0.223682238404, -1.14513155222, 0.624056152942],
      orthogonal: [-1.74350016664, 0.802739789997, -0.557694545161, 0.0471333607044, 1.08291847746, 1.41139040316],
      cauchy: [0.580710721738, 15.5074887926, 0.239344779818, -0.848785416638, -4.65408942701, -1.62194819398],
    });
  });
});
