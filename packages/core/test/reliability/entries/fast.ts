// fast/ and io/ entries: the float32 / WebAssembly attention paths and products, and .npy/.npz
// encoding and conversion (parsing of hostile files is covered by test/io/npy-fuzz.test.ts).
import fc from "fast-check";
import {
  Matrix,
  attention32,
  encodeNpy,
  encodeNpz,
  fastAttention,
  float32AttentionErrorBound,
  matmul32,
  matmulTransA32,
  matmulTransB32,
  npyToMatrix,
  npyToStack,
  npyToVector,
  parseNpy,
  streamingAttention32,
} from "@randattn/core";
import { type Entry, shapeIs } from "../harness.js";

/** Largest |entry| of the Matrix arguments (0 when none). */
function maxInput(args: readonly unknown[]): number {
  let m = 0;
  for (const a of args) if (a instanceof Matrix) for (const x of a.data) if (Math.abs(x) > m) m = Math.abs(x);
  return m;
}

/** Inputs whose products leave float32's range (≈ 3.4e38): the float32 paths return NaN/±Inf there. */
const FLOAT32_RANGE_ISSUE =
  "float32 paths (attention32, streamingAttention32, fastAttention precision float32, matmul*32) return NaN/±Inf, silently, when inputs or logits exceed float32's range (|x| ≳ 1e19 here) — src/fast/, owned by the performance helper";
const isFloat32 = (o: unknown, which: number) =>
  which !== 0 || (o !== null && typeof o === "object" && (o as { precision?: unknown }).precision === "float32");
import { dimArb, intArg, matArg, modeArg, numArg } from "../gen.js";

const prefixMaskArb = (nKV: number): fc.Arbitrary<unknown> =>
  fc.oneof(
    { weight: 4, arbitrary: fc.constant(undefined) },
    {
      weight: 2,
      arbitrary: fc
        .oneof(fc.constant(undefined), intArg(-3, 4))
        .map((offset) => (offset === undefined ? { kind: "causal" } : { kind: "causal", offset })),
    },
    { weight: 2, arbitrary: intArg(0, nKV).map((keyLength) => ({ kind: "padding", keyLength })) },
    { weight: 1, arbitrary: fc.constantFrom<unknown>({ kind: "allowed", sets: [] }, { kind: "bogus" }, null) },
  );

const fastOptionsArb = (nKV: number): fc.Arbitrary<unknown> =>
  fc.oneof(
    { weight: 1, arbitrary: fc.constantFrom<unknown>(undefined, null) },
    {
      weight: 8,
      arbitrary: fc.record(
        {
          scale: fc.oneof(fc.constant(undefined), numArg(fc.double({ min: 1e-3, max: 10, noNaN: true }))),
          mask: prefixMaskArb(nKV),
          onEmptyRow: modeArg(["error", "zero"]),
          blockSize: fc.oneof(fc.constant(undefined), intArg(1, 4)),
          queryBlockSize: fc.oneof(fc.constant(undefined), intArg(1, 4)),
          precision: modeArg(["float64", "float32"]),
          mode: modeArg(["materialized", "streaming"]),
        },
        { requiredKeys: [] },
      ),
    },
  );

export const fastEntries: Entry[] = [
  {
    family: "fast",
    name: "fastAttention / attention32 / streamingAttention32 / float32AttentionErrorBound(queries, keys, values, options)",
    args: fc
      .tuple(dimArb(5), dimArb(5), dimArb(4), dimArb(4), fc.constantFrom(0, 1, 2, 3))
      .chain(([nQ, nKV, d, dV, which]) =>
        fc.tuple(
          matArg(nQ, d, { bad: 0.25, poison: 0.04 }),
          matArg(nKV, d, { bad: 0.25, poison: 0.04 }),
          matArg(nKV, dV, { bad: 0.25, poison: 0.04 }),
          fastOptionsArb(nKV),
          fc.constant(which),
        ),
      ),
    known: {
      when: (args) => {
        const scale = (args[3] as { scale?: unknown } | null)?.scale;
        return isFloat32(args[3], args[4] as number) && (maxInput(args.slice(0, 3)) > 1e15 || (typeof scale === "number" && scale > 1e15));
      },
      issue: FLOAT32_RANGE_ISSUE,
    },
    call: (q, k, v, o, which) =>
      which === 0
        ? fastAttention(q, k, v, o)
        : which === 1
          ? attention32(q, k, v, o)
          : which === 2
            ? streamingAttention32(q, k, v, o)
            : float32AttentionErrorBound(q, k, v, o),
    check: (out, [q, , v, , which]) =>
      which === 3 ? (typeof out === "number" && out >= 0 ? undefined : `bound ${out}`) : shapeIs(out, q.rows, v.cols),
  },
  {
    family: "fast",
    name: "matmul32 / matmulTransA32 / matmulTransB32(a, b)",
    passThrough: true,
    args: fc
      .tuple(dimArb(5), dimArb(5), dimArb(5), fc.constantFrom(0, 1, 2))
      .chain(([m, k, n, which]) =>
        fc.tuple(which === 1 ? matArg(k, m) : matArg(m, k), which === 2 ? matArg(n, k) : matArg(k, n), fc.constant(which)),
      ),
    known: {
      when: (args) => maxInput(args) > 1e15 || !(args[0] instanceof Matrix) || !(args[1] instanceof Matrix),
      issue: `${FLOAT32_RANGE_ISSUE}; matmul32 / matmulTransA32 / matmulTransB32 read a.cols / b.rows before checking a, b are Matrices (TypeError on null, a string…)`,
    },
    call: (a, b, which) => (which === 0 ? matmul32(a, b) : which === 1 ? matmulTransA32(a, b) : matmulTransB32(a, b)),
    check: (out, [a, b, which]) =>
      which === 1 ? shapeIs(out, a.cols, b.cols) : which === 2 ? shapeIs(out, a.rows, b.rows) : shapeIs(out, a.rows, b.cols),
  },
  {
    family: "io",
    name: "encodeNpy(value) → parseNpy → npyToMatrix / npyToStack / npyToVector; encodeNpz",
    passThrough: true,
    args: fc.tuple(
      fc.oneof(
        { weight: 4, arbitrary: fc.tuple(dimArb(3), dimArb(3)).chain(([r, c]) => matArg(r, c)) },
        { weight: 2, arbitrary: fc.array(fc.double(), { maxLength: 4 }) },
        {
          weight: 1,
          arbitrary: fc.constantFrom<unknown>(
            null,
            "npy",
            { shape: [2, 2], data: [1, 2, 3] },
            { shape: [-1], data: [] },
            { shape: [1.5], data: [1] },
            [new Matrix(1, 2), new Matrix(2, 1)],
            [],
            { shape: [2], data: null },
          ),
        },
      ),
      fc.constantFrom(0, 1, 2, 3),
    ),
    call: (value, which) => {
      if (which === 3) return encodeNpz({ a: value }).length;
      const arr = parseNpy(encodeNpy(value));
      return which === 0 ? npyToMatrix(arr) : which === 1 ? npyToStack(arr) : npyToVector(arr);
    },
  },
];
