// Both sides of a one-thread comparison on ONE core (issue 14, stop 30). On this Firecracker VM the
// two vCPUs are not alike, and not for long: at 16:30 UTC on 5 Dec 2026 a 1024³ f64 matmul ran at
// 18.9–19.7 GFLOP/s pinned to vCPU 0 and 13.4–13.5 on vCPU 1, attention N = 4096 in 198–221 against
// 276–289 ms, a DeepSeek f64 N = 512 prefill in 25.6–26.1 against 37.0–37.4 ms (three processes
// each, alternating; the register-only SIMD probe, two minutes later, 17.1–17.7 against 16.5–16.7).
// Three minutes later both read alike; ten minutes later vCPU 0 was the slow one (attention
// 258–282 against 201–224 ms). An unpinned process stays where the scheduler first put it, so the
// same forward came out 26 or 39 ms per process, bimodally, and a comparison whose two processes
// (RandAttn and NumPy or torch) sat on different vCPUs measured the vCPUs, not the code.
// `coreChooser` puts both sides of each pair on one core, the faster of a calibration taken just
// before the pair (the quieter core of that minute): a like-for-like ratio, and a less noisy one.
//
// Only the main thread is pinned (`taskset -p` on this process's main thread id = its pid), so
// V8's helper threads and workers started earlier keep every core; children and threads started
// while it is pinned inherit the pin, those started after `release` do not.
import { execFileSync } from "node:child_process";

/** Runs taskset; its stdout, or null where taskset is missing or refused. */
function taskset(args) {
  try {
    return execFileSync("taskset", args, { encoding: "utf8", stdio: ["ignore", "pipe", "ignore"] });
  } catch {
    return null;
  }
}

/** A CPU list as taskset prints it ("0-3,5") → [0, 1, 2, 3, 5]; null when it is not one. */
export function parseCpuList(text) {
  const cpus = [];
  for (const part of text.trim().split(",")) {
    const m = /^(\d+)(?:-(\d+))?$/.exec(part.trim());
    if (!m) return null;
    const a = Number(m[1]);
    const b = m[2] === undefined ? a : Number(m[2]);
    for (let c = a; c <= b; c++) cpus.push(c);
  }
  return cpus.length ? cpus : null;
}

/** The CPUs thread `pid` may run on (`taskset -p -c`), e.g. [0, 1]; null without taskset (not Linux). */
export function allowedCpus(pid = process.pid) {
  const out = taskset(["-p", "-c", String(pid)]);
  const list = out && /list:\s*(\S+)/.exec(out)?.[1];
  return list ? parseCpuList(list) : null;
}

/** Sets the CPUs of thread `pid` (the main thread: process.pid); true when taskset did. */
export function pinThread(cpus, pid = process.pid) {
  return taskset(["-p", "-c", cpus.join(","), String(pid)]) !== null;
}

/**
 * Picks, at each call of `choose`, the faster of this thread's allowed cores by `calibrate()` (one short
 * cache-heavy call, ≈ 10–20 ms: two timed calls per core, alternating core by core) and pins this
 * process's main thread there — and, with `taskset -a`, every thread of the given other processes
 * (the NumPy or torch server), so both sides of the next comparison run on that core. Call it once
 * per series of pairs, before its untimed calls, not per pair: taskset is a fork of this process,
 * after which every page this process writes takes a copy-on-write fault, and the calibration
 * evicts the caches — per pair they doubled a model prefill's CPU time (stop 30). The slow vCPU
 * changes within minutes (the header), so each series chooses afresh.
 * Where there is nothing to choose (one core allowed, no taskset) `choose` returns null and pins
 * nothing. `release()` gives the main thread all its cores again; `describe()` a line for the output.
 */
export function coreChooser(calibrate) {
  const cpus = allowedCpus();
  const reason = !cpus ? "no taskset" : cpus.length < 2 ? `one core allowed (${cpus.join(",")})` : null;
  const picks = []; // { cpu, ms: { [cpu]: fastest ms } } per choice
  let warm = false;
  return {
    cpus,
    picks,
    choose(otherPids = []) {
      if (reason) return null;
      if (!warm) {
        calibrate();
        warm = true;
      }
      const ms = {};
      for (const c of cpus) ms[c] = Number.POSITIVE_INFINITY;
      for (let r = 0; r < 2; r++) {
        for (const c of cpus) {
          pinThread([c]);
          const t0 = performance.now();
          calibrate();
          ms[c] = Math.min(ms[c], performance.now() - t0);
        }
      }
      const cpu = cpus.reduce((a, b) => (ms[b] < ms[a] ? b : a));
      pinThread([cpu]);
      for (const pid of otherPids) if (pid) taskset(["-a", "-p", "-c", String(cpu), String(pid)]);
      picks.push({ cpu, ms });
      return cpu;
    },
    release() {
      if (!reason) pinThread(cpus);
    },
    describe() {
      if (reason) return `one-thread comparisons not pinned (${reason})`;
      if (picks.length === 0) return "one-thread comparisons not pinned (no pair ran)";
      const count = (c) => picks.filter((p) => p.cpu === c).length;
      // The calibration's slow ÷ fast core per choice: how far apart the vCPUs were this run.
      const spread = picks.map((p) => {
        const t = Object.values(p.ms);
        return Math.max(...t) / Math.min(...t);
      });
      return `one-thread pairs pinned, both sides, to the faster vCPU of a calibration before each series: ${cpus.map((c) => `vCPU ${c} ×${count(c)}`).join(", ")}; slower ÷ faster vCPU ${Math.min(...spread).toFixed(2)}–${Math.max(...spread).toFixed(2)}×`;
    },
  };
}
