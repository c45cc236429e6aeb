/** Canonical JSON (sorted keys, no whitespace) and hashing: the identity of configs and cells. */
import { sha256 as sha256Digest } from "@noble/hashes/sha2.js";
import { bytesToHex, utf8ToBytes } from "@noble/hashes/utils.js";
import { ValueError } from "@randattn/core";

/**
 * JSON with object keys sorted recursively, so two configs that differ only in key order,
 * whitespace or comments have the same text (and hash). Numbers use JSON's shortest round-trip form.
 * @throws ValueError on non-finite numbers or non-JSON values.
 */
export function canonicalJson(value: unknown, argument = "value"): string {
  if (value === null || typeof value === "boolean" || typeof value === "string") return JSON.stringify(value);
  if (typeof value === "number") {
    if (!Number.isFinite(value)) throw new ValueError(argument, "a finite number", String(value));
    return JSON.stringify(value === 0 ? 0 : value);
  }
  if (Array.isArray(value)) return `[${value.map((v, i) => canonicalJson(v, `${argument}[${i}]`)).join(",")}]`;
  if (typeof value === "object") {
    const keys = Object.keys(value as object)
      .filter((k) => (value as Record<string, unknown>)[k] !== undefined)
      .sort();
    return `{${keys.map((k) => `${JSON.stringify(k)}:${canonicalJson((value as Record<string, unknown>)[k], `${argument}.${k}`)}`).join(",")}}`;
  }
  throw new ValueError(argument, "a JSON value", typeof value);
}

/**
 * Hex sha256 of a string (UTF-8) or bytes. Pure JavaScript (@noble/hashes), synchronous in every
 * runtime, so cell ids are the same in Node and in a browser (WebCrypto's digest is async only).
 */
export function sha256(data: string | Uint8Array): string {
  return bytesToHex(sha256Digest(typeof data === "string" ? utf8ToBytes(data) : data));
}
