import { Matrix, ShapeError, ValueError, randomMatrix } from "@randattn/core";
import { QrDecomposition } from "ml-matrix";
import { describe, expect, it } from "vitest";
import {
  countSketch,
  createSketch,
  gaussianSketch,
  leverageScoreRowSampler,
  leverageScores,
  rademacherSketch,
  sparseSignSketch,
  squaredNormRowSampler,
  srhtSketch,
  uniformRowSampler,
  weightedRowSampler,
} from "@randattn/sketch";
import { validateDistribution } from "../../src/operators/distributions.js";

describe("distribution constructors: defaults, validation", () => {
  it("default scales follow the 1/√(short side) isometry convention", () => {
    expect(gaussianSketch(4, 16).scale).toBe(1 / 2);
    expect(gaussianSketch(16, 4).scale).toBe(1 / 2);
    expect(rademacherSketch(9, 100).scale).toBe(1 / 3);
    expect(srhtSketch(4, 100).scale).toBe(1 / 2);
    expect(countSketch(4, 100).scale).toBe(1);
    const ss = sparseSignSketch(20, 100);
    expect([ss.nnzPerColumn, ss.scale]).toEqual([8, 1 / Math.sqrt(8)]);
    expect(sparseSignSketch(3, 100).nnzPerColumn).toBe(3);
    expect(uniformRowSampler(4, 10).scale).toBe(1 / 2);
    expect(gaussianSketch(4, 16, { scale: 1 }).scale).toBe(1);
  });

  it("bad sizes and parameters throw typed errors naming the argument", () => {
    expect(() => gaussianSketch(0, 5)).toThrow(/rows: expected an integer in \[1, \d+\], got 0/);
    expect(() => rademacherSketch(3, 2.5)).toThrow(/cols: expected an integer/);
    expect(() => gaussianSketch(3, 5, { scale: -1 })).toThrow(/options.scale: expected a number > 0, got -1/);
    expect(() => sparseSignSketch(3, 10, { nnzPerColumn: 4 })).toThrow(/options.nnzPerColumn: expected an integer in \[1, 3\], got 4/);
    expect(() => weightedRowSampler(3, [0.2, 0.2], { normalize: false })).toThrow(/weights: expected entries summing to 1/);
    expect(() => weightedRowSampler(0, [1, 2])).toThrow(/samples: expected an integer/);
    expect(() => uniformRowSampler(2, 5, { side: "top" as "left" })).toThrow(/options.side/);
    expect(() => validateDistribution({ ...srhtSketch(3, 10), paddedDim: 10 })).toThrow(/distribution.paddedDim: expected 16/);
    expect(() => validateDistribution({ ...gaussianSketch(3, 10), kind: "fft" as "gaussian" })).toThrow(/distribution.kind/);
    expect(() => validateDistribution({ ...uniformRowSampler(3, 10), rows: 4 })).toThrow(ShapeError);
    expect(() => createSketch(gaussianSketch(2, 3), [] as unknown as [number])).toThrow(ValueError);
    expect(() => createSketch(gaussianSketch(2, 3), "seed" as unknown as [number])).toThrow(/seed: expected a SeedKey array/);
  });

  it("row samplers fix their orientation from `side`, even with more samples than rows", () => {
    const left = uniformRowSampler(12, 5);
    expect([left.rows, left.cols]).toEqual([12, 5]);
    const right = uniformRowSampler(12, 5, { side: "right" });
    expect([right.rows, right.cols]).toEqual([5, 12]);
    const op = createSketch(left, [1]);
    expect(op.indices.length).toBe(12);
    for (let t = 0; t < 12; t++) expect(op.weights[t]).toBeCloseTo(1 / Math.sqrt(12 * (1 / 5)), 15);
  });
});

describe("data-dependent probabilities", () => {
  const a = randomMatrix(30, 4, {}, [8, "lev"]);
  for (let c = 0; c < 4; c++) a.data[c] *= 20; // a high-leverage first row

  it("squared-norm probabilities are ‖A_j‖²/‖A‖²_F (rows, or columns for side right)", () => {
    const p = squaredNormRowSampler(5, a).probabilities;
    let total = 0;
    for (const v of a.data) total += v * v;
    for (let i = 0; i < 30; i++) {
      let r = 0;
      for (let c = 0; c < 4; c++) r += a.get(i, c) ** 2;
      expect(p[i]).toBeCloseTo(r / total, 14);
    }
    const pc = squaredNormRowSampler(5, a, { side: "right" }).probabilities;
    expect(pc.length).toBe(4);
  });

  it("leverage scores equal the squared row norms of Q from an ml-matrix QR (oracle), sum to the rank", () => {
    const { scores, rank } = leverageScores(a);
    const q = new QrDecomposition(a.toMlMatrix()).orthogonalMatrix;
    expect(rank).toBe(4);
    for (let i = 0; i < 30; i++) {
      let r = 0;
      for (let c = 0; c < 4; c++) r += q.get(i, c) ** 2;
      expect(scores[i]).toBeCloseTo(r, 12);
    }
    expect(scores.reduce((s, v) => s + v, 0)).toBeCloseTo(4, 12);
    const p = leverageScoreRowSampler(5, a).probabilities;
    expect(p[0]).toBeCloseTo(scores[0] / 4, 12);
  });

  it("a rank-deficient matrix has rank-many unit leverage in total", () => {
    const b = Matrix.from(10, 3, (i, j) => (j === 2 ? (i + 1) ** 2 : (i + 1) * (j + 1))); // column 1 = 2·column 0
    const { scores, rank } = leverageScores(b);
    expect(rank).toBe(2);
    expect(scores.reduce((s, v) => s + v, 0)).toBeCloseTo(2, 10);
    expect(() => leverageScores(new Matrix(3, 2))).toThrow(/a: expected a nonzero matrix/);
  });
});

describe("cost reports", () => {
  it("flops count one multiply-add per stored nonzero per column of A; floats stored count the state", () => {
    const p = 7;
    const dense = createSketch(gaussianSketch(4, 10), [1]);
    expect(dense.cost(p, "left")).toEqual({ flops: 2 * 40 * p, floatsStored: 40 });
    for (const dist of [countSketch(4, 10), sparseSignSketch(4, 10, { nnzPerColumn: 3 })]) {
      const op = createSketch(dist, [1]);
      const nnz = op.toMatrix().data.filter((v) => v !== 0).length; // distinct rows → no cancellation
      expect(op.cost(p, "left")).toEqual({ flops: 2 * nnz * p, floatsStored: 2 * nnz });
      expect(op.cost(p, "right")).toEqual(op.cost(p, "left"));
    }
    // SRHT: n sign flips + n'·log₂n' butterflies + d scalings per column; n signs + d indices stored.
    expect(createSketch(srhtSketch(4, 10), [1]).cost(p, "left")).toEqual({ flops: p * (10 + 16 * 4 + 4), floatsStored: 14 });
    expect(createSketch(uniformRowSampler(4, 10), [1]).cost(p, "left")).toEqual({ flops: 4 * p, floatsStored: 8 });
  });
});
