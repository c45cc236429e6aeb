/** Shared helpers of the model tests. */
import type { Matrix } from "@randattn/core";

/** ‖x − y‖ / ‖y‖ over two equally long arrays. */
export function relDiff(x: ArrayLike<number>, y: ArrayLike<number>): number {
  if (x.length !== y.length) throw new Error(`length ${x.length} vs ${y.length}`);
  let num = 0;
  let den = 0;
  for (let i = 0; i < x.length; i++) {
    num += (x[i] - y[i]) ** 2;
    den += y[i] ** 2;
  }
  return Math.sqrt(num / (den || 1));
}

/** Rows [a, b) of a matrix as a flat view. */
export function rows(m: Matrix, a: number, b: number): Float64Array {
  return m.data.subarray(a * m.cols, b * m.cols);
}
