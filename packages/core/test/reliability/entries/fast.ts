// fast/ and io/ entries: the float32 / WebAssembly attention paths and products, and .npy/.npz
// encoding and conversion (parsing of hostile files is covered by test/io/npy-fuzz.test.ts).
import fc from "fast-check";
import {
  Matrix,
  attention32,
  encodeNpy,
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
import { encodeNpz } from "@randattn/core/node";
import { type Entry, shapeIs } from "../harness.js";

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
          // huge and tiny scales too: beyond float32's range the float32 paths fall back to float64
          scale: fc.oneof(
            { weight: 4, arbitrary: fc.constant(undefined) },
            { weight: 4, arbitrary: numArg(fc.double({ min: 1e-3, max: 10, noNaN: true })) },
            { weight: 1, arbitrary: fc.constantFrom(1e20, 1e35, -1e35, 1e-300) },
          ),
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
