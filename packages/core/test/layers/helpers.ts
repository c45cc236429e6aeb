/** Shared helpers of the layers tests: relative error and literal (loop) references. */
import type { Matrix } from "@randattn/core";

/** ‖x − y‖_F / ‖y‖_F (absolute when y = 0). */
export function relErr(x: Matrix, y: Matrix): number {
  if (x.rows !== y.rows || x.cols !== y.cols) throw new Error(`shape ${x.shape} vs ${y.shape}`);
  let num = 0;
  let den = 0;
  for (let i = 0; i < x.data.length; i++) {
    num += (x.data[i] - y.data[i]) ** 2;
    den += y.data[i] ** 2;
  }
  return Math.sqrt(num / (den || 1));
}

/** Random vector from a simple deterministic LCG-free source: uses Math.sin to stay independent of the library's streams. */
export function vec(n: number, seed: number, scale = 1): Float64Array {
  const v = new Float64Array(n);
  for (let i = 0; i < n; i++) v[i] = scale * Math.sin(seed * 12.9898 + i * 78.233) * 1.7;
  return v;
}
