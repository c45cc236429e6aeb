// RandAttn sketch benchmark (issue #3, "Benchmarks"): prints, in one run,
//  1. exact vs random-feature (FAVOR+: positive, orthogonal) softmax attention at N = 1024 … 16384,
//     d = 64, m = 256 — times, time ratio, relative error — showing quadratic vs linear growth;
//  2. randomized SVD (k = 64, p = 10, q = 2) of a 16384 × 512 latent vs ml-matrix's full SVD —
//     time ratio and error ratio to the Eckart–Young optimum.
// Exact attention is core's streamingAttention (online softmax, O(N) memory: the N × N matrix of
// N = 16384 would need 2 GiB). Single thread. Times: best of 3 runs for random features and for
// exact attention up to N = 4096, one run above (and for the SVDs).
//
//   node packages/sketch/bench/run.mjs              (after `pnpm run build`)
//   node packages/sketch/bench/run.mjs --quick      N ≤ 4096 and a 4096 × 512 latent
//   node packages/sketch/bench/run.mjs --skip-svd   attention part only (the ml-matrix SVD takes minutes)
//   node packages/sketch/bench/run.mjs --skip-rf    SVD part only
import { cpus, loadavg } from "node:os";
import * as core from "@randattn/core";
import { SVD } from "ml-matrix";
import * as sketch from "../dist/index.js";

const quick = process.argv.includes("--quick");
const skipSvd = process.argv.includes("--skip-svd");
const skipRf = process.argv.includes("--skip-rf");
const fmt = (x, digits = 3) => (Number.isFinite(x) ? x.toPrecision(digits) : "—");

/** Best wall time of `reps` runs (the machine may be shared: the minimum is the least disturbed). */
function time(f, reps = 1) {
  let best = Number.POSITIVE_INFINITY;
  let out;
  for (let r = 0; r < reps; r++) {
    const t0 = performance.now();
    out = f();
    best = Math.min(best, (performance.now() - t0) / 1000);
  }
  return { out, s: best };
}

function table(header, rows) {
  const all = [header, ...rows].map((r) => r.map(String));
  const w = header.map((_, j) => Math.max(...all.map((r) => r[j].length)));
  for (const [i, r] of all.entries()) {
    console.log(r.map((c, j) => c.padStart(w[j])).join("  "));
    if (i === 0) console.log(w.map((x) => "-".repeat(x)).join("  "));
  }
}

console.log(
  `RandAttn sketch bench — Node ${process.version}, ${cpus()[0]?.model ?? "?"} × ${cpus().length}, load ${loadavg()
    .map((x) => x.toFixed(1))
    .join(" ")}\n`,
);

// ---------------------------------------------------------------- 1. random-feature attention
const d = 64;
const m = 256;
const sigmaQK = 0.5; // q, k entries N(0, σ²): the logits ⟨q, k⟩/√d have standard deviation σ² = 0.25
if (!skipRf) {
  console.log(
    `## exact (streaming) vs random-feature attention, d = ${d}, m = ${m} (positive, orthogonal), q,k ~ N(0, ${sigmaQK}²), v ~ N(0, 1)`,
  );
  {
    const warm = core.randomMatrix(1024, d, {}, [0, "warm"]);
    for (let r = 0; r < 3; r++) {
      core.streamingAttention(warm, warm, warm);
      sketch.randomFeatureAttention(warm, warm, warm, { numFrequencies: m }, [0, "warm"]);
    }
  }
  const rows = [];
  let prev;
  for (const n of quick ? [1024, 2048, 4096] : [1024, 2048, 4096, 8192, 16384]) {
    const q = core.randomMatrix(n, d, { scale: sigmaQK }, [1, "rf", n, "q"]);
    const k = core.randomMatrix(n, d, { scale: sigmaQK }, [1, "rf", n, "k"]);
    const v = core.randomMatrix(n, d, {}, [1, "rf", n, "v"]);
    const exact = time(() => core.streamingAttention(q, k, v), n <= 4096 ? 3 : 1);
    const approx = time(() => sketch.randomFeatureAttention(q, k, v, { numFrequencies: m }, [1, "rf", n, "omega"]), 3);
    const err = core.relativeFrobeniusError(approx.out.output, exact.out);
    rows.push([
      n,
      exact.s.toFixed(2),
      approx.s.toFixed(3),
      (exact.s / approx.s).toFixed(1),
      prev ? (exact.s / prev.exact).toFixed(2) : "—",
      prev ? (approx.s / prev.approx).toFixed(2) : "—",
      fmt(err),
      (approx.out.cost.flops / 1e9).toFixed(2),
    ]);
    prev = { exact: exact.s, approx: approx.s };
  }
  table(["N", "exact s", "RF s", "speed-up", "exact ×/2N", "RF ×/2N", "rel. error", "RF GFLOP"], rows);
  console.log("(×/2N: time growth when N doubles — 4 for quadratic, 2 for linear)\n");
}

// ---------------------------------------------------------------- 2. randomized SVD of a latent
if (!skipSvd) {
  const nRows = quick ? 4096 : 16384;
  const dL = 512;
  const k = 64;
  console.log(`## randomized SVD of a ${nRows}×${dL} latent (k = ${k}, p = 10, q = 2) vs ml-matrix full SVD`);
  // Latent with a decaying spectrum: L = G diag(σ) Vᵀ, G Gaussian (N × d_L), V Haar-orthogonal, σ_j = (j + 1)^{-1}.
  const g = core.randomMatrix(nRows, dL, {}, [2, "latent", "G"]);
  const vOrth = sketch.householderQr(core.randomMatrix(dL, dL, {}, [2, "latent", "V"])).q;
  for (let i = 0; i < nRows; i++) for (let j = 0; j < dL; j++) g.data[i * dL + j] /= j + 1;
  const latent = core.matmulTransB(g, vOrth);
  const rsvd = time(() => sketch.randomizedSvd(latent, { rank: k, oversampling: 10, powerIterations: 2 }, [2, "rsvd"]));
  const { U, S, Vt, cost } = rsvd.out;
  const us = core.Matrix.from(U.rows, U.cols, (i, j) => U.data[i * k + j] * S[j]);
  const approxL = core.matmul(us, Vt);
  let errR = 0;
  for (let i = 0; i < latent.data.length; i++) errR += (latent.data[i] - approxL.data[i]) ** 2;
  errR = Math.sqrt(errR);
  const ml = latent.toMlMatrix();
  const full = time(() => new SVD(ml, { computeLeftSingularVectors: true, computeRightSingularVectors: true }));
  const sigma = Array.from(full.out.diagonal).sort((a, b) => b - a);
  let tail = 0;
  for (let j = k; j < sigma.length; j++) tail += sigma[j] ** 2;
  tail = Math.sqrt(tail);
  table(
    ["method", "seconds", "‖L − L_k‖_F", "error / optimal", "GFLOP"],
    [
      ["randomized SVD", rsvd.s.toFixed(2), fmt(errR, 6), fmt(errR / tail, 6), (cost.flops / 1e9).toFixed(2)],
      ["ml-matrix SVD", full.s.toFixed(2), fmt(tail, 6), "1", "—"],
    ],
  );
  console.log(
    `time ratio (ml-matrix / randomized): ${(full.s / rsvd.s).toFixed(1)}×; σ_1 = ${fmt(sigma[0])}, σ_${k} = ${fmt(sigma[k - 1])}, σ_${k + 1} = ${fmt(sigma[k])}`,
  );
}
