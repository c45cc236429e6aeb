/**
 * The minimal ZIP reader/writer `.npz` needs (PKWARE APPNOTE 6.3): stored (method 0) and deflate
 * (method 8, via node:zlib's raw inflate/deflate) members, ZIP64 sizes and offsets on read
 * (numpy writes members with `force_zip64=True`), CRC-32 checked on read.
 */
import { deflateRawSync, inflateRawSync } from "node:zlib";
import { FormatError, ValueError } from "../errors.js";

/** One archive member. */
export interface ZipEntry {
  readonly name: string;
  readonly data: Uint8Array;
}

let crcTable: Uint32Array | undefined;

/** CRC-32 (IEEE 802.3, reflected 0xEDB88320) — zlib.crc32 only exists from Node 20.15. */
export function crc32(bytes: Uint8Array): number {
  if (!crcTable) {
    crcTable = new Uint32Array(256);
    for (let n = 0; n < 256; n++) {
      let c = n;
      for (let k = 0; k < 8; k++) c = c & 1 ? 0xedb88320 ^ (c >>> 1) : c >>> 1;
      crcTable[n] = c >>> 0;
    }
  }
  let crc = 0xffffffff;
  for (let i = 0; i < bytes.length; i++) crc = crcTable[(crc ^ bytes[i]) & 0xff] ^ (crc >>> 8);
  return (crc ^ 0xffffffff) >>> 0;
}

const SIG_LOCAL = 0x04034b50;
const SIG_CENTRAL = 0x02014b50;
const SIG_EOCD = 0x06054b50;
const SIG_ZIP64_LOCATOR = 0x07064b50;
const SIG_ZIP64_EOCD = 0x06064b50;

function u64(view: DataView, at: number, label: string): number {
  const v = view.getBigUint64(at, true);
  if (v > BigInt(Number.MAX_SAFE_INTEGER)) throw new FormatError(label, "a size or offset below 2^53", v.toString());
  return Number(v);
}

function decodeName(bytes: Uint8Array, utf8: boolean): string {
  if (utf8) return new TextDecoder("utf-8").decode(bytes);
  let s = "";
  for (const b of bytes) s += String.fromCharCode(b);
  return s;
}

/**
 * Reads every member of a ZIP archive.
 * @throws FormatError naming `label` for a missing or inconsistent directory, truncated data, an
 *   unsupported compression method, encryption, or a CRC mismatch.
 */
export function readZip(bytes: Uint8Array, label: string): ZipEntry[] {
  const n = bytes.length;
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  let eocd = -1;
  for (let i = n - 22; i >= Math.max(0, n - 22 - 0xffff); i--) {
    if (view.getUint32(i, true) === SIG_EOCD) {
      eocd = i;
      break;
    }
  }
  if (eocd < 0)
    throw new FormatError(
      label,
      "a zip archive (.npz) ending with an end-of-central-directory record",
      `${n} bytes without one (not a zip file, or truncated)`,
    );
  let count = view.getUint16(eocd + 10, true);
  let cdSize = view.getUint32(eocd + 12, true);
  let cdOffset = view.getUint32(eocd + 16, true);
  if (
    (count === 0xffff || cdSize === 0xffffffff || cdOffset === 0xffffffff) &&
    eocd >= 20 &&
    view.getUint32(eocd - 20, true) === SIG_ZIP64_LOCATOR
  ) {
    const z = u64(view, eocd - 12, `${label} zip64 locator`);
    if (z + 56 > n || view.getUint32(z, true) !== SIG_ZIP64_EOCD)
      throw new FormatError(`${label} zip64 record`, `a ZIP64 end record at offset ${z}`, "none");
    count = u64(view, z + 32, `${label} zip64 record`);
    cdSize = u64(view, z + 40, `${label} zip64 record`);
    cdOffset = u64(view, z + 48, `${label} zip64 record`);
  }
  if (cdOffset + cdSize > eocd) {
    throw new FormatError(
      `${label} central directory`,
      `to end before byte ${eocd}`,
      `offset ${cdOffset} + size ${cdSize} (truncated or corrupt)`,
    );
  }
  const entries: ZipEntry[] = [];
  let p = cdOffset;
  for (let e = 0; e < count; e++) {
    if (p + 46 > n || view.getUint32(p, true) !== SIG_CENTRAL)
      throw new FormatError(`${label} central directory`, `entry ${e} of ${count}`, `no entry at offset ${p}`);
    const flags = view.getUint16(p + 8, true);
    const method = view.getUint16(p + 10, true);
    const crc = view.getUint32(p + 16, true);
    let csize = view.getUint32(p + 20, true);
    let usize = view.getUint32(p + 24, true);
    const nameLen = view.getUint16(p + 28, true);
    const extraLen = view.getUint16(p + 30, true);
    const commentLen = view.getUint16(p + 32, true);
    let local = view.getUint32(p + 42, true);
    if (p + 46 + nameLen + extraLen > n) throw new FormatError(`${label} central directory`, `entry ${e} within the file`, "truncated");
    const name = decodeName(bytes.subarray(p + 46, p + 46 + nameLen), (flags & 0x800) !== 0);
    const where = `${label}[${JSON.stringify(name)}]`;
    // ZIP64 extended information: the 64-bit values appear only for fields saturated at 0xFFFFFFFF, in this order.
    let x = p + 46 + nameLen;
    const xEnd = x + extraLen;
    while (x + 4 <= xEnd) {
      const id = view.getUint16(x, true);
      const size = view.getUint16(x + 2, true);
      if (id === 0x0001) {
        let q = x + 4;
        const end = x + 4 + size;
        if (usize === 0xffffffff && q + 8 <= end) {
          usize = u64(view, q, where);
          q += 8;
        }
        if (csize === 0xffffffff && q + 8 <= end) {
          csize = u64(view, q, where);
          q += 8;
        }
        if (local === 0xffffffff && q + 8 <= end) local = u64(view, q, where);
      }
      x += 4 + size;
    }
    if (flags & 0x1) throw new FormatError(where, "an unencrypted member", "an encrypted member");
    if (local + 30 > n || view.getUint32(local, true) !== SIG_LOCAL)
      throw new FormatError(where, `a local file header at offset ${local}`, "none");
    const start = local + 30 + view.getUint16(local + 26, true) + view.getUint16(local + 28, true);
    if (start + csize > n)
      throw new FormatError(where, `${csize} compressed bytes at offset ${start}`, `${Math.max(0, n - start)} bytes left (truncated)`);
    const raw = bytes.subarray(start, start + csize);
    let data: Uint8Array;
    if (method === 0) {
      if (csize !== usize) throw new FormatError(where, `a stored member of ${usize} bytes`, `${csize} bytes`);
      data = raw;
    } else if (method === 8) {
      try {
        // maxOutputLength bounds memory by the declared size, so a zip bomb is refused, not inflated.
        data = inflateRawSync(raw, { maxOutputLength: Math.max(1, usize) });
      } catch (err) {
        throw new FormatError(
          where,
          `deflate data of ${usize} bytes`,
          `undecodable data (${err instanceof Error ? err.message : String(err)})`,
        );
      }
      if (data.length !== usize) throw new FormatError(where, `${usize} bytes after inflation`, `${data.length} bytes`);
    } else {
      throw new FormatError(where, "compression method 0 (stored) or 8 (deflate)", `method ${method}`);
    }
    const actualCrc = crc32(data);
    if (actualCrc !== crc)
      throw new FormatError(
        where,
        `CRC-32 ${crc.toString(16).padStart(8, "0")}`,
        `${actualCrc.toString(16).padStart(8, "0")} (corrupt data)`,
      );
    entries.push({ name, data });
    p += 46 + nameLen + extraLen + commentLen;
  }
  return entries;
}

/**
 * Writes a ZIP archive (no ZIP64: members and archive below 4 GiB, fewer than 65,535 members).
 * Timestamps are fixed at 1980-01-01 so identical inputs give identical bytes.
 * @throws ValueError when the archive would need ZIP64.
 */
export function writeZip(entries: readonly ZipEntry[], compress: boolean): Uint8Array {
  if (entries.length >= 0xffff) throw new ValueError("entries", "fewer than 65,535 members (ZIP64 is not written)", String(entries.length));
  const encoder = new TextEncoder();
  const parts: Uint8Array[] = [];
  const central: Uint8Array[] = [];
  let offset = 0;
  const DOS_DATE = (0 << 9) | (1 << 5) | 1; // 1980-01-01
  for (const entry of entries) {
    const name = encoder.encode(entry.name);
    const utf8 = /[^\x20-\x7e]/.test(entry.name);
    const crc = crc32(entry.data);
    const body = compress ? new Uint8Array(deflateRawSync(entry.data)) : entry.data;
    const method = compress ? 8 : 0;
    if (entry.data.length >= 0xffffffff || body.length >= 0xffffffff || offset >= 0xffffffff) {
      throw new ValueError(
        `entries[${JSON.stringify(entry.name)}]`,
        "members and archive below 4 GiB (ZIP64 is not written)",
        `${entry.data.length} bytes`,
      );
    }
    const local = new Uint8Array(30 + name.length);
    const lv = new DataView(local.buffer);
    lv.setUint32(0, SIG_LOCAL, true);
    lv.setUint16(4, 20, true);
    lv.setUint16(6, utf8 ? 0x800 : 0, true);
    lv.setUint16(8, method, true);
    lv.setUint16(10, 0, true);
    lv.setUint16(12, DOS_DATE, true);
    lv.setUint32(14, crc, true);
    lv.setUint32(18, body.length, true);
    lv.setUint32(22, entry.data.length, true);
    lv.setUint16(26, name.length, true);
    lv.setUint16(28, 0, true);
    local.set(name, 30);
    const cd = new Uint8Array(46 + name.length);
    const cv = new DataView(cd.buffer);
    cv.setUint32(0, SIG_CENTRAL, true);
    cv.setUint16(4, 20, true);
    cv.setUint16(6, 20, true);
    cv.setUint16(8, utf8 ? 0x800 : 0, true);
    cv.setUint16(10, method, true);
    cv.setUint16(12, 0, true);
    cv.setUint16(14, DOS_DATE, true);
    cv.setUint32(16, crc, true);
    cv.setUint32(20, body.length, true);
    cv.setUint32(24, entry.data.length, true);
    cv.setUint16(28, name.length, true);
    cv.setUint32(42, offset, true);
    cd.set(name, 46);
    parts.push(local, body);
    central.push(cd);
    offset += local.length + body.length;
  }
  const cdSize = central.reduce((a, c) => a + c.length, 0);
  if (offset + cdSize >= 0xffffffff)
    throw new ValueError("entries", "an archive below 4 GiB (ZIP64 is not written)", `${offset + cdSize} bytes`);
  const eocd = new Uint8Array(22);
  const ev = new DataView(eocd.buffer);
  ev.setUint32(0, SIG_EOCD, true);
  ev.setUint16(8, entries.length, true);
  ev.setUint16(10, entries.length, true);
  ev.setUint32(12, cdSize, true);
  ev.setUint32(16, offset, true);
  const out = new Uint8Array(offset + cdSize + 22);
  let at = 0;
  for (const part of [...parts, ...central, eocd]) {
    out.set(part, at);
    at += part.length;
  }
  return out;
}
