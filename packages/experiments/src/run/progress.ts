/**
 * Progress of a sweep: done / total (including tasks skipped because a previous session finished
 * them), failures, rate and ETA. The rate counts only tasks finished in this session, so skipped
 * tasks do not inflate it, and it is measured over all workers, so it is right in parallel.
 * A cli-progress bar on a terminal; on anything else (CI logs, pipes) one line at start and end.
 */
import { performance } from "node:perf_hooks";
import cliProgress from "cli-progress";

/** How progress is shown. */
export type ProgressMode = "auto" | "bar" | "none";

/** Rate (tasks/s) and ETA (s) from this session's completions; ETA null until one task finished. */
export function estimate(doneThisSession: number, elapsedMs: number, remaining: number): { rate: number; etaSeconds: number | null } {
  const rate = elapsedMs > 0 ? (doneThisSession * 1000) / elapsedMs : 0;
  return { rate, etaSeconds: doneThisSession > 0 && rate > 0 ? remaining / rate : null };
}

function duration(s: number | null): string {
  if (s === null) return "--";
  if (s < 60) return `${Math.ceil(s)}s`;
  if (s < 3600) return `${Math.floor(s / 60)}m${String(Math.ceil(s % 60)).padStart(2, "0")}s`;
  return `${Math.floor(s / 3600)}h${String(Math.floor((s % 3600) / 60)).padStart(2, "0")}m`;
}

/** A progress display for one session. */
export class Progress {
  private readonly total: number;
  private readonly skipped: number;
  private done = 0;
  private failed = 0;
  private readonly start = performance.now();
  private readonly bar: cliProgress.SingleBar | null;
  private readonly log: (line: string) => void;
  private readonly label: string;

  /**
   * @param total tasks in the plan (or shard). @param skipped tasks already done by earlier sessions.
   * @param mode "auto": a bar iff stderr is a terminal.
   */
  constructor(label: string, total: number, skipped: number, mode: ProgressMode, log: (line: string) => void) {
    this.label = label;
    this.total = total;
    this.skipped = skipped;
    this.log = log;
    const useBar = mode === "bar" || (mode === "auto" && process.stderr.isTTY === true);
    if (useBar) {
      this.bar = new cliProgress.SingleBar(
        {
          format: `${label} {bar} {value}/{total} | {failed} failed | {rate}/s | ETA {etaText}`,
          stream: process.stderr,
          hideCursor: true,
          clearOnComplete: false,
        },
        cliProgress.Presets.shades_classic,
      );
      this.bar.start(total, skipped, { failed: 0, rate: "0", etaText: "--" });
    } else {
      this.bar = null;
      if (mode !== "none") log(`${label}: ${total} tasks, ${skipped} already done, ${total - skipped} to run`);
    }
  }

  /** Counts one finished task. */
  tick(failed: boolean): void {
    this.done++;
    if (failed) this.failed++;
    if (this.bar) {
      const { rate, etaSeconds } = estimate(this.done, performance.now() - this.start, this.total - this.skipped - this.done);
      this.bar.update(this.skipped + this.done, { failed: this.failed, rate: rate.toFixed(1), etaText: duration(etaSeconds) });
    }
  }

  /** Ends the display with a summary line. */
  stop(finalLine?: string): void {
    this.bar?.stop();
    const secs = (performance.now() - this.start) / 1000;
    this.log(finalLine ?? `${this.label}: ${this.done} run in ${secs.toFixed(1)}s, ${this.failed} failed, ${this.skipped} skipped`);
  }
}
