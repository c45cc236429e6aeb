import { ValueError, randomMatrix } from "@randattn/core";
import { describe, expect, it } from "vitest";
import { nystromformerAttention, skyformerAttention, thinformerAttention, wildcatAttention } from "../../src/index.js";

describe("methods whose papers give no causal form refuse a mask (typed, naming options.mask)", () => {
  const q = randomMatrix(4, 3, {}, [1]);
  const k = randomMatrix(8, 3, {}, [2]);
  const v = randomMatrix(8, 2, {}, [3]);
  const mask = { kind: "causal" };
  const calls: [string, () => unknown][] = [
    ["wildcat", () => wildcatAttention(q, k, v, { coresetSize: 2, mask } as never, [1])],
    ["thinformer", () => thinformerAttention(q, k, v, { mask } as never, [1])],
    ["nystromformer", () => nystromformerAttention(q, k, v, { landmarks: 2, mask } as never)],
    ["skyformer", () => skyformerAttention(q, k, v, { landmarks: 2, mask } as never, [1])],
  ];
  it.each(calls)("%s", (_, call) => {
    let err: unknown;
    try {
      call();
    } catch (e) {
      err = e;
    }
    expect(err).toBeInstanceOf(ValueError);
    expect((err as ValueError).argument).toBe("options.mask");
  });
});
