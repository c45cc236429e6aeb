/**
 * Progress of a sweep: done / total (including tasks skipped because a previous session finished
 * them), failures, rate and ETA. The rate counts only tasks finished in this session, so skipped
 * tasks do not inflate it, and it is measured over all workers, so it is right in parallel.
 * A cli-progress bar on a terminal; on anything else (Slurm and CI logs, pipes) a line at the start,
 * then one every `intervalSeconds` or every 10 % of the tasks, whichever comes first, with
 * done/total, failures, rate and ETA, and one at the end.
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
  private readonly quiet: boolean;
  private readonly log: (line: string) => void;
  private readonly label: string;
  private readonly intervalMs: number;
  private lastLine = performance.now();
  private lastPercentStep = 0;

  /**
   * @param total tasks in the plan (or shard). @param skipped tasks already done by earlier sessions.
   * @param mode "auto": a bar iff stderr is a terminal.
   */
  constructor(label: string, total: number, skipped: number, mode: ProgressMode, log: (line: string) => void, intervalSeconds = 30) {
    this.label = label;
    this.intervalMs = intervalSeconds * 1000;
    this.quiet = mode === "none";
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
    const now = performance.now();
    const { rate, etaSeconds } = estimate(this.done, now - this.start, this.total - this.skipped - this.done);
    if (this.bar) {
      this.bar.update(this.skipped + this.done, { failed: this.failed, rate: rate.toFixed(1), etaText: duration(etaSeconds) });
      return;
    }
    if (this.quiet) return;
    const toRun = this.total - this.skipped;
    const step = toRun > 0 ? Math.floor((10 * this.done) / toRun) : 0;
    if (this.done === toRun) return; // the final line says it
    if (now - this.lastLine >= this.intervalMs || step > this.lastPercentStep) {
      this.lastLine = now;
      this.lastPercentStep = step;
      this.log(this.statusLine(rate, etaSeconds));
    }
  }

  /** `label: 120/480 done (25%), 3 failed, 4.10 tasks/s, ETA 1m28s` (done counts skipped tasks). */
  statusLine(rate: number, etaSeconds: number | null): string {
    const done = this.skipped + this.done;
    const pct = this.total > 0 ? Math.floor((100 * done) / this.total) : 100;
    return `${this.label}: ${done}/${this.total} done (${pct}%), ${this.failed} failed, ${rate.toFixed(2)} tasks/s, ETA ${duration(etaSeconds)}`;
  }

  /** Ends the display with a summary line. */
  stop(finalLine?: string): void {
    this.bar?.stop();
    const secs = (performance.now() - this.start) / 1000;
    this.log(finalLine ?? `${this.label}: ${this.done} run in ${secs.toFixed(1)}s, ${this.failed} failed, ${this.skipped} skipped`);
  }
}
