/**
 * The record types every layer above shares: what one task produced (TaskOutcome), how it is kept
 * in the journal (JournalRecord, JournalHeader) and the names of the error metrics. They live at
 * the bottom layer so output/ and figures/ read records without importing run/ (the layer that
 * writes them).
 */

/** Error metrics a config can ask for (all are computed when `metrics` is omitted). */
export const METRIC_NAMES = ["rel_frobenius_error", "rel_spectral_error", "max_abs_error", "mean_kl_divergence"] as const;
/** One error metric. */
export type MetricName = (typeof METRIC_NAMES)[number];

/** The error metrics of a task (null: not requested, or not defined for this method). */
export type MetricValues = Record<MetricName, number | null>;

/** What a task produced. Everything but the timings is a deterministic function of the task's identity. */
export interface TaskOutcome {
  readonly key: string;
  readonly index: number;
  /** "cancelled": stopped before finishing (interrupt, fail-fast); never journaled. */
  readonly status: "ok" | "failed" | "cancelled";
  /** `ErrorName: message` for a failed task, "" otherwise. */
  readonly error: string;
  readonly metrics: MetricValues;
  readonly flops: number | null;
  readonly floatsStored: number | null;
  /**
   * The method's extra columns (its declared `extraMetrics`; absent keys and non-finite values are
   * null). Optional so journals written before extra columns existed still read.
   */
  readonly extras?: Readonly<Record<string, number | null>>;
  /** Wall time of the method alone, ms (timings.csv only). */
  readonly wallMs: number;
  /** Wall time of input generation and the exact reference, ms (timings.csv only). */
  readonly setupMs: number;
  /**
   * Of `setupMs`, the exact reference alone, ms (0 when the cache of the previous task served it,
   * and for an `exact` task whose own run became the reference: its time is then in `wallMs`).
   * Journal only (the throughput bench reads it; timings.csv keeps its columns).
   */
  readonly referenceMs?: number;
  /** Wall time of the error metrics after the method, ms. Journal only. */
  readonly metricsMs?: number;
}

/**
 * A journal header line. A journal may hold several: a run that grows a finished experiment
 * (more trials, sweep values or methods) appends the header of the grown config; the last one is
 * the folder's current config.
 */
export interface JournalHeader {
  readonly type: "header";
  readonly version: 2;
  readonly experiment: string;
  /** sha256 of the config's identity (config without presentation keys, plus data-file hashes). */
  readonly configHash: string;
  /** The identity config itself, so a refusal can name the keys that changed. */
  readonly identity?: unknown;
  /** `"i-of-n"` or null for an unsharded run. */
  readonly shard: string | null;
  readonly taskCount: number;
}

/** A journal line for a finished task: the outcome plus where and when it ran. */
export interface JournalRecord extends TaskOutcome {
  readonly type: "task";
  /** Id of the process session that ran it (timings.csv). */
  readonly session: string;
}
