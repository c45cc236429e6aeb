// The @randattn/sketch table for the shared reliability harness (core's test/reliability/harness.ts):
// samplers, sketching operators and row samplers, row sampling of V / sampled and top-k attention,
// random features, and randomized low-rank approximation (+ the MLA tools).
import fc from "fast-check";
import { Matrix, initMlaWeights, initMultiHeadWeights, mergeMla } from "@randattn/core";
import {
  AliasTable,
  blockedQb,
  compressLatent,
  compressedMlaAttention,
  countSketch,
  createSketch,
  dkmExpectedSquaredError,
  drawProjection,
  drawWeightedSample,
  exactSvd,
  featureDimension,
  foldLatentBasis,
  fwhtInPlace,
  fwhtRowsInPlace,
  gaussianArray,
  gaussianSketch,
  householderQr,
  inclusionProbabilities,
  leverageScoreRowSampler,
  leverageScores,
  luLowerFactor,
  multiHeadToMla,
  normalizeWeights,
  optimalMatmulProbabilities,
  orthonormalize,
  qb,
  rademacherArray,
  rademacherSketch,
  hyperAttention,
  exponentialKde,
  kdeformerAttention,
  randomFeatureAttention,
  randomFeatures,
  scatterbrainAttention,
  randomPermutation,
  randomizedSvd,
  rangeFinder,
  reduceLatentRank,
  sampleWithReplacement,
  sampleWithoutReplacement,
  sampledAttention,
  sampledMatmul,
  sampledValueProduct,
  sparseSignSketch,
  squaredNormRowSampler,
  srhtSketch,
  supportSize,
  systematicSample,
  topKAttention,
  topKValueProduct,
  uniformArray,
  uniformIntegers,
  uniformRowSampler,
  uniformSubset,
  validateProbabilities,
  valueSamplingProbabilities,
  weightedRowSampler,
} from "@randattn/sketch";
import { validateDistribution } from "../../src/operators/distributions.js";
import { type Entry, lengthIs, shapeIs } from "../../../core/test/reliability/harness.js";
import {
  badIntArb,
  dimArb,
  intArg,
  makeMatrix,
  matArg,
  mildScaleArb,
  modeArg,
  numArg,
  posDimArb,
  probabilityArb,
  seedArb,
} from "../../../core/test/reliability/gen.js";
import { kernelArb } from "../../../core/test/reliability/entries/attention.js";

const SKETCH_KINDS = ["gaussian", "rademacher", "srht", "countsketch", "sparse-sign"] as const;

/** A low-rank-ish or rank-deficient m × n test matrix: random, rank-1, zero, duplicated columns. */
function structuredMatrixArb(m: number, n: number): fc.Arbitrary<unknown> {
  return fc.oneof(
    { weight: 6, arbitrary: matArg(m, n) },
    {
      weight: 3,
      arbitrary: fc.tuple(fc.nat(), fc.constantFrom(0, 1, 2), fc.constantFrom(1, 1e-300, 1e150)).map(([seed, kind, s]) => {
        if (kind === 0) return new Matrix(m, n); // zero matrix
        const u = makeMatrix(m, 1, seed, s);
        const v = makeMatrix(1, n, seed + 1);
        if (kind === 1) return Matrix.from(m, n, (i, j) => u.data[i] * v.data[j]); // exactly rank 1
        const base = makeMatrix(m, Math.max(1, Math.floor(n / 2)), seed, s);
        return Matrix.from(m, n, (i, j) => base.data[i * base.cols + (j % base.cols)]); // repeated columns
      }),
    },
  );
}

/** Range-finder options (rank, oversampling, power iterations, test matrix, orthonormalization). */
const rangeOptionsArb = (k: number): fc.Arbitrary<unknown> =>
  fc.oneof(
    {
      weight: 8,
      arbitrary: fc.record(
        {
          rank: intArg(1, Math.max(1, k)),
          oversampling: fc.oneof(fc.constant(undefined), intArg(0, 4)),
          powerIterations: fc.oneof(fc.constant(undefined), intArg(0, 3)),
          orthonormalization: modeArg(["qr", "lu", "none"]),
          testMatrix: modeArg(SKETCH_KINDS),
        },
        { requiredKeys: ["rank"] },
      ),
    },
    { weight: 1, arbitrary: fc.constantFrom<unknown>(null, undefined, {}, { rank: 0 }, "rank") },
  );

export const sketchEntries: Entry[] = [
  // ---- random/ ----
  {
    family: "samplers",
    name: "gaussianArray / rademacherArray / uniformArray(length, options, seed)",
    args: fc.tuple(
      intArg(0, 8),
      seedArb,
      fc.constantFrom(0, 1, 2),
      numArg(fc.double({ min: -3, max: 3, noNaN: true })),
      numArg(fc.double({ min: 0, max: 3, noNaN: true })),
    ),
    call: (n, key, which, a, b) =>
      which === 0
        ? gaussianArray(n, { mean: a, std: b }, key)
        : which === 1
          ? rademacherArray(n, { magnitude: b }, key)
          : uniformArray(n, { low: a, high: (a as number) + (b as number) }, key),
    check: (out, [n]) => lengthIs(out, n),
  },
  {
    family: "samplers",
    name: "uniformIntegers(length, upper, key) / uniformSubset(n, count, key) / randomPermutation(n, key)",
    args: fc.tuple(intArg(0, 8), intArg(0, 8), seedArb, fc.constantFrom(0, 1, 2)),
    call: (a, b, key, which) =>
      which === 0 ? uniformIntegers(a, { upper: b }, key) : which === 1 ? uniformSubset(a, { count: b }, key) : randomPermutation(a, key),
    check: (out, [a, b, , which]) => lengthIs(out, which === 1 ? b : a),
  },
  {
    family: "samplers",
    name: "sampleWithReplacement / sampleWithoutReplacement / systematicSample / AliasTable(p, { count }, seed)",
    args: fc
      .tuple(dimArb(6), intArg(0, 6), seedArb, fc.constantFrom(0, 1, 2, 3))
      .chain(([n, count, key, which]) => fc.tuple(probabilityArb(n), fc.constant(count), fc.constant(key), fc.constant(which))),
    call: ({ p }, count, key, which) => {
      if (which === 0) return sampleWithReplacement(p, { count }, key);
      if (which === 1) return sampleWithoutReplacement(p, { count }, key);
      if (which === 2) return systematicSample(p, { count }, key).indices;
      return AliasTable.fromProbabilities(p).sample({ count }, key);
    },
    check: (out, [{ p }, count]) => {
      const bad = lengthIs(out, count);
      if (bad) return bad;
      // never sample an index of probability 0 (underflowed entries included)
      for (const i of out as Int32Array) if (!(p[i] > 0)) return `sampled index ${i} with p = ${p[i]}`;
      return undefined;
    },
  },
  {
    family: "samplers",
    name: "validateProbabilities / normalizeWeights / inclusionProbabilities / supportSize(p)",
    args: fc
      .tuple(dimArb(6), intArg(0, 6), fc.constantFrom(0, 1, 2, 3))
      .chain(([n, count, which]) => fc.tuple(probabilityArb(n), fc.constant(count), fc.constant(which))),
    call: ({ p }, count, which) =>
      which === 0
        ? validateProbabilities(p)
        : which === 1
          ? normalizeWeights(p)
          : which === 2
            ? inclusionProbabilities(p, count)
            : supportSize(p),
    check: (out, [{ p }, , which]) => (which === 3 ? (Number.isInteger(out) ? undefined : `support ${out}`) : lengthIs(out, p.length)),
  },
  // ---- operators/ ----
  {
    family: "operators",
    name: "createSketch(<kind>Sketch(rows, cols, options), seed).sketchLeft / sketchRight / toMatrix / cost",
    args: fc
      .tuple(intArg(0, 6), intArg(0, 9), fc.constantFrom(...SKETCH_KINDS), fc.constantFrom(0, 1, 2, 3), dimArb(4))
      .chain(([rows, cols, kind, which, other]) => {
        const r = Number.isInteger(rows) && (rows as number) >= 0 && (rows as number) < 10 ? (rows as number) : 2;
        const c = Number.isInteger(cols) && (cols as number) >= 0 && (cols as number) < 10 ? (cols as number) : 2;
        return fc.tuple(
          fc.constant(rows),
          fc.constant(cols),
          fc.constant(kind),
          fc.record(
            {
              scale: fc.oneof(fc.constant(undefined), numArg(fc.double({ min: 1e-3, max: 10, noNaN: true }))),
              nnzPerColumn: fc.oneof(fc.constant(undefined), intArg(1, 4)),
            },
            { requiredKeys: [] },
          ),
          seedArb,
          fc.constant(which),
          which === 0
            ? matArg(c, other)
            : which === 1
              ? matArg(other, r)
              : fc.oneof({ weight: 5, arbitrary: fc.constant(other) }, { weight: 1, arbitrary: badIntArb }),
        );
      }),
    call: (rows, cols, kind, opts, seed, which, arg) => {
      const make = {
        gaussian: gaussianSketch,
        rademacher: rademacherSketch,
        srht: srhtSketch,
        countsketch: countSketch,
        "sparse-sign": sparseSignSketch,
      }[kind as (typeof SKETCH_KINDS)[number]];
      const s = createSketch(validateDistribution(make(rows, cols, opts)), seed);
      if (which === 0) return s.sketchLeft(arg);
      if (which === 1) return s.sketchRight(arg);
      if (which === 2) return s.toMatrix();
      return s.cost(arg, arg % 2 === 0 ? "left" : "right");
    },
    check: (out, [rows, cols, , , , which, arg]) => {
      if (which === 0) return shapeIs(out, rows, arg.cols);
      if (which === 1) return shapeIs(out, arg.rows, cols);
      if (which === 2) return shapeIs(out, rows, cols);
      return out.flops >= 0 && out.floatsStored >= 0 ? undefined : `cost ${JSON.stringify(out)}`;
    },
  },
  {
    family: "operators",
    name: "uniformRowSampler / squaredNormRowSampler / leverageScoreRowSampler / weightedRowSampler(samples, …) → sketchLeft",
    args: fc
      .tuple(intArg(0, 5), posDimArb(6), posDimArb(3), fc.constantFrom(0, 1, 2, 3), modeArg(["left", "right"]))
      .chain(([s, n, d, which, side]) =>
        fc.tuple(
          fc.constant(s),
          fc.constant(n),
          structuredMatrixArb(n, d),
          probabilityArb(n),
          fc.constant(which),
          fc.constant(side),
          fc.boolean(),
        ),
      ),
    call: (s, n, a, { p }, which, side, normalize) => {
      const opts = { side };
      const dist =
        which === 0
          ? uniformRowSampler(s, n, opts)
          : which === 1
            ? squaredNormRowSampler(s, a, opts)
            : which === 2
              ? leverageScoreRowSampler(s, a, opts)
              : weightedRowSampler(s, p, { ...opts, normalize });
      const op = createSketch(dist, [1, "rows"]);
      return dist.side === "right" ? op.sketchRight(a instanceof Matrix && a.rows === n ? new Matrix(1, n) : a) : op.sketchLeft(a);
    },
  },
  {
    family: "operators",
    name: "leverageScores(a, options)",
    args: fc
      .tuple(dimArb(5), dimArb(4))
      .chain(([m, n]) =>
        fc.tuple(
          structuredMatrixArb(m, n),
          fc.record(
            { rankTolerance: fc.oneof(fc.constant(undefined), numArg(fc.constantFrom(1e-12, 1e-3))), side: modeArg(["left", "right"]) },
            { requiredKeys: [] },
          ),
        ),
      ),
    call: leverageScores,
  },
  {
    family: "operators",
    name: "fwhtInPlace(x, n, offset) / fwhtRowsInPlace(x, n, p)",
    args: fc.tuple(fc.constantFrom(0, 1, 2, 4, 8), intArg(0, 3), fc.boolean()).chain(([n, rows, byRows]) =>
      fc.tuple(
        fc.oneof(
          {
            weight: 6,
            arbitrary: fc.constant(
              makeMatrix(1, n * (Number.isInteger(rows) && (rows as number) >= 0 && (rows as number) < 4 ? (rows as number) || 1 : 1), 7)
                .data,
            ),
          },
          { weight: 1, arbitrary: fc.constantFrom<unknown>(null, "x", new Float64Array(3)) },
        ),
        fc.oneof(fc.constant(n), intArg(0, 8)),
        fc.constant(rows),
        fc.constant(byRows),
      ),
    ),
    // a raw in-place transform (like core's linalg primitives): NaN/±Inf entries pass through
    passThrough: true,
    call: (x, n, rows, byRows) => (byRows ? fwhtRowsInPlace(x, rows, n) : fwhtInPlace(x, n)),
  },
  // ---- sampling/ ----
  {
    family: "sampling",
    name: "sampledMatmul(a, b, { samples, probabilities, design }, seed) / dkmExpectedSquaredError / optimalMatmulProbabilities",
    args: fc
      .tuple(dimArb(4), dimArb(6), dimArb(4), intArg(0, 8))
      .chain(([m, n, p, s]) =>
        fc.tuple(
          matArg(m, n),
          matArg(n, p),
          fc.constant(s),
          fc.oneof(
            { weight: 2, arbitrary: modeArg(["uniform", "optimal"], 1, false) },
            { weight: 3, arbitrary: probabilityArb(n).map((x) => x.p) },
          ),
          seedArb,
          fc.record({ design: modeArg(["with-replacement", "horvitz-thompson", "des-raj"]) }, { requiredKeys: [] }),
          fc.constantFrom(0, 1, 2),
        ),
      ),
    call: (a, b, s, probs, seed, opts, which) => {
      if (which === 0) return sampledMatmul(a, b, { ...opts, samples: s, probabilities: probs }, seed).output;
      if (which === 1) return dkmExpectedSquaredError(a, b, s, typeof probs === "string" ? optimalMatmulProbabilities(a, b) : probs);
      return optimalMatmulProbabilities(a, b);
    },
    check: (out, [a, b, , , , , which]) =>
      which === 0 ? shapeIs(out, a.rows, b.cols) : which === 1 ? (out >= 0 ? undefined : `E = ${out}`) : lengthIs(out, a.cols),
  },
  {
    family: "sampling",
    name: "sampledValueProduct(weights, values, { samples, … }, seed) / valueSamplingProbabilities / topKValueProduct",
    args: fc.tuple(dimArb(4), dimArb(6), dimArb(3), intArg(0, 7)).chain(([nQ, nKV, dV, s]) =>
      fc.tuple(
        // attention-like non-negative weights (|·| of a random matrix), sometimes raw (negative entries)
        fc
          .tuple(matArg(nQ, nKV, { scale: mildScaleArb }), fc.boolean())
          .map(([w, raw]) => (w instanceof Matrix && !raw ? new Matrix(w.rows, w.cols, w.data.map(Math.abs)) : w)),
        matArg(nKV, dV),
        fc.constant(s),
        seedArb,
        fc.record(
          {
            scheme: modeArg(["uniform", "value-norm", "optimal", "attention"]),
            design: modeArg(["with-replacement", "horvitz-thompson", "des-raj"]),
            normalize: modeArg(["none", "exact", "ratio"]),
            renormalize: fc.constantFrom<unknown>(undefined, true, false),
          },
          { requiredKeys: [] },
        ),
        fc.constantFrom(0, 1, 2),
      ),
    ),
    call: (w, v, s, seed, o, which) => {
      if (which === 0) return sampledValueProduct(w, v, { ...o, samples: s }, seed).output;
      if (which === 1) return valueSamplingProbabilities(o.scheme === "attention" || o.scheme === undefined ? "uniform" : o.scheme, v, w);
      return topKValueProduct(w, v, s, o).output;
    },
    check: (out, [w, v, , , , which]) => (which === 1 ? lengthIs(out, v.rows) : shapeIs(out, w.rows, v.cols)),
  },
  {
    family: "sampling",
    name: "sampledAttention(queries, keys, values, { samples, … }, seed) / topKAttention(queries, keys, values, k, …)",
    args: fc.tuple(dimArb(4), dimArb(6), dimArb(3), dimArb(3), intArg(0, 7), fc.boolean()).chain(([nQ, nKV, d, dV, s, topk]) =>
      fc.tuple(
        matArg(nQ, d),
        matArg(nKV, d),
        matArg(nKV, dV),
        fc.constant(s),
        seedArb,
        fc.record(
          {
            scheme: modeArg(["uniform", "value-norm", "optimal", "attention"]),
            design: modeArg(["with-replacement", "horvitz-thompson", "des-raj"]),
            normalizer: modeArg(["estimated", "exact"]),
            kernel: kernelArb,
            blockSize: fc.oneof(fc.constant(undefined), intArg(1, 3)),
            renormalize: fc.constantFrom<unknown>(undefined, true, false),
          },
          { requiredKeys: [] },
        ),
        fc.constant(topk),
      ),
    ),
    call: (q, k, v, s, seed, o, topk) =>
      topk ? topKAttention(q, k, v, s, o).output : sampledAttention(q, k, v, { ...o, samples: s }, seed).output,
    check: (out, [q, , v]) => shapeIs(out, q.rows, v.cols),
  },
  {
    family: "sampling",
    name: "drawWeightedSample(p, { samples, design }, seed)",
    args: fc
      .tuple(dimArb(6), intArg(0, 6), seedArb, modeArg(["with-replacement", "horvitz-thompson", "des-raj"], 1, false))
      .chain(([n, s, seed, design]) =>
        fc.tuple(
          probabilityArb(n).map(({ p }) => (p instanceof Float64Array ? p : Array.isArray(p) ? Float64Array.from(p) : p)),
          fc.constant(s),
          fc.constant(seed),
          fc.constant(design),
        ),
      ),
    call: (p, s, seed, design) => drawWeightedSample(p, { samples: s, design }, seed),
    check: (out, [p, s]) => {
      const bad = lengthIs(out.indices, s, "indices");
      if (bad) return bad;
      for (const i of out.indices) if (!(p[i] > 0)) return `sampled index ${i} with p = ${p[i]}`;
      return undefined;
    },
  },
  // ---- features/ ----
  {
    family: "features",
    name: "randomFeatureAttention(queries, keys, values, options, seed)",
    args: fc.tuple(dimArb(4), dimArb(5), dimArb(4), dimArb(3)).chain(([nQ, nKV, d, dV]) =>
      fc.tuple(
        matArg(nQ, d),
        matArg(nKV, d),
        matArg(nKV, dV),
        fc.oneof(
          {
            weight: 8,
            arbitrary: fc.record(
              {
                numFrequencies: intArg(1, 8),
                features: modeArg(["trig", "positive", "hyperbolic", "gerf", "oprf", "derf", "aderf", "saderf", "sderf", "complex-gerf"]),
                gerfA: fc.constantFrom<unknown>(undefined, undefined, -0.3, 0.1, 0.25, Number.NaN),
                complexGerf: fc.constantFrom<unknown>(undefined, undefined, { s: -1 }, { s: 1, a: [0.3, 0] }, { a: [0, 0] }, null),
                projection: modeArg(["iid", "orthogonal"]),
                kernel: fc.oneof(
                  { weight: 4, arbitrary: fc.constant(undefined) },
                  {
                    weight: 2,
                    arbitrary: numArg(fc.double({ min: 0.1, max: 3, noNaN: true })).map((bandwidth) => ({ kind: "gaussian", bandwidth })),
                  },
                  {
                    weight: 1,
                    arbitrary: fc.constantFrom<unknown>(
                      { kind: "laplacian", bandwidth: 1 },
                      { kind: "softmax", scale: 0.5 },
                      { kind: "dot" },
                      null,
                    ),
                  },
                ),
                mask: fc.constantFrom<unknown>(
                  undefined,
                  undefined,
                  { kind: "causal" },
                  { kind: "causal", offset: -2 },
                  { kind: "padding", keyLength: 0 },
                  { kind: "padding", keyLength: 1 },
                  { kind: "allowed", sets: [] },
                ),
                blockSize: fc.oneof(fc.constant(undefined), intArg(1, 3)),
                onNonPositiveNormalizer: modeArg(["error", "zero", "keep"]),
              },
              { requiredKeys: ["numFrequencies"] },
            ),
          },
          { weight: 1, arbitrary: fc.constantFrom<unknown>(null, undefined, {}, { numFrequencies: 0 }) },
        ),
        seedArb,
      ),
    ),
    call: (q, k, v, o, seed) => randomFeatureAttention(q, k, v, o, seed),
    check: (out, [q, , v]) => shapeIs(out.output, q.rows, v.cols, "output"),
  },
  {
    family: "features",
    name: "drawProjection(numFrequencies, dim, options, seed) → randomFeatures(x, omega, options) / featureDimension",
    args: fc
      .tuple(intArg(1, 6), posDimArb(4), dimArb(4))
      .chain(([m, d, n]) =>
        fc.tuple(
          fc.constant(m),
          fc.constant(d),
          fc.record({ projection: modeArg(["iid", "orthogonal"]) }, { requiredKeys: [] }),
          seedArb,
          matArg(n, d),
          fc.record(
            { features: modeArg(["trig", "positive", "hyperbolic"]), shift: modeArg(["row", "global", "none"]) },
            { requiredKeys: [] },
          ),
        ),
      ),
    call: (m, d, popts, seed, x, fopts) => {
      const omega = drawProjection(m, d, popts, seed);
      featureDimension(fopts.features ?? "positive", m); // (null is taken as the default, like undefined)
      return randomFeatures(x, omega, fopts).features;
    },
    check: (out, [m, , , , x, fopts]) => shapeIs(out, x.rows, (fopts.features ?? "positive") === "positive" ? m : 2 * m, "features"),
  },
  // ---- lowrank/ ----
  {
    family: "lowrank",
    name: "rangeFinder / qb / randomizedSvd(a, options, seed)",
    args: fc
      .tuple(posDimArb(7), posDimArb(5), fc.constantFrom(0, 1, 2))
      .chain(([m, n, which]) => fc.tuple(structuredMatrixArb(m, n), rangeOptionsArb(Math.min(m, n)), seedArb, fc.constant(which))),
    call: (a, o, seed, which) => (which === 0 ? rangeFinder(a, o, seed).Q : which === 1 ? qb(a, o, seed) : randomizedSvd(a, o, seed)),
    check: (out, [a, o, , which]) => {
      if (which === 0) return out.rows === a.rows ? orthonormalCheck(out) : `Q rows ${out.rows}`;
      if (which === 1) return shapeIs(out.B, out.Q.cols, a.cols, "B") ?? orthonormalCheck(out.Q);
      return lengthIs(out.S, o.rank, "S") ?? shapeIs(out.U, a.rows, o.rank, "U") ?? orthonormalCheck(out.U);
    },
  },
  {
    family: "lowrank",
    name: "blockedQb(a, { tolerance, blockSize, maxRank }, seed)",
    args: fc.tuple(posDimArb(7), posDimArb(5)).chain(([m, n]) =>
      fc.tuple(
        structuredMatrixArb(m, n),
        fc.oneof(
          {
            weight: 8,
            arbitrary: fc.record(
              {
                tolerance: numArg(fc.constantFrom(1, 0.5, 1e-3, 1e-14)),
                blockSize: fc.oneof(fc.constant(undefined), intArg(1, 3)),
                maxRank: fc.oneof(fc.constant(undefined), intArg(1, 5)),
              },
              { requiredKeys: ["tolerance"] },
            ),
          },
          { weight: 1, arbitrary: fc.constantFrom<unknown>(null, {}, { tolerance: 2 }) },
        ),
        seedArb,
      ),
    ),
    call: blockedQb,
    check: (out, [a]) => shapeIs(out.Q, a.rows, out.rank, "Q") ?? shapeIs(out.B, out.rank, a.cols, "B") ?? orthonormalCheck(out.Q),
  },
  {
    family: "lowrank",
    name: "householderQr / orthonormalize / luLowerFactor / exactSvd(a, { rank })",
    args: fc
      .tuple(dimArb(7), dimArb(5), fc.constantFrom(0, 1, 2, 3))
      .chain(([m, n, which]) => fc.tuple(structuredMatrixArb(m, n), fc.constant(which), fc.oneof(fc.constant(undefined), intArg(0, 5)))),
    call: (a, which, rank) =>
      which === 0 ? householderQr(a).q : which === 1 ? orthonormalize(a) : which === 2 ? luLowerFactor(a) : exactSvd(a, { rank }),
    check: (out, [a, which]) => (which <= 1 ? (out.rows === a.rows ? orthonormalCheck(out) : `rows ${out.rows}`) : undefined),
  },
  {
    family: "lowrank",
    name: "compressLatent / compressedMlaAttention / foldLatentBasis / reduceLatentRank / multiHeadToMla",
    numRuns: 100,
    args: fc.tuple(posDimArb(5), fc.constantFrom(0, 1, 2, 3, 4)).chain(([n, which]) =>
      fc.tuple(
        fc.constant(which),
        matArg(n, 4),
        fc.oneof(
          {
            weight: 8,
            arbitrary: fc.record(
              {
                rank: intArg(1, 4),
                latentRank: intArg(1, 4),
                queryLatentRank: intArg(1, 3),
                latentDim: intArg(1, 6),
                method: modeArg(["randomized", "exact"]),
              },
              { requiredKeys: ["rank", "latentRank", "queryLatentRank", "latentDim"] },
            ),
          },
          { weight: 1, arbitrary: fc.constantFrom<unknown>(null, {}, { rank: 0, latentRank: 0, latentDim: 0 }) },
        ),
        seedArb,
      ),
    ),
    call: (which, x, o, seed) => {
      const merged = mergeMla(initMlaWeights({ dIn: 4, numHeads: 2, latentDim: 4, queryLatentDim: 3, headDim: 2 }, [1, "mla"]));
      if (which === 0) return compressLatent(x, o, seed).factor;
      if (which === 1) return compressedMlaAttention(x, x, merged, o, seed).output;
      if (which === 2) return foldLatentBasis(merged, x);
      if (which === 3) return reduceLatentRank(merged, o, seed).merged;
      return multiHeadToMla(initMultiHeadWeights({ dIn: 4, numHeads: 2, numKvHeads: 1, headDim: 2 }, [1, "mha"]), o, seed).weights;
    },
  }, // ---- lsh/, hyper/, kdeformer/, scatterbrain/ ----
  {
    family: "lsh-attention",
    name: "hyperAttention / kdeformerAttention / scatterbrainAttention(queries, keys, values, options, seed)",
    args: fc.tuple(dimArb(5), dimArb(6), dimArb(3), dimArb(3), fc.integer({ min: 0, max: 2 })).chain(([nQ, nKV, d, dV, which]) =>
      fc.tuple(
        fc.constant(which),
        matArg(nQ, d),
        matArg(nKV, d),
        matArg(nKV, dV),
        fc.oneof(
          {
            weight: 8,
            arbitrary: fc.record(
              {
                numBits: fc.oneof(fc.constant(undefined), intArg(0, 4), fc.constant(30)),
                blockSize: fc.oneof(fc.constant(undefined), intArg(1, 4)),
                sampleSize: fc.oneof(fc.constant(undefined), intArg(1, 5)),
                normalizerSamples: fc.oneof(fc.constant(undefined), intArg(1, 5)),
                columnSamples: fc.oneof(fc.constant(undefined), intArg(1, 5)),
                estimator: modeArg(["kde", "block-uniform"]),
                kdeTables: fc.oneof(fc.constant(undefined), intArg(1, 3)),
                kdeBits: fc.constantFrom<unknown>(undefined, "auto", 0, 2, 30),
                bucketSamples: fc.oneof(fc.constant(undefined), intArg(1, 3)),
                numFrequencies: intArg(1, 6),
                uniformShare: fc.constantFrom<unknown>(undefined, 0.5, 0, 2),
                rowRatio: fc.constantFrom<unknown>(undefined, 2, 0.5),
                normalizer: modeArg(["approximate", "exact", "estimated"]),
                valueSampling: modeArg(["value-norm", "uniform"]),
                minCausalLength: fc.oneof(fc.constant(undefined), intArg(1, 3)),
                kernel: fc.constantFrom<unknown>(undefined, { kind: "softmax", scale: 0.5 }, { kind: "dot" }, null),
                mask: fc.constantFrom<unknown>(
                  undefined,
                  undefined,
                  { kind: "causal" },
                  { kind: "causal", offset: -1 },
                  { kind: "padding", keyLength: 1 },
                  null,
                ),
              },
              { requiredKeys: ["numFrequencies"] },
            ),
          },
          { weight: 1, arbitrary: fc.constantFrom<unknown>(null, undefined, {}, { numFrequencies: 0 }) },
        ),
        seedArb,
      ),
    ),
    call: (which, q, k, v, o, seed) => {
      if (which === 0) return hyperAttention(q, k, v, o, seed).output;
      if (which === 1) return kdeformerAttention(q, k, v, o, seed).output;
      return scatterbrainAttention(q, k, v, o, seed).output;
    },
    check: (out, [, q, , v]) => shapeIs(out, q.rows, v.cols),
  },
  {
    family: "lsh-attention",
    name: "exponentialKde(points, targets, options, seed)",
    args: fc.tuple(dimArb(6), dimArb(5), dimArb(3)).chain(([n, m, d]) =>
      fc.tuple(
        matArg(n, d),
        matArg(m, d),
        fc.oneof(
          {
            weight: 8,
            arbitrary: fc.record(
              {
                numTables: fc.oneof(fc.constant(undefined), intArg(1, 3)),
                numBits: fc.constantFrom<unknown>(undefined, "auto", 0, 2, 30, -1),
                bucketSamples: fc.oneof(fc.constant(undefined), intArg(1, 3)),
                scale: fc.constantFrom<unknown>(undefined, 0.5, 2, 0, -1, Number.NaN),
                transform: modeArg(["none", "sphere"]),
                logWeights: fc.constantFrom<unknown>(
                  undefined,
                  new Float64Array(n).fill(-1),
                  new Float64Array(n).fill(Number.NEGATIVE_INFINITY),
                  new Float64Array(n).fill(Number.NaN),
                  new Float64Array(n + 1),
                ),
                exclude: fc.constantFrom<unknown>(
                  undefined,
                  { pointGroups: new Int32Array(n), targetGroups: new Int32Array(m) },
                  { pointGroups: new Int32Array(n), targetGroups: new Int32Array(m + 1) },
                  null,
                ),
              },
              { requiredKeys: [] },
            ),
          },
          { weight: 1, arbitrary: fc.constantFrom<unknown>(null, undefined, 3) },
        ),
        seedArb,
      ),
    ),
    // log F̂ = −∞ is a valid answer (every point excluded or weight 0); any NaN or +∞ is not.
    call: (x, y, o, seed) => exponentialKde(x, y, o, seed).logDensity.map((l) => (l === Number.NEGATIVE_INFINITY ? 0 : l)),
    check: (out, [, y]) => lengthIs(out, y.rows),
  },
];

/** Q has orthonormal columns (to 1e-8) — or is empty. */
function orthonormalCheck(q: Matrix): string | undefined {
  const k = q.cols;
  for (let a = 0; a < k; a++) {
    for (let b = a; b < k; b++) {
      let s = 0;
      for (let i = 0; i < q.rows; i++) s += q.data[i * k + a] * q.data[i * k + b];
      const want = a === b ? 1 : 0;
      if (!(Math.abs(s - want) <= 1e-8)) return `QᵀQ[${a},${b}] = ${s}, expected ${want}`;
    }
  }
  return undefined;
}
