/**
 * The runner's worker lanes (run/runner.ts workerLanes): every task exactly once, whole groups (one
 * problem point and trial: the tasks that share inputs and the exact reference) in one lane, groups
 * balanced by LPT, each lane in dispatch order. (That results do not depend on the lanes is
 * byte-identical.test.ts: results.csv across worker counts.)
 */
import { describe, expect, it } from "vitest";
import { expandPlan, loadConfigObject } from "@randattn/experiments/internal";
import { planTasks } from "../../src/plan/expand.js";
import { dispatchOrder, workerLanes } from "../../src/run/runner.js";

const config = {
  experiment: "lanes",
  seed: 3,
  trials: 3,
  problem: { generator: "low-rank", params: { d: 6, dv: 4, rank: 3 } },
  methods: [{ method: "exact" }, { method: "row-sampling", params: { scheme: "value-norm" } }],
  sweep: { "problem.n": [24, 40], "row-sampling.samples": [4, 8, 16] },
};

describe("workerLanes", () => {
  const plan = expandPlan(loadConfigObject(config, "/tmp", "l.yaml"));
  const ordered = dispatchOrder(plan, planTasks(plan));
  const group = (t: (typeof ordered)[number]) => `${JSON.stringify(plan.cells[t.cell].problem)}:${t.trial}`;

  for (const workers of [1, 2, 3, 4, 7]) {
    it(`${workers} worker(s): a partition into whole groups, LPT-balanced, each lane in dispatch order`, () => {
      const lanes = workerLanes(plan, ordered, workers);
      expect(lanes).toHaveLength(workers);
      const all = lanes.flat();
      expect(all).toHaveLength(ordered.length);
      expect(new Set(all.map((t) => t.key)).size).toBe(ordered.length);
      const laneOf = new Map<string, number>();
      lanes.forEach((lane, l) => {
        for (const t of lane) {
          const g = group(t);
          expect(laneOf.get(g) ?? l).toBe(l); // a group never spans two lanes
          laneOf.set(g, l);
        }
        const pos = lane.map((t) => ordered.indexOf(t));
        expect(pos).toEqual([...pos].sort((a, b) => a - b));
      });
      // 2 problem points × 3 trials = 6 groups of 4 tasks (exact + 3 row-sampling cells): LPT over
      // equal groups leaves lanes within one group of each other.
      const sizes = lanes.map((lane) => lane.length);
      expect(Math.max(...sizes) - Math.min(...sizes)).toBeLessThanOrEqual(workers === 1 ? 0 : 4);
      expect(laneOf.size).toBe(6);
    });
  }
});
