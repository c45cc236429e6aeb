// The exp pass, A/B in one process (issue 14): one fused f64 attention call (N = 4096, d = 64) with
// rowShift "max" against one with "bound" — or, with `--base DIR`, this build's default ("bound")
// form against the same form of another build of this package (DIR = a copy of an older dist/,
// e.g. main's: the kernel bytes old against new) — alternated, CPU time (process.cpuUsage, also
// inside the driver's profile), median and min of the pairs, with `uptime`'s load. Prints the
// driver's exp region (ns per score) and the whole call.
//   npx tsc -b packages/core && node packages/core/bench/exp-pass-ab.mjs [pairs = 11] [--base DIR]
import { loadavg } from "node:os";
import { resolve } from "node:path";
import { pathToFileURL } from "node:url";

// The driver's profile reads performance.now(): CPU time here, so other processes' load counts less.
const cpuMs = () => {
  const u = process.cpuUsage();
  return (u.user + u.system) / 1000;
};
Object.defineProperty(globalThis, "performance", { value: { now: cpuMs }, configurable: true });
const args = process.argv.slice(2);
const bi = args.indexOf("--base");
const baseDir = bi >= 0 ? args.splice(bi, 2)[1] : undefined;
const core = await import("../dist/index.js");
const internal = await import("../dist/internal.js");
const base = baseDir ? await import(pathToFileURL(resolve(baseDir, "internal.js")).href) : undefined;

const pairs = Number(args[0] ?? 11);
const n = 4096;
const d = 64;
const q = core.randomMatrix(n, d, {}, [1, "t14", "q"]);
const k = core.randomMatrix(n, d, {}, [1, "t14", "k"]);
const v = core.randomMatrix(n, d, {}, [1, "t14", "v"]);
const out = new Float64Array(n * d);
const run = (form) => {
  const lib = form === "base" ? base : internal;
  const rowShift = form === "max" ? "max" : "bound";
  lib.setFusedSoftmaxProfiling(true);
  const t0 = cpuMs();
  lib.fusedSoftmaxAttention({ queries: q.data, keys: k.data, values: v.data, nQ: n, nKV: n, d, dV: d, scale: 1 / 8, out, rowShift });
  const ms = cpuMs() - t0;
  const p = lib.fusedSoftmaxProfile();
  lib.setFusedSoftmaxProfiling(false);
  return { ms, exp: (p.softmaxMs * 1e6) / (n * n) };
};
const [A, B] = base ? ["base", "new"] : ["max", "bound"];
const load0 = loadavg()[0];
run(A);
run(B);
const r = { [A]: [], [B]: [] };
for (let i = 0; i < pairs; i++) for (const m of [A, B]) r[m].push(run(m));
const med = (a) => a.slice().sort((x, y) => x - y)[a.length >> 1];
const f = (x, dg = 2) => x.toFixed(dg);
for (const m of [A, B]) {
  const e = r[m].map((x) => x.exp);
  const t = r[m].map((x) => x.ms);
  console.log(
    `${m.padEnd(5)}  exp region ${f(med(e))} ns/score (min ${f(Math.min(...e))})  whole call ${f(med(t), 0)} ms (min ${f(Math.min(...t), 0)})`,
  );
}
const ratio = (key) => med(r[A].map((x, i) => r[B][i][key] / x[key]));
console.log(
  `${B} ÷ ${A}, median of ${pairs} pairs: exp region ${f(ratio("exp"), 3)}×, whole call ${f(ratio("ms"), 3)}×; load ${f(load0, 1)} → ${f(loadavg()[0], 1)}`,
);
