import { describe, expect, it } from "vitest";
import {
  KVCache,
  LatentCache,
  type Matrix,
  Rope,
  ValueError,
  createDecoderState,
  decoderOnlyStep,
  initDecoderOnly,
  initMlaWeights,
  initMultiHeadWeights,
  mergeMla,
  mlaDecode,
  multiHeadDecode,
  randomMatrix,
  rotationSignature,
  sliceRows,
} from "@randattn/core";

// Issue 9: a decode step without the rotation of the prefill silently mixed rotated and unrotated
// keys (0.39 max-abs difference). A cache remembers the rotation and positions it was filled with.
describe("caches remember the rotation and positions they were filled with", () => {
  const x = randomMatrix(6, 8, {}, [41, "x"]);
  const rope = new Rope(4);

  it("MHA: a step without RoPE after a RoPE prefill, another RoPE, or repeated positions is refused; the cache equals an untouched twin", () => {
    const w = initMultiHeadWeights({ dIn: 8, numHeads: 2, headDim: 4 }, [41, "w"]);
    const cache = new KVCache({ numKvHeads: 2, keyDim: 4, valueDim: 4 });
    const twin = new KVCache({ numKvHeads: 2, keyDim: 4, valueDim: 4 });
    multiHeadDecode(sliceRows(x, 0, 5), w, cache, { rope });
    multiHeadDecode(sliceRows(x, 0, 5), w, twin, { rope });
    const next = sliceRows(x, 5, 6);
    expect(() => multiHeadDecode(next, w, cache)).toThrow(ValueError);
    expect(() => multiHeadDecode(next, w, cache)).toThrow(
      /options\.rope: expected the rotation the cache was filled with \(rope\(d=4, base=10000, pairing=interleaved\)\)/,
    );
    expect(() => multiHeadDecode(next, w, cache, { rope: new Rope(4, { base: 500 }) })).toThrow(/options\.rope/);
    expect(() => multiHeadDecode(next, w, cache, { rope, queryPositions: [4] })).toThrow(/options\.queryPositions/);
    expect(() => multiHeadDecode(next, w, cache, { rope, kernel: { kind: "bogus" } as never })).toThrow();
    expect(cache.length).toBe(5);
    expect(cache.fill).toEqual({ rotation: rotationSignature(rope), lastPosition: 4 });
    const a = multiHeadDecode(next, w, cache, { rope });
    const b = multiHeadDecode(next, w, twin, { rope });
    expect(Array.from(a.data)).toEqual(Array.from(b.data));
    // An equal Rope is the same rotation; custom positions beyond the last are accepted.
    multiHeadDecode(next, w, cache, { rope: new Rope(4), queryPositions: [9] });
    expect(cache.fill?.lastPosition).toBe(9);
  });

  it("MLA: the latent cache refuses a step without the decoupled rotation of its prefill and stays as it was", () => {
    const merged = mergeMla(
      initMlaWeights({ dIn: 8, numHeads: 2, latentDim: 5, queryLatentDim: 6, headDim: 4, valueDim: 3, ropeDim: 4 }, [41, "mla"]),
    );
    const cache = new LatentCache({ latentDim: 5, ropeDim: 4 });
    const twin = new LatentCache({ latentDim: 5, ropeDim: 4 });
    mlaDecode(sliceRows(x, 0, 5), merged, cache, { rope });
    mlaDecode(sliceRows(x, 0, 5), merged, twin, { rope });
    const next = sliceRows(x, 5, 6);
    expect(() => mlaDecode(next, merged, cache)).toThrow(/options\.rope/);
    expect(cache.length).toBe(5);
    expect(cache.bitsStored()).toBe(64 * 5 * 9);
    const a = mlaDecode(next, merged, cache, { rope });
    const b = mlaDecode(next, merged, twin, { rope });
    expect(Array.from(a.data)).toEqual(Array.from(b.data));
  });

  it("a custom rotation object is identified by identity", () => {
    const r1 = { apply: (m: Matrix) => m };
    const r2 = { apply: (m: Matrix) => m };
    expect(rotationSignature(r1)).toBe(rotationSignature(r1));
    expect(rotationSignature(r1)).not.toBe(rotationSignature(r2));
    expect(rotationSignature(undefined)).toBe("none");
  });

  it("decoder stacks: the exact factory default and a custom factory give the same logits", () => {
    const model = initDecoderOnly({ vocabSize: 11, numLayers: 2, dModel: 8, numHeads: 2, dHidden: 8, positional: "rope" }, [41, "m"]);
    const a = createDecoderState(model);
    const b = createDecoderState(model, { cacheFactory: (spec) => new KVCache(spec) });
    const la = decoderOnlyStep(model, a, [1, 2, 3]);
    const lb = decoderOnlyStep(model, b, [1, 2, 3]);
    expect(Array.from(la.data)).toEqual(Array.from(lb.data));
    expect(() => createDecoderState(model, { cacheFactory: 3 as never })).toThrow(/options\.cacheFactory/);
  });
});
