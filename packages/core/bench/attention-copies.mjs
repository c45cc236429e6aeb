// The host's two-core ceiling for THE attention kernel (issue 14's two-worker target): two
// independent single-thread `attention(q, k, v)` calls (N = 4096, d = 64, f64) on two worker threads
// at once, against one of them alone — nothing shared, nothing split. Whatever this loses against 2×
// (shared L3 and memory bandwidth, the host's frequency under two busy cores, its other tenants) no
// schedule of one call over two workers can win back; the register-only probe (simd-peak.mjs)
// touches no memory and so reads higher. run.mjs takes one round of it beside each round of
// attentionParallel, so the split is compared with the ceiling of the same minute (this host's
// ceiling itself moves between 1.2× and 2.1× from one round to the next). This file is also the worker.
import { Worker, isMainThread, parentPort } from "node:worker_threads";
import { nextMessage } from "./simd-peak.mjs";

/**
 * Two tiered-up worker threads holding the same q, k, v. `round()`: worker 0 alone, both at once,
 * worker 1 alone — the throughput of two at once ÷ one alone = 2·mean(solo) ÷ the slower of the two
 * concurrent calls. `close()` ends the workers.
 */
export async function startTwoCopies() {
  const workers = [0, 1].map(() => new Worker(new URL(import.meta.url)));
  const call = (w) => {
    const reply = nextMessage(w);
    w.postMessage("go");
    return reply;
  };
  for (let r = 0; r < 2; r++) await Promise.all(workers.map(call)); // tier-up, not timed
  return {
    async round() {
      const a = await call(workers[0]);
      const both = await Promise.all(workers.map(call));
      const b = await call(workers[1]);
      return (a + b) / Math.max(both[0], both[1]);
    },
    close: () => Promise.all(workers.map((w) => w.terminate())),
  };
}

if (!isMainThread) {
  const core = await import("../dist/index.js");
  const n = 4096;
  const q = core.randomMatrix(n, 64, {}, [1, "t14", "q"]);
  const k = core.randomMatrix(n, 64, {}, [1, "t14", "k"]);
  const v = core.randomMatrix(n, 64, {}, [1, "t14", "v"]);
  parentPort.on("message", () => {
    const t0 = performance.now();
    core.attention(q, k, v);
    parentPort.postMessage(performance.now() - t0);
  });
}
