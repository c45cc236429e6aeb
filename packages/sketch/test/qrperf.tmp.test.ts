import { test } from "vitest";
import { randomMatrix, matmulTransA } from "@randattn/core";
import { householderQr, luLowerFactor } from "../src/lowrank/householder.js";
import { QrDecomposition } from "ml-matrix";
test("perf", () => {
  const a = randomMatrix(16384, 74, [1, "a"]);
  let t = performance.now();
  const { q, r } = householderQr(a);
  console.log("householder", performance.now() - t);
  const g = matmulTransA(q, q); let e = 0; for (let i=0;i<74;i++) for (let j=0;j<74;j++) e=Math.max(e, Math.abs(g.get(i,j)-(i===j?1:0)));
  console.log("orth err", e);
  t = performance.now(); luLowerFactor(a); console.log("lu", performance.now() - t);
  const ml = a.toMlMatrix();
  t = performance.now(); const qr = new QrDecomposition(ml); qr.orthogonalMatrix; console.log("ml-matrix qr", performance.now() - t);
});
