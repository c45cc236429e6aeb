import { describe, expect, it } from "vitest";
import { FormatError, encodeNpy, parseNpy } from "@randattn/core";
import { fixture } from "./helpers.js";

// Issue 6: truncated files, lying headers and shape/data mismatches are refused with a FormatError
// naming the part at fault, the expectation and what was found.
const good = encodeNpy({ shape: [2, 3], data: [1, 2, 3, 4, 5, 6] }); // v1.0: 10-byte preamble + 118-byte header + 48 data bytes

/** A v1.0 file with `header` as its header text (padded like NumPy) and `data` bytes. */
function handMade(header: string, dataBytes: number, major = 1): Uint8Array {
  const pre = major === 1 ? 10 : 12;
  const total = pre + header.length + 1;
  const text = header + " ".repeat((64 - (total % 64)) % 64) + "\n";
  const out = new Uint8Array(pre + text.length + dataBytes);
  out.set([0x93, 0x4e, 0x55, 0x4d, 0x50, 0x59, major, 0]);
  const v = new DataView(out.buffer);
  if (major === 1) v.setUint16(8, text.length, true);
  else v.setUint32(8, text.length, true);
  for (let i = 0; i < text.length; i++) out[pre + i] = text.charCodeAt(i);
  return out;
}

function rejects(bytes: Uint8Array, message: RegExp): void {
  expect(() => parseNpy(bytes)).toThrow(FormatError);
  expect(() => parseNpy(bytes)).toThrow(message);
}

describe("malformed .npy files", () => {
  it("the hand-made helper builds valid files (so each rejection below is due to its defect)", () => {
    expect(parseNpy(handMade("{'descr': '<f8', 'fortran_order': False, 'shape': (2, 3), }", 48)).shape).toEqual([2, 3]);
    expect(parseNpy(handMade("{'descr': '<f8', 'fortran_order': False, 'shape': (2, 3), }", 48, 2)).shape).toEqual([2, 3]);
  });

  it("bad magic and unknown versions", () => {
    const b = good.slice();
    b[1] = 0x4f;
    rejects(b, /bytes magic: expected "\\x93NUMPY" \(93 4e 55 4d 50 59\), got 93 4f 55 4d 50 59 \(not a \.npy file\)/);
    rejects(new TextEncoder().encode("col1,col2\n1,2\n"), /bytes magic/);
    const v = good.slice();
    v[6] = 4;
    rejects(v, /bytes version: expected 1\.0, 2\.0 or 3\.0, got 4\.0/);
    v[6] = 1;
    v[7] = 1;
    rejects(v, /got 1\.1/);
  });

  it("truncated preamble, header or data", () => {
    rejects(good.subarray(0, 5), /bytes: expected a \.npy file .*got 5 bytes \(truncated\)/);
    rejects(good.subarray(0, 9), /bytes: expected at least 10 bytes .*got 9 bytes/);
    rejects(good.subarray(0, 60), /bytes header length: expected at most 50 .*got 118 \(truncated file, or a header length that lies\)/);
    rejects(good.subarray(0, good.length - 1), /bytes data: expected 48 bytes \(shape \(2, 3\) of <f8\), got 47 bytes \(truncated data\)/);
    rejects(good.subarray(0, 128), /bytes data: expected 48 bytes .*got 0 bytes/);
  });

  it("a header length that lies", () => {
    const longer = good.slice();
    new DataView(longer.buffer).setUint16(8, 118 + 8, true); // swallows 8 data bytes into the header
    rejects(longer, /bytes header: .*header length field = 126 bytes/);
    const shorter = good.slice();
    new DataView(shorter.buffer).setUint16(8, 50, true); // cuts the dict
    rejects(shorter, /bytes header: .*header length field = 50 bytes/);
    // 60 bytes is exactly the dict without its padding: it parses, and the padding then counts as data.
    const justDict = good.slice();
    new DataView(justDict.buffer).setUint16(8, 60, true);
    rejects(
      justDict,
      /bytes data: expected 48 bytes .*got 106 bytes \(trailing bytes: the header's shape or length does not match the data\)/,
    );
    const huge = good.slice();
    new DataView(huge.buffer).setUint16(8, 0xffff, true);
    rejects(huge, /bytes header length: expected at most 166 .*got 65535/);
  });

  it("a shape that does not match the data size", () => {
    rejects(
      handMade("{'descr': '<f8', 'fortran_order': False, 'shape': (2, 3), }", 56),
      /bytes data: expected 48 bytes .*got 56 bytes \(trailing bytes/,
    );
    rejects(
      handMade("{'descr': '<f8', 'fortran_order': False, 'shape': (4, 3), }", 48),
      /bytes data: expected 96 bytes \(shape \(4, 3\) of <f8\), got 48 bytes/,
    );
    rejects(handMade("{'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), }", 48), /expected 24 bytes/);
  });

  it("malformed header dicts", () => {
    const cases: [string, RegExp][] = [
      [
        "{'descr': '<f8', 'fortran_order': False}",
        /bytes header: expected exactly the keys 'descr', 'fortran_order', 'shape', got 'descr', 'fortran_order'/,
      ],
      ["{'descr': '<f8', 'fortran_order': False, 'shape': (2, 3), 'extra': 1}", /got 'descr', 'extra', 'fortran_order', 'shape'/],
      ["{'descr': '<f8', 'fortran_order': False, 'shape': (2, 3)", /bytes header: .*missing "," or "}"/],
      ["['descr', '<f8']", /bytes header: expected a dict/],
      ["{'descr': '<f8', 'fortran_order': 0, 'shape': (2, 3)}", /bytes fortran_order: expected True or False, got 0/],
      ["{'descr': '<f8', 'fortran_order': False, 'shape': [2, 3]}", /bytes shape: expected a tuple of non-negative integers/],
      ["{'descr': '<f8', 'fortran_order': False, 'shape': (2, -3)}", /bytes shape\[1\]: expected a non-negative integer, got -3/],
      ["{'descr': '<f8', 'fortran_order': False, 'shape': (2.0, 3)}", /unexpected character/],
      ["{'descr': '<f8', 'fortran_order': False, 'shape': (2, 3), 'descr': '<f4'}", /duplicate key "descr"/],
      ["{'descr': __import__('os'), 'fortran_order': False, 'shape': (2, 3)}", /unexpected character/],
      [`{'descr': ${"(".repeat(100)}${")".repeat(100)}, 'fortran_order': False, 'shape': (6,)}`, /nesting deeper than 32/],
      ["{'descr': '<f8', 'fortran_order': False, 'shape': (99999999999999999999,)}", /beyond 2\^53/],
    ];
    for (const [header, message] of cases) rejects(handMade(header, 48), message);
    // "(6)" is the integer 6 in Python, not a tuple.
    rejects(
      handMade("{'descr': '<f8', 'fortran_order': False, 'shape': (6)}", 48),
      /bytes shape: expected a tuple of non-negative integers, got 6/,
    );
    // Python 2 era long integers and the one-element tuple are fine.
    expect(parseNpy(handMade("{'descr': '<f8', 'fortran_order': False, 'shape': (2L, 3L)}", 48)).shape).toEqual([2, 3]);
    expect(parseNpy(handMade('{"descr": "<f8", "fortran_order": False, "shape": (6,)}', 48)).shape).toEqual([6]);
  });

  it("invalid UTF-8 in a version 3.0 header", () => {
    const b = handMade("{'descr': '<f8', 'fortran_order': False, 'shape': (2, 3), }", 48, 3);
    b[20] = 0xff;
    rejects(b, /bytes header: expected UTF-8 text \(version 3\.0\), got invalid UTF-8/);
  });

  it("a non-byte input is a ValueError, not a FormatError", () => {
    expect(() => parseNpy("x" as never)).toThrow(/bytes: expected a Uint8Array \(or Buffer\) of \.npy bytes, got "x"/);
    expect(() => parseNpy(fixture("f8_3x4.npy"), { fortranOrder: 1 as never })).toThrow(/options\.fortranOrder/);
  });
});
