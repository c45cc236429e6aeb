import { describe, expect, it } from "vitest";
import { estimate } from "@randattn/experiments/internal";

describe("progress rate and ETA", () => {
  it("count only this session's tasks (skipped ones do not inflate the rate)", () => {
    // 10 tasks in 2 s → 5/s; 40 remaining (skipped ones excluded by the caller) → 8 s.
    expect(estimate(10, 2000, 40)).toEqual({ rate: 5, etaSeconds: 8 });
  });
  it("no ETA before the first task finishes", () => {
    expect(estimate(0, 5000, 100).etaSeconds).toBeNull();
  });
});
