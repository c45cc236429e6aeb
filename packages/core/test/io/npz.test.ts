import { describe, expect, it } from "vitest";
import { FormatError, npyToMatrix, npyToStack, randomMatrix } from "@randattn/core";
import { crc32, encodeNpz, parseNpz } from "@randattn/core/node";
import { fixture, grid, stack } from "./helpers.js";

describe(".npz archives", () => {
  it("reads numpy.savez (stored) and numpy.savez_compressed (deflate)", () => {
    for (const name of ["savez.npz", "savez_compressed.npz"]) {
      const arrays = parseNpz(fixture(name));
      expect([...arrays.keys()]).toEqual(["q", "k"]);
      expect(Array.from(npyToMatrix(arrays.get("q")!).data)).toEqual(grid(3, 4));
      expect(npyToStack(arrays.get("k")!).flatMap((m) => Array.from(m.data))).toEqual(stack(2, 3, 4));
    }
  });

  it("round-trips stored and compressed archives, byte-identical for identical input", () => {
    const q = randomMatrix(4, 3, {}, [5, "q"]);
    const heads = [randomMatrix(4, 2, {}, [5, "k", 0]), randomMatrix(4, 2, {}, [5, "k", 1])];
    for (const compress of [false, true]) {
      const bytes = encodeNpz({ q, k: heads, v: [1, 2, 3] }, { compress });
      expect(encodeNpz({ q, k: heads, v: [1, 2, 3] }, { compress })).toEqual(bytes);
      const back = parseNpz(bytes);
      expect(npyToMatrix(back.get("q")!).data).toEqual(q.data);
      expect(npyToStack(back.get("k")!).map((m) => Array.from(m.data))).toEqual(heads.map((m) => Array.from(m.data)));
      expect(Array.from(back.get("v")!.data)).toEqual([1, 2, 3]);
    }
    const map = parseNpz(encodeNpz(new Map([["é", [1]]]), { dtype: "<f4" }));
    expect(map.get("é")!.dtype).toBe("<f4");
  });

  it("CRC-32 matches the standard check value", () => {
    expect(crc32(new TextEncoder().encode("123456789"))).toBe(0xcbf43926);
  });

  it("rejects corrupt, truncated and foreign archives", () => {
    const bytes = encodeNpz({ q: randomMatrix(2, 2, {}, [1]) });
    const flipped = bytes.slice();
    flipped[30 + "q.npy".length + 128 + 5] ^= 0xff; // local header, name, .npy header, then inside the data
    expect(() => parseNpz(flipped)).toThrow(FormatError);
    expect(() => parseNpz(flipped)).toThrow(/bytes\["q\.npy"\]: expected CRC-32 [0-9a-f]{8}, got [0-9a-f]{8} \(corrupt data\)/);
    expect(() => parseNpz(bytes.subarray(0, 100))).toThrow(/bytes: expected a zip archive \(\.npz\) .*\(not a zip file, or truncated\)/);
    expect(() => parseNpz(fixture("f8_3x4.npy"))).toThrow(/not a zip file/);
    const compressed = encodeNpz({ q: randomMatrix(8, 8, {}, [1]) }, { compress: true });
    const garbled = compressed.slice();
    for (let i = 50; i < 70; i++) garbled[i] = 0xff;
    expect(() => parseNpz(garbled)).toThrow(FormatError);
    expect(() => parseNpz(encodeNpz({ q: randomMatrix(2, 2, {}, [1]) }).subarray(1))).toThrow(FormatError);
    expect(() => parseNpz(42 as never)).toThrow(/bytes: expected a Uint8Array/);
    expect(() => encodeNpz({ "": [1] })).toThrow(/arrays: expected non-empty string names/);
    expect(() => encodeNpz({ q: [Number.NaN] })).toThrow(/arrays\.q: expected finite values/);
  });

  it("names the member whose .npy is malformed", () => {
    const bytes = encodeNpz({ w: [1, 2] });
    // Lower the member's shape to (1,): the header still parses but the data no longer matches.
    const text = new TextDecoder("latin1").decode(bytes);
    const at = text.indexOf("(2,)");
    const bad = bytes.slice();
    bad[at + 1] = "1".charCodeAt(0);
    // Fix the CRC so the zip layer accepts it and the .npy layer is the one to complain.
    const start = text.indexOf("\x93NUMPY");
    const end = start + 128 + 16;
    const crc = crc32(bad.subarray(start, end));
    const view = new DataView(bad.buffer);
    view.setUint32(14, crc, true);
    view.setUint32(text.indexOf("PK\x01\x02") + 16, crc, true);
    expect(() => parseNpz(bad)).toThrow(/bytes\["w\.npy"\] data: expected 8 bytes \(shape \(1,\) of <f8\), got 16 bytes/);
  });
});
