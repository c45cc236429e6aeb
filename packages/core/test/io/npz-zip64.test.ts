import { describe, expect, it } from "vitest";
import { encodeNpy, npyToMatrix, randomMatrix } from "@randattn/core";
import { crc32, parseNpz } from "@randattn/core/node";

// numpy.savez writes members with force_zip64=True; large archives carry ZIP64 extra fields in
// the central directory (sizes and offset saturated at 0xFFFFFFFF, real values in extra id 0x0001).
function zip64Archive(name: string, data: Uint8Array): Uint8Array {
  const nameBytes = new TextEncoder().encode(name);
  const crc = crc32(data);
  const local = new Uint8Array(30 + nameBytes.length);
  const lv = new DataView(local.buffer);
  lv.setUint32(0, 0x04034b50, true);
  lv.setUint16(4, 45, true);
  lv.setUint32(14, crc, true);
  lv.setUint32(18, data.length, true);
  lv.setUint32(22, data.length, true);
  lv.setUint16(26, nameBytes.length, true);
  local.set(nameBytes, 30);
  const extra = new Uint8Array(4 + 24);
  const xv = new DataView(extra.buffer);
  xv.setUint16(0, 0x0001, true);
  xv.setUint16(2, 24, true);
  xv.setBigUint64(4, BigInt(data.length), true); // uncompressed size
  xv.setBigUint64(12, BigInt(data.length), true); // compressed size
  xv.setBigUint64(20, 0n, true); // local header offset
  const central = new Uint8Array(46 + nameBytes.length + extra.length);
  const cv = new DataView(central.buffer);
  cv.setUint32(0, 0x02014b50, true);
  cv.setUint16(4, 45, true);
  cv.setUint16(6, 45, true);
  cv.setUint32(16, crc, true);
  cv.setUint32(20, 0xffffffff, true);
  cv.setUint32(24, 0xffffffff, true);
  cv.setUint16(28, nameBytes.length, true);
  cv.setUint16(30, extra.length, true);
  cv.setUint32(42, 0xffffffff, true);
  central.set(nameBytes, 46);
  central.set(extra, 46 + nameBytes.length);
  const eocd = new Uint8Array(22);
  const ev = new DataView(eocd.buffer);
  ev.setUint32(0, 0x06054b50, true);
  ev.setUint16(8, 1, true);
  ev.setUint16(10, 1, true);
  ev.setUint32(12, central.length, true);
  ev.setUint32(16, local.length + data.length, true);
  const out = new Uint8Array(local.length + data.length + central.length + eocd.length);
  out.set(local, 0);
  out.set(data, local.length);
  out.set(central, local.length + data.length);
  out.set(eocd, local.length + data.length + central.length);
  return out;
}

describe(".npz with ZIP64 extra fields", () => {
  it("reads sizes and offsets from the ZIP64 extra field", () => {
    const m = randomMatrix(3, 3, {}, [4, "zip64"]);
    const arrays = parseNpz(zip64Archive("w.npy", encodeNpy(m)));
    expect(npyToMatrix(arrays.get("w")!).data).toEqual(m.data);
  });

  it("rejects an archive whose member is not a .npy", () => {
    expect(() => parseNpz(zip64Archive("notes.txt", new TextEncoder().encode("hi")))).toThrow(
      /bytes\["notes\.txt"\]: expected a \.npy member/,
    );
  });
});
