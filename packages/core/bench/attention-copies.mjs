// The host's two-core ceiling for THE attention kernel (issue 14's two-worker target): two
// independent single-thread `attention(q, k, v)` calls (N = 4096, d = 64, f64) on two worker threads
// at once, against one of them alone — nothing shared, nothing split. Whatever this loses against 2×
// (shared L3 and memory bandwidth, the host's frequency under two busy cores, its other tenants) no
// schedule of one call over two workers can win back; the register-only probe (simd-peak.mjs)
// touches no memory and so reads higher. Run by run.mjs; this file is also the worker.
import { Worker, isMainThread, parentPort } from "node:worker_threads";
import { nextMessage } from "./simd-peak.mjs";

/**
 * Pairs of (worker 0 alone, both at once, worker 1 alone): per pair the throughput of two at once ÷
 * one alone = 2·mean(solo) ÷ the slower of the two concurrent calls. Returns the pairs' ratios
 * (sorted), their median and the best.
 */
export async function attentionTwoCopies(reps = 7) {
  const workers = [0, 1].map(() => new Worker(new URL(import.meta.url)));
  try {
    const call = (w) => {
      const reply = nextMessage(w);
      w.postMessage("go");
      return reply;
    };
    for (let r = 0; r < 2; r++) await Promise.all(workers.map(call)); // tier-up, not timed
    const ratios = [];
    for (let r = 0; r < reps; r++) {
      const a = await call(workers[0]);
      const both = await Promise.all(workers.map(call));
      const b = await call(workers[1]);
      ratios.push((a + b) / Math.max(both[0], both[1]));
    }
    ratios.sort((x, y) => x - y);
    return { ratios, median: ratios[Math.floor(ratios.length / 2)], best: ratios.at(-1) };
  } finally {
    await Promise.all(workers.map((w) => w.terminate()));
  }
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
