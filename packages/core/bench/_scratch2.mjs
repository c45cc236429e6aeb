import * as f from "../dist/fast/index.js";
import * as r from "../dist/random/init.js";
const N = 512, d = 64;
const q = r.randomMatrix(N, d, [1, "q"]), k = r.randomMatrix(N, d, [1, "k"]), v = r.randomMatrix(N, d, [1, "v"]);
const ref = f.fastAttention(q, k, v, { precision: "float64" });
for (const opts of [{ precision: "float64", mode: "streaming", blockSize: 100, queryBlockSize: 77 }, { precision: "float32" }, { precision: "float32", mode: "streaming" }, {precision:"float64", mask:{kind:"causal"}}, {precision:"float64", mode:"streaming", mask:{kind:"causal"}, blockSize: 33, queryBlockSize: 50}]) {
  const y = f.fastAttention(q, k, v, opts);
  const base = opts.mask ? f.fastAttention(q, k, v, { precision: "float64", mask: opts.mask }) : ref;
  let e = 0; for (let i = 0; i < y.data.length; i++) e = Math.max(e, Math.abs(y.data[i] - base.data[i]));
  console.log(JSON.stringify(opts), e, f.float32AttentionErrorBound(q, k, v, opts));
}
const { initMultiHeadWeights } = await import("../dist/attention/index.js").catch(() => ({}));
console.log(typeof initMultiHeadWeights);
const H = 8, dIn = 64;
const x = r.randomMatrix(1024, dIn, [1, "x"]);
const mk = (rows, cols, s) => r.randomMatrix(rows, cols, [2, s]);
const w = { queries: Array.from({ length: H }, (_, h) => mk(dIn, 64, "q" + h)), keys: Array.from({ length: 4 }, (_, h) => mk(dIn, 64, "k" + h)), values: Array.from({ length: 4 }, (_, h) => mk(dIn, 64, "v" + h)), output: mk(H * 64, dIn, "o") };
let t = performance.now();
const y1 = f.multiHeadAttentionFast(x, x, w);
console.log("single", performance.now() - t);
for (const W of [1, 2, 1, 2]) {
  t = performance.now();
  const y2 = await f.parallelMultiHeadAttention(x, x, w, { workers: W });
  let same = y2.data.every((v, i) => Object.is(v, y1.data[i]));
  console.log("workers", W, performance.now() - t, same);
}
