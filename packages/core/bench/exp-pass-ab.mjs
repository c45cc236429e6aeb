// The exp pass, row-max form against the bound row shift (issue 14): one fused f64 attention call
// (N = 4096, d = 64) with rowShift "max" and one with "bound", alternated in one process, CPU time
// (process.cpuUsage, also inside the driver's profile), median and min of the pairs, with `uptime`'s
// load. Prints the driver's exp region (ns per score) and the whole call.
//   npx tsc -b packages/core && node packages/core/bench/exp-pass-ab.mjs [pairs = 11]
import { loadavg } from "node:os";

// The driver's profile reads performance.now(): CPU time here, so other processes' load counts less.
const cpuMs = () => {
  const u = process.cpuUsage();
  return (u.user + u.system) / 1000;
};
Object.defineProperty(globalThis, "performance", { value: { now: cpuMs }, configurable: true });
const core = await import("../dist/index.js");
const internal = await import("../dist/internal.js");

const pairs = Number(process.argv[2] ?? 11);
const n = 4096;
const d = 64;
const q = core.randomMatrix(n, d, {}, [1, "t14", "q"]);
const k = core.randomMatrix(n, d, {}, [1, "t14", "k"]);
const v = core.randomMatrix(n, d, {}, [1, "t14", "v"]);
const out = new Float64Array(n * d);
const run = (rowShift) => {
  internal.setFusedSoftmaxProfiling(true);
  const t0 = cpuMs();
  internal.fusedSoftmaxAttention({ queries: q.data, keys: k.data, values: v.data, nQ: n, nKV: n, d, dV: d, scale: 1 / 8, out, rowShift });
  const ms = cpuMs() - t0;
  const p = internal.fusedSoftmaxProfile();
  internal.setFusedSoftmaxProfiling(false);
  return { ms, exp: (p.softmaxMs * 1e6) / (n * n) };
};
const load0 = loadavg()[0];
run("max");
run("bound");
const r = { max: [], bound: [] };
for (let i = 0; i < pairs; i++) for (const m of ["max", "bound"]) r[m].push(run(m));
const med = (a) => a.slice().sort((x, y) => x - y)[a.length >> 1];
const f = (x, dg = 2) => x.toFixed(dg);
for (const m of ["max", "bound"]) {
  const e = r[m].map((x) => x.exp);
  const t = r[m].map((x) => x.ms);
  console.log(
    `${m.padEnd(5)}  exp region ${f(med(e))} ns/score (min ${f(Math.min(...e))})  whole call ${f(med(t), 0)} ms (min ${f(Math.min(...t), 0)})`,
  );
}
const ratio = (key) => med(r.max.map((x, i) => r.bound[i][key] / x[key]));
console.log(
  `bound ÷ max, median of ${pairs} pairs: exp region ${f(ratio("exp"), 3)}×, whole call ${f(ratio("ms"), 3)}×; load ${f(load0, 1)} → ${f(loadavg()[0], 1)}`,
);
