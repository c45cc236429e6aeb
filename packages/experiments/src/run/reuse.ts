/**
 * Which finished tasks of a results folder a changed config may reuse, and when a change must be
 * refused (issue 13, "sweeps that grow" — and shrink).
 *
 * A task's key hashes everything it computes from (its own cell and trial, plan/expand.ts), so a
 * record whose key is in the new plan is always a valid result of it: reusing it can never change
 * results.csv. What remains to decide is what the records the new plan does NOT contain mean:
 *  - tasks the new config dropped (fewer trials, fewer sweep values, a method removed): kept in the
 *    journal, left out of results.csv, and reused when the config grows back;
 *  - tasks the new config computes differently (the seed, an unswept param, the kernel, a
 *    method's params under the same label): refused, naming the config keys that changed — the
 *    folder would otherwise silently mix two experiments' histories.
 * The two are told apart by a task's grid POSITION — (problem generator, method label, trial, the
 * value of every param swept in the old or the new config): a dropped task's position has no task
 * in the new plan; a changed one's position holds a task with another key.
 */
import { canonicalJson } from "../base/canonical.js";
import { loadConfigObject } from "../config/load.js";
import { expandPlan, type Plan, planTasks } from "../plan/expand.js";

/** The sweep axes (`problem.<param>`, `<label>.<param>`) of a config object. */
function axesOf(config: unknown): string[] {
  const sweep = (config as { sweep?: Record<string, unknown> } | null)?.sweep;
  return sweep && typeof sweep === "object" ? Object.keys(sweep) : [];
}

/** Position of every task of `plan` over the axes `axes` → its key. */
function positions(plan: Plan, axes: readonly string[]): Map<string, string> {
  const sorted = [...new Set(axes)].sort();
  const out = new Map<string, string>();
  for (const t of planTasks(plan)) {
    const c = plan.cells[t.cell];
    const at: Record<string, unknown> = {};
    for (const axis of sorted) {
      const dot = axis.indexOf(".");
      const target = axis.slice(0, dot);
      const param = axis.slice(dot + 1);
      if (target === "problem") at[axis] = c.problem.params[param] ?? null;
      else if (target === c.method.label) at[axis] = c.method.params[param] ?? null;
    }
    out.set(canonicalJson({ generator: c.problem.generator, label: c.method.label, trial: t.trial, at }), t.key);
  }
  return out;
}

/** What `compareWithEarlier` found. */
export interface ReuseVerdict {
  /** Tasks of the earlier config the new plan computes differently (same position, another key). */
  readonly conflicts: number;
  /** Finished tasks kept in the journal that the new plan does not contain (not in results.csv). */
  readonly kept: number;
  /** Tasks of the earlier config without a record (it was interrupted), or null when unknown. */
  readonly earlierUnfinished: number | null;
}

/**
 * Compares the new `plan` with the earlier config recorded in a journal header (its identity
 * config) and the records in the folder. Returns null when the earlier config cannot be rebuilt
 * exactly (not recorded, no longer valid, or its data files changed since): the caller refuses then.
 */
export function compareWithEarlier(
  plan: Plan,
  earlierIdentity: unknown,
  records: ReadonlyMap<string, unknown>,
  planKeys: ReadonlySet<string>,
): ReuseVerdict | null {
  const id = earlierIdentity as { config?: unknown; dataFiles?: unknown } | undefined;
  if (!id || typeof id !== "object" || id.config === undefined) return null;
  let earlier: Plan;
  try {
    const loaded = loadConfigObject(id.config, plan.loaded.baseDir, plan.loaded.source);
    // Rebuilt from today's files: if its data files changed, its keys are not the recorded ones.
    if (loaded.identity !== canonicalJson(earlierIdentity)) return null;
    earlier = expandPlan(loaded, { maxCells: Number.POSITIVE_INFINITY });
  } catch {
    return null;
  }
  const axes = [...axesOf(id.config), ...axesOf(plan.loaded.config)];
  const now = positions(plan, axes);
  const before = positions(earlier, axes);
  let conflicts = 0;
  for (const [pos, key] of before) {
    if (!records.has(key) || planKeys.has(key)) continue;
    const other = now.get(pos);
    if (other !== undefined && other !== key) conflicts++;
  }
  let kept = 0;
  for (const key of records.keys()) if (!planKeys.has(key)) kept++;
  let earlierUnfinished = 0;
  for (const key of before.values()) if (!records.has(key)) earlierUnfinished++;
  return { conflicts, kept, earlierUnfinished };
}
