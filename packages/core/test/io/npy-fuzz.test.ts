import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { RandAttnError, encodeNpy, parseNpy, randomMatrix } from "@randattn/core";
import { encodeNpz, parseNpz } from "@randattn/core/node";
import { fixture } from "./helpers.js";

// Issue 6: whatever the bytes, parsing returns a consistent array or throws one of RandAttn's
// typed errors — never a RangeError/TypeError from deep inside, a hang or a silent NaN.
function outcome(parse: () => unknown): "ok" | "typed" {
  try {
    parse();
    return "ok";
  } catch (err) {
    if (err instanceof RandAttnError) return "typed";
    throw err;
  }
}

const seeds = [
  encodeNpy(randomMatrix(3, 4, {}, [1, "fuzz"])),
  encodeNpy(randomMatrix(2, 3, {}, [2, "fuzz"]), { dtype: "<f4", version: "2.0" }),
  fixture("fortran_f4_2x3x4.npy"),
  fixture("i8_2x2.npy"),
  fixture("v3_f8_2x2.npy"),
];
const zips = [
  encodeNpz({ a: randomMatrix(2, 2, {}, [3]) }),
  encodeNpz({ a: randomMatrix(4, 4, {}, [4]) }, { compress: true }),
  fixture("savez_compressed.npz"),
];

/** A corruption: cut the file, overwrite some bytes, or insert some. */
const mutation = fc.oneof(
  fc.record({ kind: fc.constant("truncate" as const), at: fc.nat() }),
  fc.record({ kind: fc.constant("overwrite" as const), at: fc.nat(), bytes: fc.uint8Array({ minLength: 1, maxLength: 8 }) }),
  fc.record({ kind: fc.constant("insert" as const), at: fc.nat(), bytes: fc.uint8Array({ minLength: 1, maxLength: 8 }) }),
);

type Mutation = { kind: "truncate" | "overwrite" | "insert"; at: number; bytes?: Uint8Array };

function mutate(src: Uint8Array, m: Mutation): Uint8Array {
  const at = m.at % (src.length + 1);
  if (m.kind === "truncate") return src.slice(0, at);
  const bytes = m.bytes as Uint8Array;
  if (m.kind === "overwrite") {
    const out = src.slice();
    for (let i = 0; i < bytes.length && at + i < out.length; i++) out[at + i] = bytes[i];
    return out;
  }
  const out = new Uint8Array(src.length + bytes.length);
  out.set(src.subarray(0, at));
  out.set(bytes, at);
  out.set(src.subarray(at), at + bytes.length);
  return out;
}

describe("fuzzed .npy / .npz bytes", () => {
  it("parseNpy: a consistent array or a typed error, for 1500 corruptions of valid files", () => {
    let typed = 0;
    fc.assert(
      fc.property(fc.nat({ max: seeds.length - 1 }), fc.array(mutation, { minLength: 1, maxLength: 3 }), (s, ms) => {
        let bytes = seeds[s];
        for (const m of ms) bytes = mutate(bytes, m);
        let parsed: ReturnType<typeof parseNpy> | undefined;
        const r = outcome(() => {
          parsed = parseNpy(bytes);
        });
        if (r === "typed") typed++;
        else if (parsed) {
          expect(parsed.data.length).toBe(parsed.shape.reduce((a, b) => a * b, 1));
          for (const v of parsed.data) expect(Number.isFinite(v)).toBe(true);
        }
      }),
      { numRuns: 1500, seed: 20260401 },
    );
    expect(typed).toBeGreaterThan(100);
  });

  it("parseNpz: a consistent archive or a typed error, for 500 corruptions", () => {
    fc.assert(
      fc.property(fc.nat({ max: zips.length - 1 }), fc.array(mutation, { minLength: 1, maxLength: 3 }), (s, ms) => {
        let bytes = zips[s];
        for (const m of ms) bytes = mutate(bytes, m);
        outcome(() => parseNpz(bytes));
      }),
      { numRuns: 500, seed: 20260402 },
    );
  });

  it("random bytes and random headers are refused with typed errors", () => {
    fc.assert(
      fc.property(fc.uint8Array({ maxLength: 300 }), (bytes) => {
        expect(outcome(() => parseNpy(bytes))).toBe("typed");
      }),
      { numRuns: 300, seed: 20260403 },
    );
    fc.assert(
      fc.property(fc.string({ maxLength: 120 }), (header) => {
        const text = header + "\n";
        const out = new Uint8Array(10 + text.length * 3 + 8);
        out.set([0x93, 0x4e, 0x55, 0x4d, 0x50, 0x59, 1, 0]);
        const enc = new TextEncoder().encode(text);
        out.set(enc, 10);
        new DataView(out.buffer).setUint16(8, enc.length, true);
        outcome(() => parseNpy(out.subarray(0, 10 + enc.length + 8)));
      }),
      { numRuns: 300, seed: 20260404 },
    );
  });
});
