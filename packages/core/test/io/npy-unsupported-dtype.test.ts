import { describe, expect, it } from "vitest";
import { FormatError, parseNpy } from "@randattn/core";
import { fixture } from "./helpers.js";

function withDescr(descr: string, itemBytes: number): Uint8Array {
  const header = `{'descr': ${descr}, 'fortran_order': False, 'shape': (2,), }`;
  const total = 10 + header.length + 1;
  const text = header + " ".repeat((64 - (total % 64)) % 64) + "\n";
  const out = new Uint8Array(10 + text.length + 2 * itemBytes);
  out.set([0x93, 0x4e, 0x55, 0x4d, 0x50, 0x59, 1, 0, text.length & 0xff, text.length >> 8]);
  for (let i = 0; i < text.length; i++) out[10 + i] = text.charCodeAt(i);
  return out;
}

// Unsupported dtypes are refused by name; object arrays are never unpickled.
describe("unsupported .npy dtypes", () => {
  it("object arrays written by NumPy (pickles) are refused without loading them", () => {
    expect(() => parseNpy(fixture("object.npy"))).toThrow(FormatError);
    expect(() => parseNpy(fixture("object.npy"))).toThrow(
      /bytes descr: expected a numeric dtype .*got "\|O" \(an object array of pickled Python objects, which is never loaded\)/,
    );
  });

  it("complex values written by NumPy are refused by name", () => {
    expect(() => parseNpy(fixture("c16_2.npy"))).toThrow(/bytes descr: .*got "<c16" \(complex values\)/);
  });

  it("each other unsupported descr is named", () => {
    const cases: [string, number, RegExp][] = [
      ["'<U3'", 12, /"<U3" \(strings\)/],
      ["'|S4'", 4, /"\|S4" \(strings\)/],
      ["'<M8[ns]'", 8, /"<M8\[ns\]" \(not a simple dtype\)/],
      ["'<f16'", 16, /"<f16" \(unsupported kind f of 16 bytes\)/],
      ["'=f8'", 8, /"=f8" \(native byte order '=' is ambiguous in a file\)/],
      ["'|f8'", 8, /"\|f8" \('\|' \(no byte order\) on a multi-byte type\)/],
      ["'|V8'", 8, /raw or structured bytes/],
      ["[('x', '<f4'), ('y', '<f4')]", 8, /bytes descr: expected a numeric dtype string .*got a structured dtype \(list of fields\)/],
      ["3", 8, /bytes descr: expected a numeric dtype string .*got 3/],
    ];
    for (const [descr, size, message] of cases) {
      expect(() => parseNpy(withDescr(descr, size))).toThrow(FormatError);
      expect(() => parseNpy(withDescr(descr, size))).toThrow(message);
    }
  });

  it("the same helper with a supported dtype reads fine", () => {
    expect(Array.from(parseNpy(withDescr("'<u2'", 2)).data)).toEqual([0, 0]);
    expect(Array.from(parseNpy(withDescr("'|b1'", 1)).data)).toEqual([0, 0]);
    expect(Array.from(parseNpy(withDescr("'>i8'", 8)).data)).toEqual([0, 0]);
  });
});
