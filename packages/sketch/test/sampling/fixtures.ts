// Small attention-like fixtures with heterogeneous key/value norms (so the schemes differ).
import { Matrix, attentionWeights, randomMatrix } from "@randattn/core";

export const nQ = 5;
export const nKV = 24;
export const dQK = 4;
export const dV = 3;

export const queries = randomMatrix(nQ, dQK, { scale: 1.5 }, [77, "Q"]);
export const keys = randomMatrix(nKV, dQK, { scale: 1.5 }, [77, "K"]);
/** V with row norms spread over two orders of magnitude. */
export const values = (() => {
  const v = randomMatrix(nKV, dV, {}, [77, "V"]);
  for (let j = 0; j < nKV; j++) for (let c = 0; c < dV; c++) v.data[j * dV + c] *= 0.1 + (3 * j) / nKV;
  return v;
})();
export const weightsP = attentionWeights(queries, keys);

/** Plain-loop product W V (the literal formula). */
export function product(w: Matrix, v: Matrix): Matrix {
  const out = new Matrix(w.rows, v.cols);
  for (let i = 0; i < w.rows; i++)
    for (let c = 0; c < v.cols; c++) {
      let s = 0;
      for (let j = 0; j < w.cols; j++) s += w.data[i * w.cols + j] * v.data[j * v.cols + c];
      out.data[i * v.cols + c] = s;
    }
  return out;
}

export function squaredFrobeniusDiff(x: Matrix, y: Matrix): number {
  let s = 0;
  for (let i = 0; i < x.data.length; i++) s += (x.data[i] - y.data[i]) ** 2;
  return s;
}
