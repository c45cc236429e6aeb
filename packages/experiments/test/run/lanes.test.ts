/**
 * The runner's worker lanes (run/runner.ts workerLanes): every task exactly once, whole groups (one
 * problem point and trial: the tasks that share inputs and the exact reference) in one lane, groups
 * balanced by LPT, each lane in dispatch order. (That results do not depend on the lanes is
 * byte-identical.test.ts: results.csv across worker counts.)
 */
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { expandPlan, loadConfigObject } from "@randattn/experiments/internal";
import { planTasks } from "../../src/plan/expand.js";
import { dispatchOrder, LaneQueue, workerLanes } from "../../src/run/runner.js";

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

describe("LaneQueue", () => {
  it("hands out every task exactly once, a lane's own from the front, stolen ones from the tail of the fullest lane", () => {
    fc.assert(
      fc.property(
        fc.array(fc.nat({ max: 6 }), { minLength: 1, maxLength: 4 }),
        fc.array(fc.nat({ max: 3 }), { maxLength: 40 }),
        (sizes, takers) => {
          let id = 0;
          const lanes = sizes.map((n) => Array.from({ length: n }, () => id++));
          const q = new LaneQueue(lanes);
          const own = lanes.map(() => 0);
          const end = lanes.map((l) => l.length);
          const seen: number[] = [];
          for (const raw of takers) {
            const lane = raw % lanes.length;
            const left = q.left;
            const t = q.take(lane);
            if (left === 0) {
              expect(t).toBeUndefined();
              continue;
            }
            expect(q.left).toBe(left - 1);
            if (own[lane] < end[lane]) expect(t).toBe(lanes[lane][own[lane]++]);
            else {
              const most = Math.max(...lanes.map((_, l) => end[l] - own[l]));
              const victim = lanes.findIndex((_, l) => end[l] - own[l] === most);
              expect(t).toBe(lanes[victim][--end[victim]]);
            }
            seen.push(t!);
          }
          while (q.left > 0) seen.push(q.take(0)!);
          expect(q.take(0)).toBeUndefined();
          expect([...seen].sort((a, b) => a - b)).toEqual(Array.from({ length: id }, (_, i) => i));
        },
      ),
      { numRuns: 300, seed: 35 },
    );
  });

  it("lets a thief share at most one group with its victim (two workers, one twice as fast, three groups)", () => {
    // Lanes as workerLanes makes them for 3 equal groups on 2 workers: [g0, g2] and [g1]. Worker 1
    // runs out when worker 0 is half-way through g0; stealing g2 from its tail, it never touches g0.
    const g = (group: number) => Array.from({ length: 4 }, (_, i) => ({ group, i }));
    const q = new LaneQueue([[...g(0), ...g(2)], g(1)]);
    const duration = [2, 1];
    const freeAt = [0, 0];
    const groupsOf = [new Set<number>(), new Set<number>()];
    let done = 0;
    while (q.left > 0) {
      const w = freeAt[0] <= freeAt[1] ? 0 : 1;
      const t = q.take(w)!;
      groupsOf[w].add(t.group);
      freeAt[w] += duration[w];
      done++;
    }
    expect(done).toBe(12);
    expect([...groupsOf[0]].sort()).toEqual([0]);
    expect([...groupsOf[1]].sort()).toEqual([1, 2]);
  });
});
