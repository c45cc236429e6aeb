import { Matrix, attention, float32AttentionErrorBound, randomMatrix, streamFor } from "@randattn/core";
import { attentionParallel, closeAttentionWorkers } from "@randattn/core/node";
import { fusedSoftmaxAttention, simdShiftRowsExp } from "@randattn/core/internal";
import { afterAll, describe, expect, it } from "vitest";

// The float32 `rowShift: "bound"` form (stop 20): the fused driver's float32 materialized, unmasked
// path shifts each row by an integer upper bound M of its logits (in units of ln 2) and
// exponentiates with `softmax_shift_rows_f32` (wat.ts): w = 2^(s − M) with no range test, valid
// for |s| ≤ M ≤ 62 (every weight then a normal float32). Tolerances: the kernel's 2^f is within
// 1.20 ulp of float32 (its degree-6 fit: 0.017 ulp; the rest the float32 Horner's roundings; the
// scaling by 2^(n − M) is exact), so 1.5 ulp here; attention results within the a-priori
// `float32AttentionErrorBound`, as the row-max form.

afterAll(() => closeAttentionWorkers());

/** ulp of a positive normal float32 y. */
const ulp32 = (y: number) => 2 ** (Math.floor(Math.log2(y)) - 23);

/** Float32 logits of one row with |s| ≤ M: uniform in [−M, M], plus ±M, integers and half-integers (the rounding's ties). */
function rowLogits(M: number, cols: number, rng: { uniform(): number }): Float32Array {
  const s = new Float32Array(cols);
  const special = [M, -M, 0, 0.5, -0.5, Math.floor(M / 2) + 0.5, -Math.floor(M / 2) - 0.5, 1, -1];
  for (let c = 0; c < cols; c++) {
    s[c] = c < special.length ? Math.max(-M, Math.min(M, special[c])) : Math.fround((2 * rng.uniform() - 1) * M);
    if (Math.abs(s[c]) > M) s[c] = Math.sign(s[c]) * M; // fround may round just past M
  }
  return s;
}

describe("softmax_shift_rows_f32: w = 2^(s − M) in float32, l += Σ w in float64", () => {
  const shifts = [0, 1, 2, 5, 13, 30, 61, 62];

  it("is within 1.5 ulp of float32 from 2^(s − M) for every shift 0…62 and every column position (16s, 4s, singles)", () => {
    const rng = streamFor(20, "shift32", "kernel");
    let worst = 0;
    let n = 0;
    for (const cols of [1000, 37, 3]) {
      const rows = shifts.length;
      const s = new Float32Array(rows * cols);
      const m = new Float64Array(rows);
      for (let r = 0; r < rows; r++) {
        m[r] = shifts[r];
        s.set(rowLogits(shifts[r], cols, rng), r * cols);
      }
      const { weights } = simdShiftRowsExp(s, rows, cols, m);
      for (let r = 0; r < rows; r++) {
        for (let c = 0; c < cols; c++) {
          const ref = 2 ** (s[r * cols + c] - m[r]); // exact argument; Math.pow's error ≪ a float32 ulp
          const w = weights[r * cols + c];
          expect(w).toBeGreaterThanOrEqual(2 ** -125); // normal: no subnormal, no flush
          worst = Math.max(worst, Math.abs(w - ref) / ulp32(ref));
          n++;
        }
      }
    }
    console.log(`softmax_shift_rows_f32: max ${worst.toFixed(3)} ulp of float32 from 2^(s − M) over ${n} weights`);
    expect(worst).toBeLessThanOrEqual(1.5);
    expect(worst).toBeGreaterThan(0); // the reference is not trivially the same computation
  });

  it("gives a logit the same bits wherever it sits in a row (a 16-group, a 4-group, the single tail)", () => {
    const rng = streamFor(20, "shift32", "position");
    const cols = 16 + 4 + 3;
    const vals = rowLogits(13, 64, rng);
    for (let t = 0; t < 40; t++) {
      const x = vals[t];
      const s = new Float32Array(cols).fill(0);
      s[0] = x; // 16-group
      s[17] = x; // 4-group
      s[cols - 1] = x; // single column
      const { weights } = simdShiftRowsExp(s, 1, cols, new Float64Array([13]));
      expect(weights[17]).toBe(weights[0]);
      expect(weights[cols - 1]).toBe(weights[0]);
    }
  });

  it("adds the row's weights to l: pairs of weight vectors in float32 (≤ 2⁻²⁴ relative each), the rest in float64", () => {
    const rng = streamFor(20, "shift32", "sums");
    const rows = 3;
    const cols = 203;
    const s = new Float32Array(rows * cols);
    for (let r = 0; r < rows; r++) s.set(rowLogits(9, cols, rng), r * cols);
    const m = new Float64Array([9, 9, 9]);
    const { weights, sums } = simdShiftRowsExp(s, rows, cols, m);
    for (let r = 0; r < rows; r++) {
      let sum = 0;
      for (let c = 0; c < cols; c++) sum += weights[r * cols + c];
      expect(Math.abs(sums[r] - sum)).toBeLessThanOrEqual((2 ** -24 + cols * 2 ** -52) * sum);
      expect(sums[r]).not.toBe(0);
    }
  });
});

describe('fused float32 attention, rowShift "bound" (the default for materialized, unmasked float32)', () => {
  const n = 300;
  const d = 24;

  function inputs(tag: string, qScale = 1) {
    const q = randomMatrix(n, d, {}, [20, "b32", tag, "q"]);
    const k = randomMatrix(n, d, {}, [20, "b32", tag, "k"]);
    const v = randomMatrix(n, d, {}, [20, "b32", tag, "v"]);
    if (qScale !== 1) for (let i = 0; i < q.data.length; i++) q.data[i] *= qScale;
    return { q, k, v };
  }
  const maxAbsDiff = (a: Float64Array, b: Float64Array) => {
    let m = 0;
    for (let i = 0; i < a.length; i++) m = Math.max(m, Math.abs(a[i] - b[i]));
    return m;
  };
  const run = (q: Float64Array, k: Float64Array, v: Float64Array, nQ: number, rowShift: "bound" | "max", queryBlock?: number) => {
    const out = new Float64Array(nQ * d);
    const st = fusedSoftmaxAttention({
      queries: q,
      keys: k,
      values: v,
      nQ,
      nKV: n,
      d,
      dV: d,
      scale: 1 / Math.sqrt(d),
      out,
      precision: "float32",
      rowShift,
      queryBlock,
    });
    if (st === null) throw new Error("fused path declined");
    return { out, ...st };
  };

  it("is within float32AttentionErrorBound of float64 attention, as the row-max form, and not equal to it bit for bit", () => {
    const { q, k, v } = inputs("plain");
    const y64 = attention(q, k, v).data;
    const bound = float32AttentionErrorBound(q, k, v);
    const b = run(q.data, k.data, v.data, n, "bound");
    const mx = run(q.data, k.data, v.data, n, "max");
    const eb = maxAbsDiff(b.out, y64);
    const em = maxAbsDiff(mx.out, y64);
    console.log(
      `float32 attention ${n}×${n}, d=${d}: max |Y − Y64| bound form ${eb.toExponential(2)}, row-max form ${em.toExponential(2)}, a-priori bound ${bound.toExponential(2)}`,
    );
    expect(eb).toBeLessThanOrEqual(bound);
    expect(em).toBeLessThanOrEqual(bound);
    expect(eb).toBeGreaterThan(0);
    expect(b.out.some((x, i) => x !== mx.out[i])).toBe(true); // the bound form really ran
    // rowMax is the bound used (in nats): ≥ the row's true max logit; l = Σ exp(s − m) ≤ N_KV.
    const scale = 1 / Math.sqrt(d);
    for (let i = 0; i < n; i += 17) {
      let top = Number.NEGATIVE_INFINITY;
      for (let j = 0; j < n; j++) {
        let s = 0;
        for (let p = 0; p < d; p++) s += q.data[i * d + p] * k.data[j * d + p];
        top = Math.max(top, s * scale);
      }
      expect(b.rowMax[i]).toBeGreaterThanOrEqual(top);
      expect(b.normalizer[i]).toBeGreaterThan(0);
      expect(b.normalizer[i]).toBeLessThanOrEqual(n);
    }
  });

  it('is the default of attention(q, k, v, { precision: "float32" })', () => {
    const { q, k, v } = inputs("default");
    const y = attention(q, k, v, { precision: "float32" }).data;
    const b = run(q.data, k.data, v.data, n, "bound");
    expect(y.every((x, i) => Object.is(x, b.out[i]))).toBe(true);
  });

  it("gives every row the same bits whatever the query blocking and on 2 workers", async () => {
    const { q, k, v } = inputs("blocks");
    const whole = run(q.data, k.data, v.data, n, "bound").out;
    for (const qb of [1, 7, 64]) expect(run(q.data, k.data, v.data, n, "bound", qb).out.every((x, i) => Object.is(x, whole[i]))).toBe(true);
    const rows = [5, 150, 299];
    const sub = new Float64Array(rows.length * d);
    for (const [t, r] of rows.entries()) sub.set(q.data.subarray(r * d, (r + 1) * d), t * d);
    const part = run(sub, k.data, v.data, rows.length, "bound").out;
    for (const [t, r] of rows.entries()) {
      for (let c = 0; c < d; c++) expect(Object.is(part[t * d + c], whole[r * d + c])).toBe(true);
    }
    const q2 = randomMatrix(1024, d, {}, [20, "b32", "par", "q"]);
    const k2 = randomMatrix(1024, d, {}, [20, "b32", "par", "k"]);
    const v2 = randomMatrix(1024, d, {}, [20, "b32", "par", "v"]);
    const y1 = attention(q2, k2, v2, { precision: "float32" });
    const y2 = await attentionParallel(q2, k2, v2, { workers: 2, precision: "float32" });
    expect(y2.data.every((x, i) => Object.is(x, y1.data[i]))).toBe(true);
  });

  it("recomputes with the row max the rows whose bound exceeds 62 bits, and stays within the float32 bound", () => {
    // q ×12: bounds of ≈ 80 nats (≈ 115 bits) on every row, beyond SHIFT_F32_MAX (true maxima
    // ≈ 35 nats); logits of that size are still in float32's safe range.
    const { q, k, v } = inputs("large", 12);
    const b = run(q.data, k.data, v.data, n, "bound");
    const mx = run(q.data, k.data, v.data, n, "max");
    // Recomputed rows are the row-max form's rows, bit for bit, and their rowMax is the true max.
    expect(b.out.every((x, i) => Object.is(x, mx.out[i]))).toBe(true);
    expect(b.rowMax.every((x, i) => Object.is(x, mx.rowMax[i]))).toBe(true);
    const y64 = attention(q, k, v).data;
    expect(maxAbsDiff(b.out, y64)).toBeLessThanOrEqual(float32AttentionErrorBound(q, k, v));
  });

  it("recomputes the rows whose bound is so loose that l < 2⁻⁴⁰ while M ≤ 62 bits", () => {
    // Key 0 has −40 in channel 0, every other entry of K is ≈ 0.01; the queries hold only channel 0,
    // 0.875·√d: both bounds are scale·|q₀|·40 = 35 nats (50.5 bits, under SHIFT_F32_MAX), while the
    // true max logit is ≈ 0.01 nats — so l ≈ N·2⁻⁵⁰ < 2⁻⁴⁰ and the row is recomputed with the max.
    const nQ = 8;
    const q = new Float64Array(nQ * d);
    const k = new Float64Array(n * d);
    const v = new Float64Array(n * d);
    const rng = streamFor(20, "b32", "loose");
    for (let i = 0; i < k.length; i++) k[i] = 0.01 * (2 * rng.uniform() - 1);
    for (let i = 0; i < v.length; i++) v[i] = 2 * rng.uniform() - 1;
    k[0] = -40;
    for (let r = 0; r < nQ; r++) q[r * d] = 0.875 * Math.sqrt(d) * (1 + r / 64);
    const b = run(q, k, v, nQ, "bound");
    const mx = run(q, k, v, nQ, "max");
    expect(b.out.every((x, i) => Object.is(x, mx.out[i]))).toBe(true);
    expect(b.rowMax.every((x, i) => Object.is(x, mx.rowMax[i]))).toBe(true); // the true max, not the bound
    const Q = new Matrix(nQ, d, q);
    const K = new Matrix(n, d, k);
    const V = new Matrix(n, d, v);
    expect(maxAbsDiff(b.out, attention(Q, K, V).data)).toBeLessThanOrEqual(float32AttentionErrorBound(Q, K, V));
  });
});
