import * as mm from "../dist/linalg/matmul.js"; import * as g from "../dist/fast/gemm.js"; import * as r from "../dist/random/init.js"; import * as o from "../dist/linalg/ops.js"; import * as mx from "../dist/linalg/matrix.js"; const c = { ...mm, ...g, ...r, ...o, ...mx };
import { Matrix as Ml } from "ml-matrix";
const { Matrix, matmul, matmulTransB, matmulTransA, setKernelBackend, randomMatrix, transpose } = c;
function cmp(x, y) { let e = 0, s = 0; for (let i = 0; i < x.data.length; i++) { e = Math.max(e, Math.abs(x.data[i] - y.data[i])); s = Math.max(s, Math.abs(y.data[i])); } return e / s; }
for (const [m, k, n] of [[1,1,1],[5,3,7],[37,300,131],[129,257,1025],[600, 700, 30]]) {
  const a = randomMatrix(m, k, [1, "a"]), b = randomMatrix(k, n, [1, "b"]);
  setKernelBackend("scalar"); const r = matmul(a, b);
  setKernelBackend("wasm");
  console.log(m, k, n, cmp(matmul(a, b), r), cmp(matmulTransB(a, transpose(b)), r), cmp(matmulTransA(transpose(a), b), r));
}
for (const N of [512, 1024]) {
  const a = randomMatrix(N, N, [1, "a"]), b = randomMatrix(N, N, [1, "b"]);
  for (const be of ["scalar", "wasm"]) { setKernelBackend(be); matmul(a, b); const t = performance.now(); matmul(a, b); const dt = (performance.now() - t) / 1000; console.log(N, be, (2 * N ** 3 / dt / 1e9).toFixed(2), "GFLOP/s"); }
  const A = a.toMlMatrix(), B = b.toMlMatrix(); const t = performance.now(); A.mmul(B); const dt = (performance.now() - t) / 1000; console.log(N, "ml-matrix", (2 * N ** 3 / dt / 1e9).toFixed(2));
}
