import { describe, expect, it } from "vitest";
import {
  Matrix,
  NonFiniteError,
  ShapeError,
  ValueError,
  encodeNpy,
  npyToMatrix,
  npyToStack,
  npyToVector,
  parseNpy,
  randomMatrix,
} from "@randattn/core";

describe(".npy write → read round trip", () => {
  const m = randomMatrix(5, 7, {}, [11, "npy"]);

  it("float64 is exact, float32 rounds each value to nearest", () => {
    const back = npyToMatrix(parseNpy(encodeNpy(m)));
    expect(back.shape).toBe("5×7");
    expect(back.data).toEqual(m.data);
    const f4 = parseNpy(encodeNpy(m, { dtype: "<f4" }));
    expect(f4.dtype).toBe("<f4");
    expect(Array.from(f4.data)).toEqual(Array.from(m.data, Math.fround));
  });

  it("round-trips stacks, vectors, explicit shapes, 0-d and empty arrays", () => {
    const heads = [randomMatrix(3, 2, {}, [1, "h", 0]), randomMatrix(3, 2, {}, [1, "h", 1])];
    const s = parseNpy(encodeNpy(heads));
    expect(s.shape).toEqual([2, 3, 2]);
    expect(npyToStack(s).map((x) => Array.from(x.data))).toEqual(heads.map((x) => Array.from(x.data)));
    expect(Array.from(npyToVector(parseNpy(encodeNpy([1.5, -2, 3]))))).toEqual([1.5, -2, 3]);
    expect(Array.from(npyToVector(parseNpy(encodeNpy(new Float32Array([0.1])))))).toEqual([Math.fround(0.1)]);
    const t = parseNpy(encodeNpy({ shape: [2, 1, 3, 1], data: [1, 2, 3, 4, 5, 6] }));
    expect(t.shape).toEqual([2, 1, 3, 1]);
    expect(Array.from(t.data)).toEqual([1, 2, 3, 4, 5, 6]);
    expect(parseNpy(encodeNpy({ shape: [], data: [42] }))).toMatchObject({ shape: [] });
    expect(parseNpy(encodeNpy(new Matrix(0, 3))).shape).toEqual([0, 3]);
  });

  it("writes NumPy's layout: header padded to 64 bytes and ending in a newline, any version", () => {
    for (const version of [undefined, "1.0", "2.0", "3.0"] as const) {
      const bytes = encodeNpy(m, version ? { version } : {});
      const major = bytes[6];
      const pre = major === 1 ? 10 : 12;
      const hlen = major === 1 ? bytes[8] + 256 * bytes[9] : new DataView(bytes.buffer).getUint32(8, true);
      expect(major).toBe(version ? Number(version[0]) : 1);
      expect((pre + hlen) % 64).toBe(0);
      expect(bytes[pre + hlen - 1]).toBe(0x0a);
      expect(new TextDecoder().decode(bytes.subarray(pre, pre + hlen))).toMatch(
        /^\{'descr': '<f8', 'fortran_order': False, 'shape': \(5, 7\), \} *\n$/,
      );
      expect(npyToMatrix(parseNpy(bytes)).data).toEqual(m.data);
    }
  });

  it("refuses non-finite values, float32 overflow and bad inputs", () => {
    const bad = m.clone();
    bad.data[3] = Number.NaN;
    expect(() => encodeNpy(bad)).toThrow(NonFiniteError);
    expect(() => encodeNpy(bad)).toThrow(/value: expected finite values \(or option allowNonFinite\), got NaN at flat index 3/);
    const nan = parseNpy(encodeNpy(bad, { allowNonFinite: true }), { allowNonFinite: true });
    expect(Number.isNaN(nan.data[3])).toBe(true);
    expect(() => parseNpy(encodeNpy(bad, { allowNonFinite: true }))).toThrow(
      /bytes data: expected finite values .*got NaN at flat index 3/,
    );
    expect(() => encodeNpy([1e39], { dtype: "<f4" })).toThrow(/value: expected values within the float32 range/);
    expect(() => encodeNpy([randomMatrix(2, 2, {}, [1]), randomMatrix(2, 3, {}, [1])])).toThrow(
      /value\[1\]: expected 2×2 \(as value\[0\]\), got 2×3/,
    );
    expect(() => encodeNpy([randomMatrix(2, 2, {}, [1]), randomMatrix(2, 3, {}, [1])])).toThrow(ShapeError);
    expect(() => encodeNpy({ shape: [2, 2], data: [1, 2, 3] })).toThrow(/value\.data: expected length 4 \(shape \(2, 2\)\), got length 3/);
    expect(() => encodeNpy({ shape: [-1], data: [] })).toThrow(/value\.shape\[0\]: expected a non-negative integer, got -1/);
    expect(() => encodeNpy([1, "2" as unknown as number])).toThrow(/value\[1\]: expected a number/);
    expect(() => encodeNpy(m, { dtype: "<i4" as "<f4" })).toThrow(/options\.dtype: expected one of "<f4", "<f8", got "<i4"/);
    expect(() => encodeNpy(m, { version: "4.0" as "1.0" })).toThrow(ValueError);
    expect(() => encodeNpy("abc" as never)).toThrow(/value: expected a Matrix, an array of matrices/);
  });
});
