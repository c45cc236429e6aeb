// attention/ and position/ entries: single-head attention in every form (materialized, weights,
// scores, streaming, projected, self/cross), masks and kernels, multi-head / GQA / MQA, RoPE.
import fc from "fast-check";
import {
  type Kernel,
  type Mask,
  Matrix,
  Rope,
  additiveMask,
  attention,
  attentionScores,
  attentionWeights,
  crossAttention,
  defaultQueryPositions,
  dotKernel,
  emptyMaskRows,
  evaluateKernel,
  initMultiHeadWeights,
  kernelScale,
  kvHeadFor,
  multiHeadAttention,
  multiHeadShape,
  multiplicativeMask,
  pairwiseKernel,
  project,
  projectedAttention,
  ropeFrequencies,
  runAttention,
  selfAttention,
  softmaxKernel,
  streamingAttention,
  tieKvHeads,
} from "@randattn/core";
import { compileMask } from "@randattn/core/internal";
import { type Entry, lengthIs, shapeIs } from "../harness.js";
import {
  badIntArb,
  dimArb,
  intArg,
  makeMatrix,
  matArg,
  matrixArb,
  mildScaleArb,
  modeArg,
  nonMatrixArb,
  numArg,
  posDimArb,
  seedArb,
} from "../gen.js";

/** Kernels: valid ones (including ones that vanish or misbehave on purpose) and malformed ones. */
export const kernelArb: fc.Arbitrary<unknown> = fc.oneof(
  { weight: 6, arbitrary: fc.constant(undefined) },
  { weight: 3, arbitrary: numArg(fc.double({ min: 1e-3, max: 10, noNaN: true })).map((scale) => ({ kind: "softmax", scale })) },
  { weight: 2, arbitrary: fc.constant(dotKernel((s) => Math.max(s, 0) + 1e-3, { name: "relu+" })) },
  // ReLU vanishes on every key of a row whose logits are all ≤ 0: an empty row by the kernel.
  { weight: 2, arbitrary: fc.constant(dotKernel((s) => Math.max(s, 0), { name: "relu" })) },
  { weight: 1, arbitrary: fc.constant(dotKernel((s) => s * s, { scale: 0.5, name: "square" })) },
  // misbehaving f: negative, NaN, overflowing — must be a NumericalError, never a NaN in Y
  {
    weight: 1,
    arbitrary: fc.constantFrom(
      dotKernel((s) => s, { name: "identity (negative)" }),
      dotKernel(() => Number.NaN, { name: "nan" }),
      dotKernel((s) => Math.exp(1e3 * s), { name: "exp1000" }),
    ),
  },
  {
    weight: 2,
    arbitrary: fc.constant(
      pairwiseKernel((q, k) => {
        let d = 0;
        for (let i = 0; i < q.length; i++) d += (q[i] - k[i]) ** 2;
        return Math.exp(-d / 2);
      }, "rbf"),
    ),
  },
  {
    weight: 1,
    arbitrary: fc.constantFrom<unknown>({ kind: "bogus" }, { kind: "dot" }, { kind: "pairwise", fn: 3 }, null, "softmax", {
      kind: "softmax",
      scale: -1,
    }),
  },
);

/** Masks for nQ queries and nKV keys: every kind, valid and malformed. */
export function maskArb(nQ: number, nKV: number): fc.Arbitrary<unknown> {
  return fc.oneof(
    { weight: 4, arbitrary: fc.constant(undefined) },
    {
      weight: 3,
      arbitrary: fc
        .oneof(fc.constant(undefined), intArg(-3, 4))
        .map((offset) => (offset === undefined ? { kind: "causal" } : { kind: "causal", offset })),
    },
    { weight: 2, arbitrary: intArg(0, Math.max(0, nKV), 1).map((keyLength) => ({ kind: "padding", keyLength })) },
    {
      weight: 2,
      arbitrary: fc
        .array(fc.array(fc.integer({ min: 0, max: Math.max(0, nKV - 1) }), { maxLength: 3 }), { minLength: nQ, maxLength: nQ })
        .map((sets) => ({ kind: "allowed", sets: nKV === 0 ? sets.map(() => []) : sets })),
    },
    {
      weight: 2,
      arbitrary: fc.nat().map((seed) => ({
        kind: "dense",
        allowed: Matrix.from(nQ, nKV, (i, j) => ((seed >> ((i * 7 + j) % 30)) & 1) | (j === 0 && seed % 3 === 0 ? 1 : 0)),
      })),
    },
    {
      weight: 2,
      arbitrary: fc.constantFrom<unknown>(
        { kind: "bogus" },
        { kind: "causal", offset: 0.5 },
        { kind: "padding", keyLength: nKV + 1 },
        { kind: "padding" },
        { kind: "allowed", sets: [[nKV]] },
        { kind: "allowed", sets: "all" },
        { kind: "dense", allowed: Matrix.from(nQ, nKV, () => 0.5) },
        { kind: "dense", allowed: new Matrix(nQ + 1, nKV) },
        null,
        "causal",
      ),
    },
  );
}

/** Attention options for nQ × nKV (kernel, mask, form, empty-row policy, streaming block sizes). */
export function attentionOptionsArb(nQ: number, nKV: number): fc.Arbitrary<unknown> {
  return fc.oneof(
    { weight: 1, arbitrary: fc.constant(undefined) },
    { weight: 1, arbitrary: fc.constantFrom<unknown>(null, "causal", 5) },
    {
      weight: 8,
      arbitrary: fc.record(
        {
          kernel: kernelArb,
          mask: maskArb(nQ, nKV),
          maskForm: modeArg(["additive", "multiplicative"]),
          onEmptyRow: modeArg(["error", "zero"]),
          blockSize: fc.oneof(fc.constant(undefined), intArg(1, 4)),
          queryBlockSize: fc.oneof(fc.constant(undefined), intArg(1, 4)),
          algorithm: modeArg(["materialized", "streaming"]),
          precision: modeArg(["float64", "float32"]),
        },
        { requiredKeys: [] },
      ),
    },
  );
}

const qkv = fc.tuple(dimArb(5), dimArb(5), dimArb(4), dimArb(4));

function single(
  name: string,
  f: (q: Matrix, k: Matrix, v: Matrix, o: unknown) => unknown,
  shape: (nQ: number, nKV: number, dV: number) => [number, number],
): Entry {
  return {
    family: "attention",
    name,
    args: qkv.chain(([nQ, nKV, d, dV]) => fc.tuple(matArg(nQ, d), matArg(nKV, d), matArg(nKV, dV), attentionOptionsArb(nQ, nKV))),
    call: f,
    check: (out, [q, k, v]) => {
      const [r, c] = shape(q.rows, k.rows, v instanceof Matrix ? v.cols : 0);
      return shapeIs(out instanceof Matrix ? out : out.scores, r, c);
    },
  };
}

/** Multi-head weights for (dIn, H, G, dH, dV, dOut), sometimes broken (a head missing, a wrong shape, NaN). */
function multiHeadWeightsArb(dIn: number, h: number, g: number, dh: number, dv: number, dOut: number): fc.Arbitrary<unknown> {
  return fc.tuple(fc.nat(), fc.integer({ min: 0, max: 14 })).map(([seed, broken]) => {
    const w = {
      queries: Array.from({ length: h }, (_, i) => makeMatrix(dIn, dh, seed + i)),
      keys: Array.from({ length: g }, (_, i) => makeMatrix(dIn, dh, seed + 100 + i)),
      values: Array.from({ length: g }, (_, i) => makeMatrix(dIn, dv, seed + 200 + i)),
      output: makeMatrix(h * dv, dOut, seed + 300),
    } as { queries: unknown[]; keys: unknown[]; values: unknown[]; output: unknown };
    switch (broken) {
      case 0:
        w.queries.pop();
        break;
      case 1:
        w.keys.push(makeMatrix(dIn, dh, seed));
        break;
      case 2:
        w.values[0] = makeMatrix(dIn + 1, dv, seed);
        break;
      case 3:
        w.output = makeMatrix(h * dv + 1, dOut, seed);
        break;
      case 4:
        if (w.queries.length > 0) (w.queries[0] as Matrix).data[0] = Number.NaN;
        break;
      case 5:
        return [w.queries, w.keys];
      case 6:
        w.keys = [];
        w.values = [];
        break;
      case 7:
        w.values[0] = null;
        break;
      default:
        break;
    }
    return w;
  });
}

const rope = (dim: number) => (dim % 2 === 0 && dim > 0 ? new Rope(dim) : undefined);

export const attentionEntries: Entry[] = [
  single(
    "attention(queries, keys, values, options)",
    (q, k, v, o) => attention(q, k, v, o as never),
    (nQ, _nKV, dV) => [nQ, dV],
  ),
  single(
    "streamingAttention(queries, keys, values, options)",
    (q, k, v, o) => streamingAttention(q, k, v, o as never),
    (nQ, _nKV, dV) => [nQ, dV],
  ),
  single(
    "runAttention(queries, keys, values, { algorithm })",
    (q, k, v, o) => runAttention(q, k, v, o as never),
    (nQ, _nKV, dV) => [nQ, dV],
  ),
  single(
    "attentionWeights(queries, keys, options)",
    (q, k, _v, o) => attentionWeights(q, k, o as never),
    (nQ, nKV) => [nQ, nKV],
  ),
  single(
    "attentionScores(queries, keys, options)",
    (q, k, _v, o) => attentionScores(q, k, o as never),
    (nQ, nKV) => [nQ, nKV],
  ),
  {
    family: "attention",
    name: "project(x, w)",
    args: fc.tuple(dimArb(4), dimArb(4), dimArb(4)).chain(([n, d, e]) => fc.tuple(matArg(n, d), matArg(d, e))),
    call: project,
    check: (out, [x, w]) => shapeIs(out, x.rows, w.cols),
  },
  {
    family: "attention",
    name: "selfAttention / crossAttention / projectedAttention",
    args: fc
      .tuple(posDimArb(4), posDimArb(4), posDimArb(4), dimArb(3), dimArb(3), fc.constantFrom(0, 1, 2))
      .chain(([nQ, nKV, dIn, d, dV, which]) =>
        fc.tuple(
          matArg(nQ, dIn),
          matArg(which === 0 ? nQ : nKV, dIn),
          fc.oneof(
            { weight: 8, arbitrary: fc.record({ query: matArg(dIn, d), key: matArg(dIn, d), value: matArg(dIn, dV) }) },
            { weight: 1, arbitrary: fc.constantFrom<unknown>(null, {}, { query: null }, "w") },
          ),
          attentionOptionsArb(nQ, which === 0 ? nQ : nKV),
          fc.constant(which),
        ),
      ),
    call: (xQ, xKV, w, o, which) =>
      which === 0 ? selfAttention(xQ, w, o) : which === 1 ? crossAttention(xQ, xKV, w, o) : projectedAttention(xQ, xKV, xKV, w, o),
    check: (out, [xQ, , w]) => shapeIs(out, xQ.rows, w.value.cols),
  },
  {
    family: "attention",
    name: "multiplicativeMask / additiveMask / emptyMaskRows / compileMask(mask, nQ, nKV)",
    // additive masks hold ∅_κ = −∞ on masked entries by definition
    allowInfiniteOutput: true,
    args: fc
      .tuple(dimArb(5), dimArb(5))
      .chain(([nQ, nKV]) =>
        fc.tuple(
          maskArb(nQ, nKV),
          fc.oneof({ weight: 8, arbitrary: fc.constant(nQ) }, { weight: 1, arbitrary: badIntArb }),
          fc.constant(nKV),
          kernelArb,
          fc.constantFrom(0, 1, 2, 3),
        ),
      ),
    call: (m, nQ, nKV, kernel, which) => {
      if (which === 0) return multiplicativeMask(m as Mask, nQ, nKV);
      if (which === 1) return additiveMask(m as Mask, nQ, nKV, kernel as Kernel);
      if (which === 2) return emptyMaskRows(m as Mask, nQ, nKV);
      compileMask(m, nQ, nKV);
      return undefined;
    },
    check: (out, [, nQ, nKV, , which]) => (which <= 1 ? shapeIs(out, nQ, nKV) : undefined),
  },
  {
    family: "attention",
    name: "evaluateKernel(kernel, q, k) / kernelScale(kernel, dQK)",
    args: posDimArb(4).chain((d) =>
      fc.tuple(
        kernelArb,
        fc.oneof(
          { weight: 6, arbitrary: matrixArb(1, d, { scale: mildScaleArb, poison: 0.05 }).map((m) => m.data) },
          { weight: 1, arbitrary: fc.constantFrom<unknown>(null, new Float64Array(d + 1), [1]) },
        ),
        fc.oneof(
          { weight: 6, arbitrary: matrixArb(1, d, { scale: mildScaleArb, poison: 0.05 }).map((m) => m.data) },
          { weight: 1, arbitrary: fc.constantFrom<unknown>(undefined, new Float64Array(0)) },
        ),
        fc.boolean(),
      ),
    ),
    call: (kernel, q, k, scaleOnly) => (scaleOnly ? kernelScale(kernel, q?.length ?? 0) : evaluateKernel(kernel, q, k)),
    check: (out) => (typeof out === "number" && out >= 0 ? undefined : `expected a number ≥ 0, got ${out}`),
  },
  {
    family: "attention",
    name: "softmaxKernel(scale) / dotKernel(f, options) / pairwiseKernel(fn, name)",
    args: fc.tuple(
      numArg(fc.double({ min: 1e-3, max: 10, noNaN: true })),
      fc.constantFrom<unknown>((s: number) => Math.exp(s), null, "exp", 3),
      fc.constantFrom(0, 1, 2),
    ),
    call: (scale, f, which) => (which === 0 ? softmaxKernel(scale) : which === 1 ? dotKernel(f, { scale }) : pairwiseKernel(f)),
  },
  {
    family: "multihead",
    name: "multiHeadAttention(xQ, xKV, weights, options)",
    args: fc
      .tuple(
        posDimArb(4),
        posDimArb(4),
        posDimArb(4),
        fc.constantFrom([1, 1], [2, 2], [2, 1], [4, 2], [3, 1], [3, 2], [4, 3]),
        posDimArb(4),
        posDimArb(3),
        posDimArb(4),
      )
      .chain(([nQ, nKV, dIn, [h, g], dh, dv, dOut]) =>
        fc.tuple(
          matArg(nQ, dIn),
          matArg(nKV, dIn),
          multiHeadWeightsArb(dIn, h, g, dh, dv, dOut),
          fc
            .tuple(
              attentionOptionsArb(nQ, nKV),
              fc.oneof(fc.constant(undefined), fc.constant(rope(dh)), fc.constantFrom<unknown>({ apply: () => null }, {})),
              fc.oneof(
                fc.constant(undefined),
                fc.constantFrom<unknown>(new Float64Array(nQ).fill(Number.NaN), [0.5], defaultQueryPositions(nQ, nKV)),
              ),
            )
            .map(([o, r, qp]) => (o && typeof o === "object" ? { ...o, rope: r, queryPositions: qp } : o)),
        ),
      ),
    call: (xQ, xKV, w, o) => multiHeadAttention(xQ, xKV, w, o),
    check: (out, [xQ, , w]) => shapeIs(out, xQ.rows, w.output.cols),
  },
  {
    family: "multihead",
    name: "initMultiHeadWeights(init, key) / multiHeadShape / tieKvHeads",
    args: fc.tuple(
      fc.oneof(
        {
          weight: 8,
          arbitrary: fc.record({
            dIn: intArg(1, 5),
            numHeads: intArg(1, 4),
            numKvHeads: fc.oneof(fc.constant(undefined), intArg(1, 4)),
            headDim: intArg(1, 4),
            valueDim: fc.oneof(fc.constant(undefined), intArg(1, 4)),
            dOut: fc.oneof(fc.constant(undefined), intArg(1, 4)),
          }),
        },
        { weight: 1, arbitrary: fc.constantFrom<unknown>(null, undefined, "mha", {}) },
      ),
      seedArb,
    ),
    call: (init, key) => tieKvHeads(initMultiHeadWeights(init, key)),
    check: (out, [init]) => {
      const s = multiHeadShape(out);
      return s.numHeads === init.numHeads && s.numKvHeads === init.numHeads && s.dIn === init.dIn
        ? undefined
        : `shape ${JSON.stringify(s)}`;
    },
  },
  {
    family: "multihead",
    name: "kvHeadFor(head, numHeads, numKvHeads)",
    args: fc.tuple(intArg(0, 8), intArg(1, 8), intArg(1, 8)),
    call: kvHeadFor,
    check: (out, [, , g]) => (Number.isInteger(out) && out >= 0 && out < g ? undefined : `got ${out}`),
  },
  {
    family: "multihead",
    name: "defaultQueryPositions(nQ, nKV)",
    args: fc.tuple(intArg(0, 6), intArg(0, 6)),
    call: defaultQueryPositions,
    check: (out, [nQ]) => lengthIs(out, nQ),
  },
  {
    family: "position",
    name: "new Rope(dim, options).apply(x, positions)",
    args: fc.tuple(intArg(1, 8), dimArb(4)).chain(([dim, n]) =>
      fc.tuple(
        fc.constant(dim),
        fc.option(
          fc.record(
            {
              base: fc.oneof(fc.constant(undefined), numArg(fc.double({ min: 2, max: 1e6, noNaN: true }))),
              pairing: modeArg(["interleaved", "half"]),
            },
            { requiredKeys: [] },
          ),
          { nil: undefined },
        ),
        matArg(n, Number.isInteger(dim) && (dim as number) > 0 && (dim as number) <= 8 ? (dim as number) : 2),
        fc.oneof(
          { weight: 6, arbitrary: fc.array(fc.integer({ min: -5, max: 1e6 }), { minLength: n, maxLength: n }) },
          {
            weight: 1,
            arbitrary: fc.constantFrom<unknown>(
              null,
              [Number.NaN],
              [0.5],
              "0",
              Array.from({ length: n }, () => 1e300),
            ),
          },
        ),
      ),
    ),
    call: (dim, opts, x, pos) => new Rope(dim, opts).apply(x, pos),
    check: (out, [, , x]) => shapeIs(out, x.rows, x.cols),
  },
  {
    family: "position",
    name: "ropeFrequencies(dim, base)",
    args: fc.tuple(intArg(1, 8), fc.oneof(fc.constant(undefined), numArg(fc.double({ min: 2, max: 1e6, noNaN: true })))),
    call: ropeFrequencies,
    check: (out, [dim]) => lengthIs(out, dim / 2),
  },
  {
    family: "attention",
    name: "non-Matrix queries/keys/values",
    args: fc.tuple(nonMatrixArb, nonMatrixArb),
    call: (a, b) => attention(a, b, b),
  },
];
