import { randomMatrix, streamFor, wasmSimdAvailable } from "@randattn/core";
import { fusedSoftmaxAttention, kernelWat, simdExpScaled, simdShiftRowsExp } from "@randattn/core/internal";
import { describe, expect, it } from "vitest";

// The `rowShift: "bound"` form of the fused driver (softmaxWasm.ts) and its exp pass
// (`softmax_shift_rows_f64`, wat.ts): logits in units of ln2/2048 (y = x·2048/ln 2), shifted by an
// upper bound of the row known before the scores, w = 2^((y − m)/2048).

const Y = 2048 / Math.LN2;
/** ln2/2048 as a double-double (hi = fl(ln2/2048); lo from ln 2's second word, 2.3190468138462996e-17). */
const LHI = Math.LN2 / 2048;
const LLO = (2.3190468138462996e-17 + (Math.LN2 - 2048 * LHI)) / 2048;

/** ulp of a positive float64 y (subnormal spacing below 2⁻¹⁰²²). */
function ulp(y: number): number {
  if (y < 2 ** -1022) return 2 ** -1074;
  return 2 ** (Math.floor(Math.log2(y)) - 52);
}

/** Dekker's exact product (Veltkamp split). */
function twoProd(a: number, b: number): [number, number] {
  const p = a * b;
  const sp = (x: number) => {
    const c = 134217729 * x;
    const h = c - (c - x);
    return [h, x - h];
  };
  const [ah, al] = sp(a);
  const [bh, bl] = sp(b);
  return [p, ah * bh - p + ah * bl + al * bh + al * bl];
}

/**
 * Distance in ulps of w from 2^(y/2048) = e^z, z = y·ln2/2048 in double-double (z_hi + z_lo): the
 * reference is Math.exp(z_hi)·(1 + z_lo) (|z_lo| ≤ 2⁻⁴³), its only error Math.exp's (< 1 ulp); the
 * difference w − Math.exp(z_hi) is exact (Sterbenz), so only that error enters.
 */
function ulpsFromExact(w: number, y: number): number {
  const [p, e] = twoProd(y, LHI);
  const zlo = e + y * LLO;
  const E = Math.exp(p);
  const ref = E + E * zlo;
  if (w === ref) return 0;
  if (!Number.isFinite(ref) || ref === 0 || !Number.isFinite(w)) return Number.POSITIVE_INFINITY;
  return Math.abs(w - E - E * zlo) / ulp(ref);
}

function maxUlps(ys: Float64Array): number {
  const w = simdExpScaled(ys);
  let worst = 0;
  for (let i = 0; i < ys.length; i++) worst = Math.max(worst, ulpsFromExact(w[i], ys[i]));
  return worst;
}

describe("the exp of the bound form: 2^(y/2048) with y = x·2048/ln 2", () => {
  it("runs on WebAssembly SIMD here", () => {
    expect(wasmSimdAvailable()).toBe(true);
  });

  it("is within 2 ulp of the exact value over softmax's range [−745, 0] (grid, random, near 0) and [−750, 708.9]", () => {
    // The analysis: ≤ 1.17 ulp from the exact value (as `expInline`, the reduction adds < 0.001).
    // Dropping the y − k step, the polynomial's r³ term or a table entry each give ≥ 2 ulp here.
    const grid = Float64Array.from({ length: 200_001 }, (_, i) => (-745 * Y * i) / 200_000);
    const s = streamFor(14, "simd-exp-scaled", "uniform");
    const random = Float64Array.from({ length: 100_000 }, () => -745 * Y * s.uniform());
    const small = Float64Array.from({ length: 50_000 }, () => -Math.exp(-20 * s.uniform()) * Y);
    const wide = Float64Array.from({ length: 100_003 }, (_, i) => (-750 + (1458.9 * i) / 100_002) * Y + 1e-3 * Math.sin(i));
    for (const ys of [grid, random, small, wide]) expect(maxUlps(ys)).toBeLessThanOrEqual(2);
  });

  it("is exact at integer powers of two, handles the special values and rounds subnormals once", () => {
    // (Its inputs are y − m ≤ 0 in the driver: only the lower end of the fast path is checked, so
    // arguments above 708.99·2048/ln 2 are outside its contract.)
    const ys = Float64Array.from([0, -2048, 2048, -2048 * 1022, -2048 * 1074, -Infinity, Number.NaN, -1080 * 2048, -0, 2048 * 1023]);
    const w = simdExpScaled(ys);
    expect(Array.from(w.subarray(0, 5))).toEqual([1, 0.5, 2, 2 ** -1022, 2 ** -1074]);
    expect(w[5]).toBe(0);
    expect(w[6]).toBeNaN();
    expect(w[7]).toBe(0);
    expect(w[8]).toBe(1);
    expect(w[9]).toBe(2 ** 1023);
    // Subnormal results (x ∈ [−745, −708]) within 2 of the subnormal spacing of the exact value.
    const sub = Float64Array.from({ length: 20_001 }, (_, i) => (-708 - (37 * i) / 20_000) * Y);
    expect(maxUlps(sub)).toBeLessThanOrEqual(2);
  });

  it("folds the polynomial's coefficients exactly as stated: c2·c², c3·c³ with c = fl(ln2/2048)", () => {
    // The Horner form in u = s − round(s) (wat.ts `expPolyTable`) uses fl(fl(c2·c)·c) and
    // fl(fl(fl(c3·c)·c)·c); a stale or mistyped literal would shift every result by its error.
    const wat = kernelWat();
    const hex = (lit: string) => {
      const m = /^0x1\.([0-9a-f]{13})p(-?\d+)$/.exec(lit);
      if (!m) throw new Error(lit);
      return (1 + Number.parseInt(m[1], 16) / 2 ** 52) * 2 ** Number(m[2]);
    };
    const c = hex("0x1.62e42fefa39efp-12");
    expect(c).toBe(Math.LN2 / 2048);
    const c2 = hex("0x1.000000051ff50p-1");
    const c3 = hex("0x1.555555596ee62p-3");
    for (const lit of [
      "0x1.62e42fefa39efp-12",
      "0x1.000000051ff50p-1",
      "0x1.555555596ee62p-3",
      "0x1.ebfbe00205ae9p-25",
      "0x1.c6b08d75c02bep-38",
    ]) {
      expect(wat.includes(`f64x2 ${lit} ${lit}`)).toBe(true);
    }
    expect(hex("0x1.ebfbe00205ae9p-25")).toBe(c2 * c * c);
    expect(hex("0x1.c6b08d75c02bep-38")).toBe(c3 * c * c * c);
  });

  it("gives the same bits on the fast path and on the clamped path (a group of 8 with one lane out of range)", () => {
    const s = streamFor(14, "simd-exp-scaled", "paths");
    // Most in softmax's range, an eighth around the fast path's lower end −668.84 nats (−707 … −600) on near-integers
    // (tiny u: 2^e·hi·p underflows there on the fast path, wat.ts EXP_FAST_LO).
    const ys = Float64Array.from({ length: 8 * 4096 }, (_, i) =>
      i % 8 === 7 ? Math.round(-(600 + 107 * s.uniform()) * Y) + (s.uniform() - 0.5) * 2 ** -(i % 40) : -40 * Y * s.uniform(),
    );
    const fast = simdExpScaled(ys);
    const mixed = ys.slice();
    for (let i = 3; i < mixed.length; i += 8) mixed[i] = i % 16 === 3 ? Number.NEGATIVE_INFINITY : -720 * Y;
    const slow = simdExpScaled(mixed);
    let same = true;
    for (let i = 0; i < ys.length; i++) if (i % 8 !== 3 && !Object.is(fast[i], slow[i])) same = false;
    expect(same).toBe(true);
    expect(slow[3]).toBe(0);
    expect(slow[11]).toBeGreaterThan(0); // e^−720, subnormal
  });
});

describe("the check-free loop of the exp pass (rows whose caller promises |s| ≤ m, m ≤ 334.1 nats)", () => {
  // softmax_shift_rows_f64 with sym = 1 skips the per-group range test on rows with m ≤ 987000
  // (units of ln2/2048): there s − m ∈ [−2m, 0] lies inside the fast range (wat.ts SHIFT_CHECK_FREE_MAX).
  const ms = [0, 1, 2048, Math.ceil(30 * Y), Math.ceil(300 * Y), 986999, 987000, 987001, 1500000];
  const cols = 1003; // 8-wide loop, a pair and the odd one
  const s = streamFor(14, "check-free", "s");
  const S = new Float64Array(ms.length * cols);
  ms.forEach((m, r) => {
    const row = S.subarray(r * cols, (r + 1) * cols);
    for (let c = 0; c < cols; c++) row[c] = m * (2 * s.uniform() - 1);
    // The ends of the promise, half-integers (rounding ties) and near-integers with tiny u.
    row.set([-m, m, -m + 0.5, 0.5 - m, -Math.round(m / 3) + 2 ** -30, Math.round(m / 7) - 2 ** -40, 0, -0], 0);
    for (let c = 8; c < 24; c++) row[c] = Math.max(-m, Math.round(row[c]) + (c % 2 === 0 ? 0.5 : 2 ** -(c + 10)));
  });
  const M = Float64Array.from(ms);

  it("gives the same bits and row sums as the checked loop over the whole promised range [−m, m]", () => {
    const free = simdShiftRowsExp(S, ms.length, cols, M, true);
    const checked = simdShiftRowsExp(S, ms.length, cols, M, false);
    let same = 0;
    for (let i = 0; i < S.length; i++) if (Object.is(free.weights[i], checked.weights[i])) same++;
    expect(same).toBe(S.length);
    expect(Array.from(free.sums)).toEqual(Array.from(checked.sums));
    // Not vacuous: the extreme s = −m of the largest check-free row is e^−668, still normal.
    expect(free.weights[6 * cols]).toBeGreaterThan(2 ** -1022);
    expect(free.weights[6 * cols]).toBeLessThan(2 ** -960);
  });

  it("runs only under the promise and up to 334.1 nats (a −∞ logit, outside the promise, reads NaN there)", () => {
    // −∞ is no |s| ≤ m: the check-free loop computes NaN for it where the checked loop gives 0 —
    // which shows which loop ran each row.
    const rows = [1000, 987000, 987001];
    const T = new Float64Array(rows.length * 16);
    for (let i = 0; i < T.length; i++) T[i] = -(i % 13) * 100;
    for (let r = 0; r < rows.length; r++) T[r * 16 + 5] = Number.NEGATIVE_INFINITY;
    const free = simdShiftRowsExp(T, rows.length, 16, Float64Array.from(rows), true);
    const checked = simdShiftRowsExp(T, rows.length, 16, Float64Array.from(rows), false);
    expect(free.weights[5]).toBeNaN();
    expect(free.weights[16 + 5]).toBeNaN();
    expect(free.weights[32 + 5]).toBe(0);
    for (const r of [0, 1, 2]) expect(checked.weights[r * 16 + 5]).toBe(0);
  });
});

/** Literal softmax attention in float64 (row max, exp, sum), for the comparison below. */
function literal(q: Float64Array, k: Float64Array, v: Float64Array, nQ: number, nKV: number, d: number, dV: number, scale: number) {
  const y = new Float64Array(nQ * dV);
  const s = new Float64Array(nKV);
  for (let i = 0; i < nQ; i++) {
    let m = Number.NEGATIVE_INFINITY;
    for (let j = 0; j < nKV; j++) {
      let t = 0;
      for (let p = 0; p < d; p++) t += q[i * d + p] * k[j * d + p];
      s[j] = t * scale;
      if (s[j] > m) m = s[j];
    }
    let l = 0;
    for (let j = 0; j < nKV; j++) l += s[j] = Math.exp(s[j] - m);
    for (let j = 0; j < nKV; j++) for (let c = 0; c < dV; c++) y[i * dV + c] += (s[j] / l) * v[j * dV + c];
  }
  return y;
}

function run(
  q: Float64Array,
  k: Float64Array,
  v: Float64Array,
  nQ: number,
  nKV: number,
  d: number,
  dV: number,
  scale: number,
  rowShift: "max" | "bound",
  queryBlock?: number,
) {
  const out = new Float64Array(nQ * dV);
  const st = fusedSoftmaxAttention({ queries: q, keys: k, values: v, nQ, nKV, d, dV, scale, out, rowShift, queryBlock });
  if (st === null) throw new Error("fused path declined");
  return { out, ...st };
}

describe('fusedSoftmaxAttention with rowShift "bound" (the default for float64, materialized, unmasked)', () => {
  const nQ = 70;
  const nKV = 1100; // two chunks of 512 keys and a partial one, not a multiple of 4
  const d = 24;
  const dV = 10;
  const scale = 1 / Math.sqrt(d);
  const q = randomMatrix(nQ, d, {}, [14, "bound", "q"]).data;
  const k = randomMatrix(nKV, d, {}, [14, "bound", "k"]).data;
  const v = randomMatrix(nKV, dV, {}, [14, "bound", "v"]).data;

  it("equals the literal formula to 1e-13 and the row-max form's log-sum-exp to 1e-14, with m ≥ max and l in [2⁻²⁰⁰, N]", () => {
    const b = run(q, k, v, nQ, nKV, d, dV, scale, "bound");
    const m = run(q, k, v, nQ, nKV, d, dV, scale, "max");
    const ref = literal(q, k, v, nQ, nKV, d, dV, scale);
    let err = 0;
    let norm = 0;
    for (let i = 0; i < ref.length; i++) {
      err = Math.max(err, Math.abs(b.out[i] - ref[i]));
      norm = Math.max(norm, Math.abs(ref[i]));
    }
    expect(err / norm).toBeLessThan(1e-13);
    let lse = 0;
    for (let i = 0; i < nQ; i++) {
      lse = Math.max(lse, Math.abs(Math.log(b.normalizer[i]) + b.rowMax[i] - (Math.log(m.normalizer[i]) + m.rowMax[i])));
      expect(b.rowMax[i]).toBeGreaterThanOrEqual(m.rowMax[i]);
      expect(b.normalizer[i]).toBeGreaterThanOrEqual(2 ** -200);
      expect(b.normalizer[i]).toBeLessThanOrEqual(nKV);
    }
    expect(lse).toBeLessThan(1e-14);
    // The bound is a real shift, not the max (else this test would not exercise the form).
    expect(b.rowMax.some((x, i) => x > m.rowMax[i] + 1)).toBe(true);
  });

  it("gives each row the same bits whatever the query blocking (attentionParallel's row splits)", () => {
    const a = run(q, k, v, nQ, nKV, d, dV, scale, "bound");
    const b = run(q, k, v, nQ, nKV, d, dV, scale, "bound", 5);
    const rows = [17, 18, 19, 40];
    const sub = new Float64Array(rows.length * d);
    for (const [t, r] of rows.entries()) sub.set(q.subarray(r * d, (r + 1) * d), t * d);
    const c = run(sub, k, v, rows.length, nKV, d, dV, scale, "bound");
    expect(a.out.every((x, i) => Object.is(x, b.out[i]))).toBe(true);
    expect(a.normalizer.every((x, i) => Object.is(x, b.normalizer[i]))).toBe(true);
    rows.forEach((r, t) => {
      for (let cc = 0; cc < dV; cc++) expect(Object.is(c.out[t * dV + cc], a.out[r * dV + cc])).toBe(true);
    });
  });

  it("serves rows whose smallest logit is −m (check-free loop) and rows above 334 nats (checked loop) as the formula says", () => {
    // Row r: q = (a_r, 0) against keys ±(b, 0) and small ones, so the logits reach both ends ±ab of
    // the bound (Cauchy–Schwarz and the coordinate bound are both ab): s − m ≈ −2ab at the key −(b, 0).
    const dd = 2;
    const keys = new Float64Array(2 * 300);
    keys.set([20, 0, -20, 0]);
    const s = streamFor(14, "bound", "ends");
    for (let j = 2; j < 300; j++) keys.set([s.uniform() - 0.5, s.uniform() - 0.5], 2 * j);
    const vals = randomMatrix(300, 3, {}, [14, "bound", "ev"]).data;
    // ab = 100, 330 (check-free: bound ≤ 334.1 nats), 340 and 600 nats (checked; e^−2ab underflows).
    const qs = Float64Array.from([5, 0, 16.5, 0, 17, 0, 30, 0]);
    const b = run(qs, keys, vals, 4, 300, dd, 3, 1, "bound");
    const m = run(qs, keys, vals, 4, 300, dd, 3, 1, "max");
    const ref = literal(qs, keys, vals, 4, 300, dd, 3, 1);
    for (let i = 0; i < 12; i++) expect(Math.abs(b.out[i] - ref[i])).toBeLessThan(1e-13);
    for (let i = 0; i < 4; i++) {
      expect(b.rowMax[i]).toBeGreaterThan(m.rowMax[i]); // served by the bound form, not recomputed
      expect(Math.abs(Math.log(b.normalizer[i]) + b.rowMax[i] - (Math.log(m.normalizer[i]) + m.rowMax[i]))).toBeLessThan(1e-13);
    }
  });

  it("recomputes with the row max, bit for bit, a row whose bound is far above its max or above 1024", () => {
    // Row 0: q = (10, 10) against keys (50, −50), (−50, 50), (0.1, 0.1), …: both bounds are ≈ 1000
    // while the max logit is 2, so l ≈ e^−998 < 2⁻²⁰⁰. Row 1: logits near 1e4 (bound > 1024).
    // Row 2: an ordinary row, which stays on the bound form.
    const dd = 2;
    const keys = new Float64Array(2 * 600);
    keys.set([50, -50, -50, 50, 0.1, 0.1]);
    const s = streamFor(14, "bound", "fallback");
    for (let j = 3; j < 600; j++) keys.set([0.1 * (s.uniform() - 0.5), 0.1 * (s.uniform() - 0.5)], 2 * j);
    const vals = randomMatrix(600, 3, {}, [14, "bound", "fv"]).data;
    const qs = Float64Array.from([10, 10, 100, 1, 0.3, -0.2]);
    const b = run(qs, keys, vals, 3, 600, dd, 3, 1, "bound");
    const m = run(qs, keys, vals, 3, 600, dd, 3, 1, "max");
    for (const i of [0, 1]) {
      expect(b.rowMax[i]).toBe(m.rowMax[i]);
      expect(b.normalizer[i]).toBe(m.normalizer[i]);
      for (let c = 0; c < 3; c++) expect(Object.is(b.out[i * 3 + c], m.out[i * 3 + c])).toBe(true);
    }
    expect(b.rowMax[0]).toBeCloseTo(2, 12);
    expect(b.rowMax[2]).toBeGreaterThan(m.rowMax[2]); // the bound form served row 2
    const ref = literal(qs, keys, vals, 3, 600, dd, 3, 1);
    for (let i = 0; i < 9; i++) expect(Math.abs(b.out[i] - ref[i])).toBeLessThan(1e-13);
  });
});
