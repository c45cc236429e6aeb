// Factories for every operator kind, shared by the operator test files.
import { Matrix } from "@randattn/core";
import {
  type SketchDistribution,
  countSketch,
  gaussianSketch,
  rademacherSketch,
  sparseSignSketch,
  srhtSketch,
  uniformRowSampler,
  weightedRowSampler,
} from "@randattn/sketch";

/** A named factory (rows, cols) → distribution; row samplers are built for the side their shape implies. */
export interface KindFactory {
  name: string;
  make(rows: number, cols: number): SketchDistribution;
}

/** Deterministic non-uniform weights 1, 2, …, n (for the weighted row sampler). */
export function rampWeights(n: number): Float64Array {
  return Float64Array.from({ length: n }, (_, j) => j + 1);
}

export const kinds: KindFactory[] = [
  { name: "gaussian", make: (r, c) => gaussianSketch(r, c) },
  { name: "rademacher", make: (r, c) => rademacherSketch(r, c) },
  { name: "srht", make: (r, c) => srhtSketch(r, c) },
  { name: "countsketch", make: (r, c) => countSketch(r, c) },
  { name: "sparse-sign", make: (r, c) => sparseSignSketch(r, c, { nnzPerColumn: Math.min(3, r, c) }) },
  {
    name: "row-sampling (uniform)",
    make: (r, c) => (r <= c ? uniformRowSampler(r, c) : uniformRowSampler(c, r, { side: "right" })),
  },
  {
    name: "row-sampling (weights)",
    make: (r, c) => (r <= c ? weightedRowSampler(r, rampWeights(c)) : weightedRowSampler(c, rampWeights(r), { side: "right" })),
  },
];

/** ‖x − y‖_F / max(‖y‖_F, tiny). */
export function relDiff(x: Matrix, y: Matrix): number {
  let num = 0;
  let den = 0;
  for (let i = 0; i < x.data.length; i++) {
    num += (x.data[i] - y.data[i]) ** 2;
    den += y.data[i] ** 2;
  }
  return Math.sqrt(num / Math.max(den, 1e-300));
}

/** Plain triple-loop product, the literal definition (independent of core's tiled kernels). */
export function naiveMatmul(a: Matrix, b: Matrix): Matrix {
  const out = new Matrix(a.rows, b.cols);
  for (let i = 0; i < a.rows; i++)
    for (let j = 0; j < b.cols; j++) {
      let s = 0;
      for (let k = 0; k < a.cols; k++) s += a.data[i * a.cols + k] * b.data[k * b.cols + j];
      out.data[i * b.cols + j] = s;
    }
  return out;
}
