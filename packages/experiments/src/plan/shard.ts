/** `--shard i/n`: a deterministic subset of the tasks (task t belongs to shard t mod n). */
import { ValueError } from "@randattn/core";

/** A shard: index in [0, count). */
export interface Shard {
  readonly index: number;
  readonly count: number;
}

/** Most shards a run may be split into. */
export const MAX_SHARDS = 100_000;

/**
 * Parses `"i/n"` (0-based, as Kubernetes' JOB_COMPLETION_INDEX; Slurm: `--array=0-(n-1)`).
 * @throws ValueError for anything else.
 */
export function parseShard(text: string, argument = "--shard"): Shard {
  const m = /^(\d{1,6})\/(\d{1,6})$/.exec(String(text).trim());
  if (!m) throw new ValueError(argument, "i/n with 0 ≤ i < n (e.g. 0/4)", JSON.stringify(text));
  const index = Number(m[1]);
  const count = Number(m[2]);
  if (count < 1 || count > MAX_SHARDS || index >= count)
    throw new ValueError(argument, `i/n with 0 ≤ i < n ≤ ${MAX_SHARDS}`, JSON.stringify(text));
  return { index, count };
}

/** Whether task number `taskIndex` (position in the sorted plan) belongs to `shard`. */
export function inShard(taskIndex: number, shard: Shard | null): boolean {
  // Round-robin over the sorted plan, so every shard gets a mix of small and large cells.
  return shard === null || taskIndex % shard.count === shard.index;
}

/** `"i-of-n"`, the folder name of a shard's results. */
export function shardName(shard: Shard): string {
  return `${shard.index}-of-${shard.count}`;
}
