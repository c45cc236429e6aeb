// Attention fixtures for the LSH-based sketches: clustered keys (so sortLSH has large entries to
// find), value rows with spread norms, square for the causal forms.
import { Matrix, randomMatrix } from "@randattn/core";

export const n = 48;
export const d = 6;
export const dV = 3;

/** Keys around 4 directions (scale 2), queries near them: the attention is peaked. */
function clustered(rows: number, key: number): Matrix {
  const centers = randomMatrix(4, d, { scale: 1 }, [key, "centers"]);
  const noise = randomMatrix(rows, d, { scale: 0.35 }, [key, "noise"]);
  const out = new Matrix(rows, d);
  for (let i = 0; i < rows; i++)
    for (let t = 0; t < d; t++) out.data[i * d + t] = 2 * centers.data[(i % 4) * d + t] + noise.data[i * d + t];
  return out;
}

export const queries = clustered(n, 5);
export const keys = (() => {
  const k = clustered(n, 5);
  const extra = randomMatrix(n, d, { scale: 0.3 }, [6, "K"]);
  for (let q = 0; q < k.data.length; q++) k.data[q] += extra.data[q];
  return k;
})();
export const values = (() => {
  const v = randomMatrix(n, dV, {}, [7, "V"]);
  for (let j = 0; j < n; j++) for (let c = 0; c < dV; c++) v.data[j * dV + c] *= 0.2 + (2 * j) / n;
  return v;
})();

export function maxAbs(a: Matrix, b: Matrix): number {
  let m = 0;
  for (let q = 0; q < a.data.length; q++) m = Math.max(m, Math.abs(a.data[q] - b.data[q]));
  return m;
}
