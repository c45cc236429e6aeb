// linalg/ and random/ entries: Matrix construction, elementwise and structural ops, norms,
// products, seeded random matrices. The linalg primitives are IEEE-transparent building blocks
// (NaN/±Inf in their inputs pass through, as in BLAS), so they run with `passThrough`; every
// other check of the invariant applies (typed errors, shapes, finite results for finite inputs).
import fc from "fast-check";
import {
  Matrix,
  add,
  addInPlace,
  addRowVector,
  asMatrix,
  blockDiag,
  concatCols,
  concatRows,
  divideRows,
  frobeniusNorm,
  hadamard,
  initWeight,
  matmul,
  matmulTransA,
  matmulTransB,
  matvec,
  maxAbs,
  maxAbsDiff,
  randomMatrix,
  relativeFrobeniusError,
  rowSums,
  scale,
  selectRows,
  sliceCols,
  sliceRows,
  softmaxRows,
  splitCols,
  sub,
  transpose,
} from "@randattn/core";
import { type Entry, lengthIs, shapeIs } from "../harness.js";
import { badIntArb, dimArb, intArg, matArg, matrixArb, nonMatrixArb, numArg, seedArb } from "../gen.js";

const F = "linalg";
const rc = fc.tuple(dimArb(5), dimArb(5));

function binary(name: string, f: (a: Matrix, b: Matrix) => Matrix): Entry {
  return {
    family: F,
    name,
    passThrough: true,
    args: rc.chain(([r, c]) => fc.tuple(matArg(r, c), matArg(r, c))),
    call: f,
    check: (out, [a]) => shapeIs(out, a.rows, a.cols),
  };
}

/** A vector argument of length n: a Float64Array or number[], sometimes wrong length / non-finite / not a vector. */
function vecArg(n: number): fc.Arbitrary<unknown> {
  return fc.oneof(
    {
      weight: 8,
      arbitrary: fc
        .array(fc.double({ min: -10, max: 10, noNaN: true }), { minLength: n, maxLength: n })
        .map((a) => Float64Array.from(a, (x) => (Math.abs(x) < 1e-3 ? 0.5 : x))),
    },
    {
      weight: 1,
      arbitrary: fc.constantFrom<unknown>(
        null,
        undefined,
        "v",
        3,
        Float64Array.from({ length: n + 1 }, () => 1),
      ),
    },
    { weight: 1, arbitrary: fc.constant(Float64Array.from({ length: n }, (_, i) => (i === 0 ? Number.NaN : 1))) },
  );
}

export const linalgEntries: Entry[] = [
  {
    family: F,
    name: "new Matrix(rows, cols, data)",
    args: fc
      .tuple(intArg(0, 5), intArg(0, 5))
      .chain(([r, c]) =>
        fc.tuple(
          fc.constant(r),
          fc.constant(c),
          fc.oneof(
            fc.constant(undefined),
            fc.constant(
              typeof r === "number" && typeof c === "number" && Number.isInteger(r * c) && r * c >= 0 && r * c < 100
                ? new Float64Array(r * c)
                : undefined,
            ),
            fc.constantFrom<unknown>(new Float64Array(3), [1, 2, 3, 4], null, "data"),
          ),
        ),
      ),
    call: (r, c, d) => new Matrix(r, c, d),
    check: (out, [r, c]) => shapeIs(out, r, c),
  },
  {
    family: F,
    name: "Matrix.fromArray(rows) / asMatrix(m)",
    passThrough: true,
    args: fc.tuple(
      fc.oneof(
        fc.array(fc.array(fc.double({ min: -5, max: 5, noNaN: true }), { minLength: 2, maxLength: 2 }), { maxLength: 4 }),
        fc.constantFrom<unknown>([[1, 2], [3]], [[Number.NaN]], null, undefined, "rows", 7, [null], [[1], "ab"]),
      ),
      fc.boolean(),
    ),
    call: (rows, viaAs) => (viaAs ? asMatrix(rows) : Matrix.fromArray(rows)),
    check: (out, [rows]) => shapeIs(out, rows.length, rows.length === 0 ? 0 : rows[0].length),
  },
  {
    family: F,
    name: "transpose(a)",
    passThrough: true,
    args: rc.chain(([r, c]) => fc.tuple(matArg(r, c))),
    call: transpose,
    check: (out, [a]) => shapeIs(out, a.cols, a.rows),
  },
  binary("add(a, b)", add),
  binary("sub(a, b)", sub),
  binary("addInPlace(a, b)", (a, b) => addInPlace(a instanceof Matrix ? a.clone() : a, b)),
  binary("hadamard(a, b)", hadamard),
  {
    family: F,
    name: "maxAbsDiff(a, b) / relativeFrobeniusError(approx, exact)",
    passThrough: true,
    // ‖approx‖ > 0 = ‖exact‖ is an infinite relative error, reported as +Infinity (documented).
    allowInfiniteOutput: true,
    args: rc.chain(([r, c]) => fc.tuple(matArg(r, c), matArg(r, c), fc.boolean())),
    call: (a, b, rel) => (rel ? relativeFrobeniusError(a, b) : maxAbsDiff(a, b)),
    check: (out) => (typeof out === "number" && (out >= 0 || Number.isNaN(out)) ? undefined : `expected a number ≥ 0, got ${out}`),
  },
  {
    family: F,
    name: "scale(a, s)",
    passThrough: true,
    args: rc.chain(([r, c]) =>
      fc.tuple(
        matArg(r, c),
        fc.oneof(
          { weight: 8, arbitrary: fc.double({ min: -1e3, max: 1e3, noNaN: true }) },
          { weight: 1, arbitrary: fc.constantFrom<unknown>(Number.NaN, Number.POSITIVE_INFINITY, "2", null) },
        ),
      ),
    ),
    call: scale,
    check: (out, [a]) => shapeIs(out, a.rows, a.cols),
  },
  {
    family: F,
    name: "addRowVector(a, v)",
    passThrough: true,
    args: rc.chain(([r, c]) => fc.tuple(matArg(r, c), vecArg(c))),
    call: addRowVector,
    check: (out, [a]) => shapeIs(out, a.rows, a.cols),
  },
  {
    family: F,
    name: "divideRows(a, d)",
    passThrough: true,
    args: rc.chain(([r, c]) =>
      fc.tuple(
        matArg(r, c),
        fc.oneof(
          { weight: 6, arbitrary: fc.array(fc.double({ min: 1e-3, max: 10, noNaN: true }), { minLength: r, maxLength: r }) },
          { weight: 1, arbitrary: vecArg(r) },
          { weight: 1, arbitrary: fc.constant(new Float64Array(r)) },
        ),
      ),
    ),
    call: divideRows,
    check: (out, [a]) => shapeIs(out, a.rows, a.cols),
  },
  {
    family: F,
    name: "rowSums(a) / frobeniusNorm(a) / maxAbs(a)",
    passThrough: true,
    args: rc.chain(([r, c]) => fc.tuple(matArg(r, c), fc.constantFrom(0, 1, 2))),
    call: (a, which) => (which === 0 ? rowSums(a) : which === 1 ? frobeniusNorm(a) : maxAbs(a)),
    check: (out, [a, which]) =>
      which === 0
        ? lengthIs(out, a.rows)
        : typeof out === "number" && (out >= 0 || Number.isNaN(out))
          ? undefined
          : `expected a number ≥ 0, got ${out}`,
  },
  {
    family: F,
    name: "softmaxRows(logits)",
    args: rc.chain(([r, c]) => fc.tuple(matArg(r, c))),
    call: softmaxRows,
    check: (out, [a]) => shapeIs(out, a.rows, a.cols),
  },
  {
    family: F,
    name: "sliceRows / sliceCols(a, start, end)",
    args: rc.chain(([r, c]) => fc.tuple(matArg(r, c), intArg(0, 5), fc.oneof(fc.constant(undefined), intArg(0, 5)), fc.boolean())),
    passThrough: true,
    call: (a, s, e, rows) => (rows ? sliceRows(a, s, e) : sliceCols(a, s, e)),
    check: (out, [a, s, e, rows]) => (rows ? shapeIs(out, (e ?? a.rows) - s, a.cols) : shapeIs(out, a.rows, (e ?? a.cols) - s)),
  },
  {
    family: F,
    name: "selectRows(a, indices)",
    passThrough: true,
    args: rc.chain(([r, c]) =>
      fc.tuple(
        matArg(r, c),
        fc.oneof(
          { weight: 5, arbitrary: fc.array(fc.integer({ min: -1, max: 5 }), { maxLength: 4 }) },
          { weight: 1, arbitrary: fc.constantFrom<unknown>(null, "12", [0.5], [Number.NaN]) },
        ),
      ),
    ),
    call: selectRows,
    check: (out, [a, idx]) => shapeIs(out, idx.length, a.cols),
  },
  {
    family: F,
    name: "concatCols / concatRows / blockDiag(parts)",
    passThrough: true,
    args: fc.tuple(
      fc.oneof(
        {
          weight: 5,
          arbitrary: fc.array(
            fc.tuple(dimArb(3), dimArb(3)).chain(([r, c]) => matrixArb(r, c)),
            { maxLength: 3 },
          ),
        },
        { weight: 1, arbitrary: fc.constantFrom<unknown>(null, undefined, "parts", [null], [[1, 2]]) },
      ),
      fc.constantFrom(0, 1, 2),
    ),
    call: (parts, which) => (which === 0 ? concatCols(parts) : which === 1 ? concatRows(parts) : blockDiag(parts)),
    check: (out, [parts, which]) => {
      const rows = parts.map((p: Matrix) => p.rows);
      const cols = parts.map((p: Matrix) => p.cols);
      const sum = (xs: number[]) => xs.reduce((s, x) => s + x, 0);
      if (which === 0) return shapeIs(out, rows[0], sum(cols));
      if (which === 1) return shapeIs(out, sum(rows), cols[0]);
      return shapeIs(out, sum(rows), sum(cols));
    },
  },
  {
    family: F,
    name: "splitCols(a, n)",
    passThrough: true,
    args: rc.chain(([r, c]) => fc.tuple(matArg(r, c), intArg(1, 4))),
    call: splitCols,
    check: (out, [a, n]) => (Array.isArray(out) && out.length === n ? shapeIs(out[0], a.rows, a.cols / n) : `expected ${n} parts`),
  },
  {
    family: F,
    name: "matmul / matmulTransA / matmulTransB(a, b)",
    passThrough: true,
    args: fc
      .tuple(dimArb(5), dimArb(5), dimArb(5), fc.constantFrom(0, 1, 2))
      .chain(([m, k, n, which]) =>
        fc.tuple(which === 1 ? matArg(k, m) : matArg(m, k), which === 2 ? matArg(n, k) : matArg(k, n), fc.constant(which)),
      ),
    call: (a, b, which) => (which === 0 ? matmul(a, b) : which === 1 ? matmulTransA(a, b) : matmulTransB(a, b)),
    check: (out, [a, b, which]) =>
      which === 1 ? shapeIs(out, a.cols, b.cols) : which === 2 ? shapeIs(out, a.rows, b.rows) : shapeIs(out, a.rows, b.cols),
  },
  {
    family: F,
    name: "matvec(a, x)",
    passThrough: true,
    args: rc.chain(([r, c]) => fc.tuple(matArg(r, c), vecArg(c))),
    call: matvec,
    check: (out, [a]) => lengthIs(out, a.rows),
  },
  {
    family: "random",
    name: "randomMatrix(rows, cols, options, seed)",
    args: fc.tuple(
      intArg(0, 6),
      intArg(0, 6),
      seedArb,
      fc.oneof(
        {
          weight: 8,
          arbitrary: fc.option(
            fc.record({
              distribution: fc.constantFrom<unknown>(undefined, "gaussian", "uniform", "rademacher", "cauchy", 3),
              scale: fc.oneof(fc.constant(undefined), numArg(fc.double({ min: 1e-8, max: 1e4, noNaN: true }))),
            }),
            { nil: undefined },
          ),
        },
        // not an options object: a ValueError naming options (validate.ts assertOptions)
        { weight: 1, arbitrary: fc.constantFrom<unknown>(null, "gaussian", 3, []) },
      ),
    ),
    call: (r, c, seed, options) => randomMatrix(r, c, options, seed),
    check: (out, [r, c]) => shapeIs(out, r, c),
  },
  {
    family: "random",
    name: "initWeight(fanIn, fanOut, { gain }, seed)",
    args: fc.tuple(
      intArg(1, 6),
      intArg(0, 6),
      seedArb,
      fc.oneof(fc.constant(undefined), numArg(fc.double({ min: 0.1, max: 3, noNaN: true }))),
    ),
    call: (fanIn, fanOut, seed, gain) => initWeight(fanIn, fanOut, { gain }, seed),
    check: (out, [r, c]) => shapeIs(out, r, c),
  },
  {
    family: F,
    name: "non-Matrix first argument to every unary op",
    args: fc.tuple(nonMatrixArb, badIntArb),
    call: (a, n) => {
      transpose(a);
      return splitCols(a, n);
    },
  },
];
