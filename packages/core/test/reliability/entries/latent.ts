// latent/ and cache/ entries: MLA weights, unmerged / merged attention, conversion to MHA, KV and
// latent caches, token-by-token decoding (MHA/GQA/MQA and MLA).
import fc from "fast-check";
import {
  KVCache,
  LatentCache,
  Matrix,
  Rope,
  initMlaWeights,
  initMultiHeadWeights,
  mergeMla,
  mergedMlaAttention,
  mergedMlaDimensions,
  mlaAttention,
  mlaDecode,
  mlaDimensions,
  mlaToMultiHead,
  multiHeadDecode,
} from "@randattn/core";
import { type Entry, shapeIs } from "../harness.js";
import { intArg, makeMatrix, matArg, modeArg, posDimArb, seedArb } from "../gen.js";
import { kernelArb, maskArb } from "./attention.js";

interface MlaDims {
  dIn: number;
  numHeads: number;
  latentDim: number;
  queryLatentDim: number;
  headDim: number;
  valueDim: number;
  dOut: number;
  ropeDim: number;
}

const mlaDimsArb: fc.Arbitrary<MlaDims> = fc.record({
  dIn: posDimArb(5),
  numHeads: posDimArb(3),
  latentDim: posDimArb(4),
  queryLatentDim: posDimArb(4),
  headDim: posDimArb(4),
  valueDim: posDimArb(3),
  dOut: posDimArb(4),
  ropeDim: fc.constantFrom(0, 0, 2, 4),
});

/** MLA weights for `d`, sometimes broken (a head missing, a wrong shape, a NaN, a half rotary part). */
function mlaWeightsArb(d: MlaDims): fc.Arbitrary<unknown> {
  return fc.tuple(fc.nat(1000), fc.integer({ min: 0, max: 16 })).map(([seed, broken]) => {
    const w = { ...initMlaWeights(d, [seed, "mla"]) } as Record<string, unknown>;
    switch (broken) {
      case 0:
        w.keyUp = (w.keyUp as Matrix[]).slice(1);
        break;
      case 1:
        w.latentDown = makeMatrix(d.dIn + 1, d.latentDim, seed);
        break;
      case 2:
        w.output = makeMatrix(d.numHeads * d.valueDim, d.dOut + 1, seed);
        (w.output as Matrix).data[0] = Number.NaN;
        break;
      case 3:
        w.queryRope = d.ropeDim > 0 ? undefined : [makeMatrix(d.queryLatentDim, 2, seed)];
        break;
      case 4:
        w.valueUp = null;
        break;
      case 5:
        (w.queryDown as Matrix).data[seed % (w.queryDown as Matrix).data.length] = Number.POSITIVE_INFINITY;
        break;
      default:
        break;
    }
    return w;
  });
}

/** MLA options: kernel, mask, form, empty-row policy, algorithm, a RoPE of the right or wrong width. */
function mlaOptionsArb(nQ: number, nKV: number, d: MlaDims, decode: boolean): fc.Arbitrary<unknown> {
  return fc.oneof(
    { weight: 1, arbitrary: fc.constant(undefined) },
    {
      weight: 6,
      arbitrary: fc.record(
        {
          kernel: kernelArb,
          mask: decode
            ? fc.oneof({ weight: 8, arbitrary: fc.constant(undefined) }, { weight: 1, arbitrary: maskArb(nQ, nKV) })
            : maskArb(nQ, nKV),
          onEmptyRow: modeArg(["error", "zero"]),
          algorithm: modeArg(["materialized", "streaming"]),
          blockSize: fc.oneof(fc.constant(undefined), intArg(1, 3)),
          rope: fc.oneof(
            { weight: 4, arbitrary: fc.constant(undefined) },
            {
              weight: 2,
              arbitrary: fc.constant(d.ropeDim > 0 ? new Rope(d.ropeDim) : d.headDim % 2 === 0 ? new Rope(d.headDim) : undefined),
            },
            { weight: 1, arbitrary: fc.constantFrom<unknown>(new Rope(6), { apply: () => null }) },
          ),
        },
        { requiredKeys: [] },
      ),
    },
  );
}

export const latentEntries: Entry[] = [
  {
    family: "latent",
    name: "mlaAttention / mergedMlaAttention(xQ, xKV, weights, options)",
    args: fc
      .tuple(posDimArb(4), posDimArb(4), mlaDimsArb, fc.boolean())
      .chain(([nQ, nKV, d, merged]) =>
        fc.tuple(matArg(nQ, d.dIn), matArg(nKV, d.dIn), mlaWeightsArb(d), mlaOptionsArb(nQ, nKV, d, false), fc.constant(merged)),
      ),
    call: (xQ, xKV, w, o, merged) => (merged ? mergedMlaAttention(xQ, xKV, mergeMla(w), o) : mlaAttention(xQ, xKV, w, o)),
    check: (out, [xQ, , w]) => shapeIs(out, xQ.rows, w.output.cols),
  },
  {
    family: "latent",
    name: "initMlaWeights(config, key) / mlaDimensions / mergeMla / mergedMlaDimensions / mlaToMultiHead",
    args: fc.tuple(
      fc.oneof(
        {
          weight: 8,
          arbitrary: fc.record({
            dIn: intArg(1, 4),
            numHeads: intArg(1, 3),
            latentDim: intArg(1, 4),
            queryLatentDim: intArg(1, 4),
            headDim: intArg(1, 4),
            valueDim: fc.oneof(fc.constant(undefined), intArg(1, 3)),
            dOut: fc.oneof(fc.constant(undefined), intArg(1, 3)),
            ropeDim: fc.oneof(fc.constant(undefined), fc.constantFrom<unknown>(0, 2, 3, -2, 1.5)),
          }),
        },
        { weight: 1, arbitrary: fc.constantFrom<unknown>(null, undefined, {}, "mla") },
      ),
      seedArb,
    ),
    call: (config, key) => {
      const w = initMlaWeights(config, key);
      mlaDimensions(w);
      mergedMlaDimensions(mergeMla(w));
      return w.queryRope ? w : mlaToMultiHead(w);
    },
  },
  {
    family: "cache",
    name: "multiHeadDecode(xNew, weights, KVCache, options) over several steps",
    args: fc
      .tuple(
        fc.constantFrom([1, 1], [2, 2], [2, 1], [4, 2]),
        posDimArb(4),
        posDimArb(4),
        posDimArb(3),
        fc.array(posDimArb(3), { minLength: 1, maxLength: 3 }),
      )
      .chain(([[h, g], dIn, dh, dv, steps]) =>
        fc.tuple(
          fc.constant(initMultiHeadWeights({ dIn, numHeads: h, numKvHeads: g, headDim: dh, valueDim: dv }, [1, "mhd"])),
          fc.oneof(
            { weight: 8, arbitrary: fc.constant({ numKvHeads: g, keyDim: dh, valueDim: dv }) },
            {
              weight: 1,
              arbitrary: fc.constantFrom<unknown>(
                { numKvHeads: g + 1, keyDim: dh, valueDim: dv },
                { numKvHeads: g, keyDim: dh, valueDim: dv, initialCapacity: 0 },
                { numKvHeads: 0, keyDim: 1, valueDim: 1 },
                null,
              ),
            },
          ),
          fc.tuple(...steps.map((t) => matArg(t, dIn))),
          mlaOptionsArb(
            1,
            1,
            { dIn, numHeads: h, latentDim: 1, queryLatentDim: 1, headDim: dh, valueDim: dv, dOut: dIn, ropeDim: 0 },
            true,
          ),
        ),
      ),
    call: (w, cacheOpts, steps, o) => {
      const cache = new KVCache(cacheOpts);
      let last: Matrix | undefined;
      for (const x of steps) last = multiHeadDecode(x, w, cache, o);
      return last;
    },
    check: (out, [w, , steps]) => shapeIs(out, steps[steps.length - 1].rows, w.output.cols),
  },
  {
    family: "cache",
    name: "mlaDecode(xNew, merged, LatentCache, options) over several steps",
    args: fc.tuple(mlaDimsArb, fc.array(posDimArb(3), { minLength: 1, maxLength: 3 })).chain(([d, steps]) =>
      fc.tuple(
        fc.constant(mergeMla(initMlaWeights(d, [2, "mla"]))),
        fc.oneof(
          { weight: 8, arbitrary: fc.constant({ latentDim: d.latentDim, ropeDim: d.ropeDim }) },
          {
            weight: 1,
            arbitrary: fc.constantFrom<unknown>(
              { latentDim: d.latentDim + 1, ropeDim: d.ropeDim },
              { latentDim: d.latentDim, ropeDim: 1.5 },
              null,
            ),
          },
        ),
        fc.tuple(...steps.map((t) => matArg(t, d.dIn))),
        mlaOptionsArb(1, 1, d, true),
      ),
    ),
    call: (merged, cacheOpts, steps, o) => {
      const cache = new LatentCache(cacheOpts);
      let last: Matrix | undefined;
      for (const x of steps) last = mlaDecode(x, merged, cache, o);
      return last;
    },
    check: (out, [merged, , steps]) => shapeIs(out, steps[steps.length - 1].rows, merged.latentOutput.cols),
  },
  {
    family: "cache",
    name: "KVCache.append(keys, values) / keys(g) / values(g)",
    args: fc
      .tuple(posDimArb(3), posDimArb(3), posDimArb(3), posDimArb(3))
      .chain(([g, dk, dv, t]) =>
        fc.tuple(
          fc.constant({ numKvHeads: g, keyDim: dk, valueDim: dv }),
          fc.oneof(
            { weight: 6, arbitrary: fc.tuple(...Array.from({ length: g }, () => matArg(t, dk))) },
            { weight: 1, arbitrary: fc.constantFrom<unknown>(null, [], "k") },
          ),
          fc.oneof(
            { weight: 6, arbitrary: fc.tuple(...Array.from({ length: g }, () => matArg(t, dv))) },
            { weight: 1, arbitrary: fc.constantFrom<unknown>(null, [[1]]) },
          ),
          intArg(0, g - 1),
        ),
      ),
    call: (opts, keys, values, g) => {
      const c = new KVCache(opts);
      c.append(keys, values);
      c.values(g);
      return c.keys(g);
    },
    check: (out, [opts, keys]) => shapeIs(out, keys[0].rows, opts.keyDim),
  },
  {
    family: "cache",
    name: "LatentCache.append(latent, rotaryKeys) / latent()",
    args: fc
      .tuple(posDimArb(3), fc.constantFrom(0, 2), posDimArb(3))
      .chain(([dl, dr, t]) =>
        fc.tuple(
          fc.constant({ latentDim: dl, ropeDim: dr }),
          matArg(t, dl),
          dr > 0 ? matArg(t, dr) : fc.constantFrom<unknown>(undefined, undefined, new Matrix(t, 2)),
        ),
      ),
    call: (opts, latent, rot) => {
      const c = new LatentCache(opts);
      c.append(latent, rot);
      return c.latent();
    },
    check: (out, [opts, latent]) => shapeIs(out, latent.rows, opts.latentDim),
  },
];
