/**
 * The `rowShift: "bound"` driver's O(N·d) passes in WebAssembly (kernels/watBounds.ts, issue 14,
 * stop 42) against the JavaScript loops they replaced, bit for bit: the key norms and per-column
 * maxima of K (`key_panel_norms_*`, over the driver's panels), and the scaled query rows with their
 * row-shift bounds (`scale_rows_bounds`). The references below are those loops as they stood in
 * softmaxWasm.ts; a NaN input gives NaN (every row then takes the row max), as there.
 */
import { Matrix, attention, randomMatrix } from "@randattn/core";
import { KernelArena, fusedSoftmaxAttention, packPanels } from "@randattn/core/internal";
import seedrandom from "seedrandom";
import { describe, expect, it } from "vitest";

const rng = seedrandom("bound-passes");
const gauss = (n: number, s = 1) => Float64Array.from({ length: n }, () => s * (rng() + rng() + rng() - 1.5));
const arena = new KernelArena();
const k = arena.k;
const bits = (a: ArrayLike<number>) => Array.from(a, (x) => (Object.is(x, -0) ? "-0" : String(x)));

/** The former loop: max_j ‖k_j‖² (before its square root) and max_j |k_jp|, of K as the product reads it. */
function keyNormsJs(K: Float64Array, n: number, d: number, f32: boolean): { sq: number; kAbs: Float64Array } {
  const kAbs = new Float64Array(d);
  let kNorm = 0;
  for (let j = 0; j < n; j++) {
    let sq = 0;
    for (let p = 0, o = j * d; p < d; p++) {
      const x = f32 ? Math.fround(K[o + p]) : K[o + p];
      sq += x * x;
      const a = Math.abs(x);
      if (a > kAbs[p] || Number.isNaN(a)) kAbs[p] = a;
    }
    if (sq > kNorm || Number.isNaN(sq)) kNorm = sq;
  }
  return { sq: kNorm, kAbs };
}

/** The former copyScaledQueries + rowShiftBounds + whole-unit rounding of one query block. */
function boundsJs(
  Q: Float64Array,
  ld: number,
  rows: number,
  d: number,
  factor: number,
  f32: boolean,
  kAbs: Float64Array,
  kNorm: number,
  slack: number,
  maxShift: number,
): { qs: Float64Array | Float32Array; m: Float64Array } {
  const qs = f32 ? new Float32Array(rows * d) : new Float64Array(rows * d);
  for (let r = 0; r < rows; r++) for (let p = 0; p < d; p++) qs[r * d + p] = Q[r * ld + p] * factor;
  const m = new Float64Array(rows);
  for (let r = 0; r < rows; r++) {
    let sq = 0;
    let b2 = 0;
    for (let p = 0; p < d; p++) {
      const x = qs[r * d + p];
      sq += x * x;
      b2 += Math.abs(x) * kAbs[p];
    }
    const b = Math.min(Math.sqrt(sq) * kNorm, b2) * slack;
    m[r] = b <= maxShift ? Math.ceil(b) : 0;
  }
  return { qs, m };
}

describe("key_panel_norms_f64 / _f32: the former K loop over the driver's key panels", () => {
  it.each([false, true])("gives its max ‖k_j‖² and max_j |k_jp| bit for bit (float32 %s), partial panels included", (f32) => {
    const NR = f32 ? 8 : 4;
    const es = f32 ? 4 : 8;
    for (const [n, d] of [
      [1, 1],
      [5, 3],
      [13, 16],
      [64, 64],
      [67, 48],
    ]) {
      const K = gauss(n * d, 3);
      K[0] = -K[0]; // a sign flip: |x| is what counts
      if (n * d > 4) K[n * d - 2] = 1e200; // overflowing square: sq = +∞ for that key
      const panels = Math.ceil(n / NR);
      const [P, A] = arena.frame([panels * NR * d * es, 16 * d]);
      const mem = f32 ? k.f32 : k.f64;
      mem.fill(0, P / es, P / es + panels * NR * d);
      packPanels(K, mem, P / es, n, d, NR, true);
      const got = f32 ? k.key_panel_norms_f32(P, panels, d, A) : k.key_panel_norms_f64(P, panels, d, A);
      const ref = keyNormsJs(K, n, d, f32);
      expect(bits([got])).toEqual(bits([ref.sq]));
      expect(bits(k.f64.subarray(A / 8, A / 8 + d))).toEqual(bits(ref.kAbs));
      // A NaN anywhere: NaN, which sends every row to the row max, as the loop's NaN bound did.
      mem[P / es + ((n - 1) % NR) + NR * (d - 1) + Math.floor((n - 1) / NR) * NR * d] = Number.NaN;
      const nan = f32 ? k.key_panel_norms_f32(P, panels, d, A) : k.key_panel_norms_f64(P, panels, d, A);
      expect(nan).toBeNaN();
    }
  });
});

describe("scale_rows_bounds: the former scaled query copy and row bounds", () => {
  it.each([false, true])("writes the same query block and the same shifts, bit for bit (float32 %s)", (f32) => {
    const d = 24;
    const es = f32 ? 4 : 8;
    const kAbs = Float64Array.from(gauss(d, 2), Math.abs);
    const kNorm = 7.25;
    const slack = 1 + (d + 4) * (f32 ? 2 ** -22 : 2 ** -51);
    // 1…9 rows: every tail of the four-row step; strided rows (ld > d).
    for (const rows of [1, 2, 3, 4, 5, 6, 7, 8, 9, 37]) {
      const ld = d + 3;
      const Q = gauss((rows - 1) * ld + d, 4);
      const factor = f32 ? Math.LOG2E / 5 : 2048 / Math.LN2 / 5;
      const maxShift = f32 ? 62 : 1024 * (2048 / Math.LN2);
      const ref = boundsJs(Q, ld, rows, d, factor, f32, kAbs, kNorm, slack, maxShift);
      const [S, D, KA, M] = arena.frame([Q.length * 8, rows * d * es, d * 8, rows * 8]);
      k.f64.set(Q, S / 8);
      k.f64.set(kAbs, KA / 8);
      k.scale_rows_bounds(S, ld, rows, d, factor, D, f32 ? 1 : 0, KA, kNorm, slack, maxShift, M);
      const mem = f32 ? k.f32 : k.f64;
      expect(bits(mem.subarray(D / es, D / es + rows * d))).toEqual(bits(ref.qs));
      expect(bits(k.f64.subarray(M / 8, M / 8 + rows))).toEqual(bits(ref.m));
      expect(ref.m.some((m) => m > 0)).toBe(true); // the comparison is not of zeros only
    }
  });

  it("gives 0 past maxshift and for a NaN row, ⌈m⌉ at and below it", () => {
    const d = 4;
    const rows = 3;
    const Q = Float64Array.from([1, 1, 1, 1, 1, 1, 1, 1, Number.NaN, 1, 1, 1]);
    const kAbs = Float64Array.from([1, 1, 1, 1]);
    const [S, D, KA, M] = arena.frame([Q.length * 8, rows * d * 8, d * 8, rows * 8]);
    k.f64.set(Q, S / 8);
    k.f64.set(kAbs, KA / 8);
    // m = min(√4·1, 4)·1 = 2 for the finite rows; maxshift 2 keeps them, 1.9 drops them.
    k.scale_rows_bounds(S, d, rows, d, 1, D, 0, KA, 1, 1, 2, M);
    expect(Array.from(k.f64.subarray(M / 8, M / 8 + rows))).toEqual([2, 2, 0]);
    k.scale_rows_bounds(S, d, rows, d, 1, D, 0, KA, 1, 1, 1.9, M);
    expect(Array.from(k.f64.subarray(M / 8, M / 8 + rows))).toEqual([0, 0, 0]);
  });
});

describe("the bound form's Y out (rows_normalize_out, then one copy)", () => {
  it.each(["float64", "float32"] as const)("writes a strided output as the contiguous one, bit for bit (%s)", (precision) => {
    const [nQ, nKV, d, dV] = [300, 257, 32, 20];
    const q = randomMatrix(nQ, d, {}, [42, "bound-out", "q"]);
    const kk = randomMatrix(nKV, d, {}, [42, "bound-out", "k"]);
    const v = randomMatrix(nKV, dV, {}, [42, "bound-out", "v"]);
    const ref = attention(q, kk, v, { precision });
    const ldOut = dV + 5;
    const out = new Float64Array((nQ - 1) * ldOut + dV).fill(-1);
    const st = fusedSoftmaxAttention({
      queries: q.data,
      keys: kk.data,
      values: v.data,
      nQ,
      nKV,
      d,
      dV,
      scale: 1 / Math.sqrt(d),
      out,
      outStride: ldOut,
      precision,
    });
    expect(st).not.toBeNull();
    const rows = Array.from({ length: nQ }, (_, i) => out.subarray(i * ldOut, i * ldOut + dV));
    expect(bits(new Matrix(nQ, dV, Float64Array.from(rows.flatMap((r) => Array.from(r)))).data)).toEqual(bits(ref.data));
    // The gaps between rows are untouched.
    for (let i = 0; i + 1 < nQ; i++) expect(Array.from(out.subarray(i * ldOut + dV, (i + 1) * ldOut))).toEqual([-1, -1, -1, -1, -1]);
  });
});

describe("attention's float32 path: finiteness and the range decision from one scan of the maxima", () => {
  const q = randomMatrix(40, 16, {}, [7, "f32-maxima", "q"]);
  const kk = randomMatrix(50, 16, {}, [7, "f32-maxima", "k"]);
  const v = randomMatrix(50, 8, {}, [7, "f32-maxima", "v"]);

  it("names the first non-finite entry of each operand, as the float64 path does", () => {
    const cases: [Matrix, Matrix, Matrix, RegExp][] = [];
    const bq = q.clone();
    bq.data[1 * 16 + 1] = Number.NaN;
    bq.data[5 * 16 + 2] = Number.POSITIVE_INFINITY;
    cases.push([bq, kk, v, /queries: expected finite entries, got NaN at \[1, 1\]/]);
    const bk = kk.clone();
    bk.data[2 * 16] = Number.NEGATIVE_INFINITY;
    cases.push([q, bk, v, /keys: expected finite entries, got -Infinity at \[2, 0\]/]);
    const bv = v.clone();
    bv.data[49 * 8 + 7] = Number.POSITIVE_INFINITY;
    cases.push([q, kk, bv, /values: expected finite entries, got Infinity at \[49, 7\]/]);
    for (const [a, b, c, message] of cases) {
      expect(() => attention(a, b, c, { precision: "float32" })).toThrow(message);
      expect(() => attention(a, b, c)).toThrow(message);
    }
  });

  it("computes in float64 when an operand's maximum is beyond float32's safe range, and in float32 otherwise", () => {
    const big = v.clone();
    for (let i = 0; i < big.data.length; i++) big.data[i] *= 1e30; // max |V| > 2⁶⁰
    expect(bits(attention(q, kk, big, { precision: "float32" }).data)).toEqual(bits(attention(q, kk, big).data));
    const y32 = attention(q, kk, v, { precision: "float32" });
    const y64 = attention(q, kk, v);
    expect(bits(y32.data)).not.toEqual(bits(y64.data)); // float32 did run
    // … and equals the driver deciding the range by its own scan of Q, K and V.
    const out = new Float64Array(40 * 8);
    fusedSoftmaxAttention({
      queries: q.data,
      keys: kk.data,
      values: v.data,
      nQ: 40,
      nKV: 50,
      d: 16,
      dV: 8,
      scale: 0.25,
      out,
      precision: "float32",
    });
    expect(bits(y32.data)).toEqual(bits(out));
  });
});
