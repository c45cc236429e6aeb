import { describe, expect, it } from "vitest";
import { npyToMatrix, npyToStack, npyToVector, parseNpy } from "@randattn/core";
import { fixture, grid, stack } from "./helpers.js";

// Files written by NumPy itself (an independent writer); values recomputed here from the formulas
// of fixtures/make_fixtures.py, float32 ones rounded with Math.fround.
describe(".npy files written by NumPy", () => {
  it("reads <f8 and <f4 matrices", () => {
    const f8 = parseNpy(fixture("f8_3x4.npy"));
    expect(f8.dtype).toBe("<f8");
    expect(f8.shape).toEqual([3, 4]);
    expect(Array.from(npyToMatrix(f8).data)).toEqual(grid(3, 4));
    const f4 = npyToMatrix(parseNpy(fixture("f4_3x4.npy")));
    expect(Array.from(f4.data)).toEqual(grid(3, 4).map(Math.fround));
  });

  it("reads big-endian >f8 and >f4 by swapping bytes", () => {
    const expected = [0, 1, 2, 3, 4, 5].map((k) => k * 0.25 - 1);
    const be8 = parseNpy(fixture("f8be_2x3.npy"));
    expect(be8.dtype).toBe(">f8");
    expect(Array.from(be8.data)).toEqual(expected);
    expect(Array.from(parseNpy(fixture("f4be_2x3.npy")).data)).toEqual(expected);
  });

  it("reads a heads × N × d stack as matrices", () => {
    const heads = npyToStack(parseNpy(fixture("stack_f4_2x3x4.npy")));
    expect(heads).toHaveLength(2);
    const ref = stack(2, 3, 4);
    heads.forEach((m, h) => {
      expect(m.shape).toBe("3×4");
      expect(Array.from(m.data)).toEqual(ref.slice(h * 12, (h + 1) * 12));
    });
  });

  it("converts integer and half-precision dtypes to float64", () => {
    expect(Array.from(npyToVector(parseNpy(fixture("i4_5.npy"))))).toEqual([-2, -1, 0, 1, 2]);
    expect(Array.from(parseNpy(fixture("i8_2x2.npy")).data)).toEqual([1, -2, 3, 2 ** 40]);
    expect(Array.from(parseNpy(fixture("f2_4.npy")).data)).toEqual([0.5, -1.25, 65504, 2 ** -24]);
    expect(Array.from(npyToVector(parseNpy(fixture("vec_f8_6.npy"))))).toEqual([0, 1, 2, 3, 4, 5].map(Math.sin));
  });

  it("reads format versions 2.0 and 3.0", () => {
    for (const name of ["v2_f8_2x2.npy", "v3_f8_2x2.npy"]) {
      const bytes = fixture(name);
      expect(bytes[6]).toBe(Number(name[1]));
      expect(Array.from(npyToMatrix(parseNpy(bytes)).data)).toEqual(grid(2, 2));
    }
  });

  it("views are shaped as asked or rejected", () => {
    const a = parseNpy(fixture("f8_3x4.npy"));
    expect(() => npyToStack(a)).toThrow(/array: expected a 3-D array \(stack, rows, cols\), got shape \(3, 4\)/);
    expect(() => npyToVector(a)).toThrow(/array: expected a 1-D array/);
    expect(() => npyToMatrix(parseNpy(fixture("i4_5.npy")))).toThrow(/array: expected a 2-D array \(rows, cols\), got shape \(5,\)/);
    expect(() => npyToMatrix({} as never)).toThrow(/array: expected an NpyArray/);
  });
});
