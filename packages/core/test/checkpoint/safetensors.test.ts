import fc from "fast-check";
import { describe, expect, it } from "vitest";
import {
  FormatError,
  RandAttnError,
  bfloat16BitsToNumber,
  encodeSafetensors,
  halfBitsToNumber,
  memoryStore,
  numberToBfloat16Bits,
  numberToHalfBits,
  parseSafetensors,
} from "@randattn/core";

/** A safetensors file from a raw header object and a data buffer (for lying headers). */
function raw(header: unknown, data: Uint8Array, headerText?: string): Uint8Array {
  const h = new TextEncoder().encode(headerText ?? JSON.stringify(header));
  const out = new Uint8Array(8 + h.length + data.length);
  new DataView(out.buffer).setBigUint64(0, BigInt(h.length), true);
  out.set(h, 8);
  out.set(data, 8 + h.length);
  return out;
}

function catchFormat(f: () => unknown): FormatError {
  try {
    f();
  } catch (e) {
    if (e instanceof FormatError) return e;
    throw e;
  }
  throw new Error("expected a FormatError");
}

describe("safetensors: F64/F32/F16/BF16 exactly", () => {
  it("round-trips float64 bit for bit and widens F32/F16/BF16 exactly", () => {
    const data = [0, -0, 1.5, -2.25, 1e-300, 123456.789, Math.PI];
    const f64 = parseSafetensors(encodeSafetensors({ x: { shape: [7], data } })).tensors.get("x")!;
    expect(Array.from(f64.data)).toEqual(data);
    const f32 = parseSafetensors(encodeSafetensors({ x: { shape: [7], data } }, { dtype: "F32" })).tensors.get("x")!;
    expect(Array.from(f32.data)).toEqual(data.map(Math.fround));
    expect(f32.dtype).toBe("F32");
  });

  it("F16: nearest, ties to even, subnormals, overflow to ∞ at 65520", () => {
    const cases: [number, number][] = [
      [1, 0x3c00],
      [65504, 0x7bff],
      [65519.99, 0x7bff],
      [65520, 0x7c00],
      [2 ** -24, 0x0001],
      [2 ** -25, 0x0000], // tie between 0 and the smallest subnormal → even (0)
      [3 * 2 ** -25, 0x0002], // tie between 1 and 2 subnormal steps → even (2)
      [1 + 2 ** -11, 0x3c00], // tie → even mantissa
      [1 + 3 * 2 ** -11, 0x3c02],
      [-2, 0xc000],
      [2 ** -14, 0x0400],
    ];
    for (const [x, bits] of cases) expect(numberToHalfBits(x), String(x)).toBe(bits);
    for (let h = 0; h < 0x7c00; h += 37) expect(numberToHalfBits(halfBitsToNumber(h))).toBe(h);
  });

  it("BF16 rounding equals float32's upper half rounded to nearest even (for float32 inputs)", () => {
    const f = new Float32Array(1);
    const u = new Uint32Array(f.buffer);
    fc.assert(
      fc.property(fc.float({ noNaN: true, noDefaultInfinity: true }), (x) => {
        f[0] = x;
        const bits = u[0];
        const lower = bits & 0xffff;
        let upper = bits >>> 16;
        if (lower > 0x8000 || (lower === 0x8000 && (upper & 1) === 1)) upper += 1;
        expect(numberToBfloat16Bits(f[0])).toBe(upper & 0xffff);
        expect(bfloat16BitsToNumber(numberToBfloat16Bits(f[0]))).toBe(bfloat16BitsToNumber(upper & 0xffff));
      }),
      { numRuns: 500, seed: 10 },
    );
  });
});

describe("safetensors: lying or corrupt headers are FormatErrors naming the file, tensor and field", () => {
  const eight = new Uint8Array(8);
  it("truncated files", () => {
    expect(catchFormat(() => parseSafetensors(new Uint8Array(5), "m.safetensors")).argument).toBe("m.safetensors: header length");
    const good = encodeSafetensors({ w: { shape: [2], data: [1, 2] } });
    expect(catchFormat(() => parseSafetensors(good.subarray(0, 12), "m.safetensors")).argument).toBe("m.safetensors: header length");
    const cut = catchFormat(() => parseSafetensors(good.subarray(0, good.length - 3), "m.safetensors"));
    expect(cut.argument).toBe('m.safetensors: tensor "w" data_offsets');
    expect(cut.actual).toContain("truncated");
  });

  it("offsets outside the file, sizes ≠ dtype × shape, overlaps, holes, trailing bytes", () => {
    const e1 = catchFormat(() => parseSafetensors(raw({ w: { dtype: "F64", shape: [1], data_offsets: [0, 16] } }, eight), "f"));
    expect(e1.argument).toBe('f: tensor "w" data_offsets');
    expect(e1.expected).toContain("8 bytes (F64 × shape [1])");
    const e2 = catchFormat(() => parseSafetensors(raw({ w: { dtype: "F32", shape: [4], data_offsets: [0, 16] } }, eight), "f"));
    expect(e2.actual).toContain("truncated file, or an offset that lies");
    const overlap = raw(
      { a: { dtype: "F32", shape: [2], data_offsets: [0, 8] }, b: { dtype: "F32", shape: [1], data_offsets: [4, 8] } },
      new Uint8Array(8),
    );
    expect(catchFormat(() => parseSafetensors(overlap, "f")).expected).toContain("no overlap");
    const hole = raw({ a: { dtype: "F32", shape: [1], data_offsets: [4, 8] } }, new Uint8Array(8));
    expect(catchFormat(() => parseSafetensors(hole, "f")).actual).toContain("hole");
    const trailing = raw({ a: { dtype: "F32", shape: [1], data_offsets: [0, 4] } }, new Uint8Array(8));
    expect(catchFormat(() => parseSafetensors(trailing, "f")).argument).toBe("f: data buffer");
  });

  it("unknown dtypes, bad shapes, invalid JSON or UTF-8, non-finite weights", () => {
    const e = catchFormat(() => parseSafetensors(raw({ w: { dtype: "F8_E4M3", shape: [8], data_offsets: [0, 8] } }, eight), "f"));
    expect(e.argument).toBe('f: tensor "w" dtype');
    expect(e.actual).toBe('"F8_E4M3"');
    expect(catchFormat(() => parseSafetensors(raw({ w: { dtype: "F32", shape: [-2], data_offsets: [0, 8] } }, eight), "f")).argument).toBe(
      'f: tensor "w" shape',
    );
    expect(catchFormat(() => parseSafetensors(raw(null, eight, '{"w": {'), "f")).actual).toContain("invalid JSON");
    const bad = raw(null, new Uint8Array(0), "  ");
    bad[8] = 0xff;
    expect(catchFormat(() => parseSafetensors(bad, "f")).expected).toBe("UTF-8 JSON");
    const nan = new Uint8Array(8);
    new DataView(nan.buffer).setFloat64(0, Number.NaN, true);
    const nf = catchFormat(() => parseSafetensors(raw({ w: { dtype: "F64", shape: [1], data_offsets: [0, 8] } }, nan), "f"));
    expect(nf.argument).toBe('f: tensor "w"');
    expect(nf.actual).toContain("NaN at flat index 0");
  });

  it("a shard index that disagrees with its shards", () => {
    const a = encodeSafetensors({ x: { shape: [1], data: [1] } });
    const b = encodeSafetensors({ y: { shape: [1], data: [2] } });
    const index = (map: Record<string, string>) => JSON.stringify({ weight_map: map });
    const ok = memoryStore({
      "a.safetensors": a,
      "b.safetensors": b,
      "model.safetensors.index.json": index({ x: "a.safetensors", y: "b.safetensors" }),
    });
    expect(Array.from(ok.read("y").data)).toEqual([2]);
    expect(ok.fileOf("x")).toBe("a.safetensors");
    const wrong = catchFormat(() =>
      memoryStore({
        "a.safetensors": a,
        "b.safetensors": b,
        "model.safetensors.index.json": index({ x: "b.safetensors", y: "b.safetensors" }),
      }),
    );
    expect(wrong.argument).toBe('b.safetensors: tensor "x"');
    const outside = catchFormat(() => memoryStore({ "model.safetensors.index.json": index({ x: "../a.safetensors" }) }));
    expect(outside.argument).toBe('model.safetensors.index.json: weight_map["x"]');
    expect(catchFormat(() => memoryStore({ "model.safetensors.index.json": index({ x: "c.safetensors" }) })).actual).toBe("absent");
    expect(catchFormat(() => ok.read("z")).argument).toBe('checkpoint: tensor "z"');
  });
});

describe("safetensors fuzz (like the .npy fuzz): any bytes parse consistently or throw a typed error", () => {
  const seeds = [
    encodeSafetensors({ a: { shape: [2, 3], data: [1, 2, 3, 4, 5, 6] }, b: { shape: [4], data: [1, -1, 0.5, 2] } }, { dtype: "BF16" }),
    encodeSafetensors(
      { w: { shape: [3], data: [1, 2, 3] }, v: { shape: [1, 1], data: [7], dtype: "F16" } },
      { dtype: "F32", metadata: { format: "pt" } },
    ),
  ];
  const outcome = (bytes: Uint8Array) => {
    try {
      const { tensors } = parseSafetensors(bytes, "fuzz");
      for (const t of tensors.values()) expect(t.data.length).toBe(t.shape.reduce((x, y) => x * y, 1));
      return "ok";
    } catch (e) {
      if (e instanceof RandAttnError) return "typed";
      throw e;
    }
  };
  it("byte flips, truncations and insertions", () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 0, max: seeds.length - 1 }),
        fc.array(fc.tuple(fc.nat(), fc.integer({ min: 0, max: 255 })), { maxLength: 6 }),
        fc.option(fc.nat()),
        (s, flips, cut) => {
          const b = seeds[s].slice();
          for (const [i, v] of flips) b[i % b.length] = v;
          const bytes = cut === null ? b : b.subarray(0, cut % (b.length + 1));
          expect(["ok", "typed"]).toContain(outcome(bytes));
        },
      ),
      { numRuns: 400, seed: 42 },
    );
  });

  it("random tensors round-trip through the writer", () => {
    fc.assert(
      fc.property(fc.array(fc.double({ noNaN: true, noDefaultInfinity: true }), { minLength: 1, maxLength: 12 }), (data) => {
        const t = parseSafetensors(encodeSafetensors({ t: { shape: [data.length], data } })).tensors.get("t")!;
        expect(Array.from(t.data)).toEqual(data);
      }),
      { numRuns: 100, seed: 7 },
    );
  });
});
