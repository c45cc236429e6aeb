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

describe("progress lines in non-interactive logs", () => {
  it("a line at start, then every 10 % of the tasks, with done/total, failures, rate and ETA", async () => {
    const { Progress } = await import("@randattn/experiments/internal");
    const lines: string[] = [];
    const p = new Progress("exp", 40, 10, "auto", (l) => lines.push(l), 3600);
    for (let i = 0; i < 30; i++) p.tick(i === 4);
    p.stop("end");
    expect(lines[0]).toBe("exp: 40 tasks, 10 already done, 30 to run");
    const status = lines.slice(1, -1);
    expect(status).toHaveLength(9); // 10 %, 20 %, … 90 % of the 30 tasks to run
    expect(status[0]).toMatch(/^exp: 13\/40 done \(32%\), 0 failed, [\d.]+ tasks\/s, ETA /);
    expect(status[8]).toMatch(/^exp: 37\/40 done \(92%\), 1 failed/);
    expect(lines.at(-1)).toBe("end");
  });
});
