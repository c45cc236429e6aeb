import { describe, expect, it } from "vitest";
import { FormatError, npyToMatrix, npyToStack, parseNpy } from "@randattn/core";
import { fixture, grid, stack } from "./helpers.js";

// Fortran (column-major) files are reordered to C order by default, or refused on request.
describe("Fortran-ordered .npy", () => {
  it("transposes 2-D and 3-D column-major data into row-major matrices", () => {
    const bytes = fixture("fortran_f8_3x4.npy");
    expect(new TextDecoder().decode(bytes.subarray(10, 80))).toContain("'fortran_order': True");
    expect(Array.from(npyToMatrix(parseNpy(bytes)).data)).toEqual(grid(3, 4));
    const heads = npyToStack(parseNpy(fixture("fortran_f4_2x3x4.npy")));
    expect(heads.flatMap((m) => Array.from(m.data))).toEqual(stack(2, 3, 4));
  });

  it("rejects Fortran order clearly when asked to", () => {
    expect(() => parseNpy(fixture("fortran_f8_3x4.npy"), { fortranOrder: "reject" })).toThrow(FormatError);
    expect(() => parseNpy(fixture("fortran_f8_3x4.npy"), { fortranOrder: "reject" })).toThrow(
      /bytes fortran_order: expected False \(C order\), or option fortranOrder: "transpose", got True/,
    );
    // C-ordered files are unaffected by the option.
    expect(parseNpy(fixture("f8_3x4.npy"), { fortranOrder: "reject" }).shape).toEqual([3, 4]);
    expect(() => parseNpy(fixture("f8_3x4.npy"), { fortranOrder: "auto" as "reject" })).toThrow(/options\.fortranOrder/);
  });
});
