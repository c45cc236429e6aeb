/**
 * The resident prefill (pretrained/resident.ts, kernels/watModel.ts): the same logits bit for bit
 * as the per-sublayer path it replaces (forced here by a declining attentionOverride, which takes
 * model.ts' path), in float64 and under the float32 option, for prefills of odd length, a second
 * multi-token step on a filled cache and a decoded token; and each new WebAssembly pass against the
 * JavaScript loop it replaces, bit for bit, with its finiteness test failing on every ±∞/NaN position.
 */
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import { Matrix, PretrainedModel, Rope } from "@randattn/core";
import { KernelArena, rmsNormRowsInto, simdExp } from "@randattn/core/internal";
import { loadPretrained } from "@randattn/core/node";
import seedrandom from "seedrandom";
import { errorMessage, fixtureDir } from "./helpers.js";

const shipped = fileURLToPath(new URL("../../../../models/llama-gqa-fortunes", import.meta.url));
const declined = { attentionOverride: () => undefined };

describe.each([
  ["llama-gqa-fortunes (shipped)", shipped],
  ["qwen2-bias-f16", fixtureDir("qwen2-bias-f16")],
  ["llama-untied-bf16", fixtureDir("llama-untied-bf16")],
])("resident prefill of %s", (_, dir) => {
  const model = loadPretrained(dir);
  const V = model.vocabSize;
  const ids = Array.from({ length: 45 }, (_, i) => (i * 37 + 11) % V);
  it.each(["float64", "float32"] as const)(
    "equals the per-sublayer path bit for bit (%s): prefill, a 6-token step, a decoded token",
    (precision) => {
      const resident = (model as unknown as { resident?: { steps: number } }).resident;
      const before = resident?.steps ?? Number.NaN;
      const a = model.createState();
      const b = model.createState();
      for (const chunk of [ids.slice(0, 37), ids.slice(37, 43), ids.slice(43, 44)]) {
        const fast = model.step(a, chunk, { precision });
        const ref = model.step(b, chunk, { precision, ...declined });
        expect(Array.from(fast.logits.data)).toEqual(Array.from(ref.logits.data));
        expect(Array.from(fast.hidden.data)).toEqual(Array.from(ref.hidden.data));
      }
      expect(a.position).toBe(44);
      // The two multi-token steps ran resident; the decoded token (1 row) took model.ts' path.
      expect(resident?.steps).toBe(before + 2);
    },
  );
  it.each(["float64", "float32"] as const)(
    "a forward without a state (no caches: keys and values stay in the arena) has the cached step's bits (%s)",
    (precision) => {
      const resident = (model as unknown as { resident?: { steps: number; cacheFree: boolean } }).resident;
      expect(resident?.cacheFree).toBe(true);
      const before = resident?.steps ?? Number.NaN;
      const fwd = model.forward(ids, { precision });
      expect(resident?.steps).toBe(before + 1);
      const state = model.createState();
      const cached = model.step(state, ids, { precision });
      const ref = model.forward(ids, { precision, ...declined });
      for (const r of [cached, ref]) {
        expect(Array.from(fwd.logits.data)).toEqual(Array.from(r.logits.data));
        expect(Array.from(fwd.hidden.data)).toEqual(Array.from(r.hidden.data));
      }
      // The logits and hidden rows are the caller's own: a later forward does not overwrite them.
      const kept = Array.from(fwd.logits.data);
      model.forward(ids.slice(0, 20), { precision });
      expect(Array.from(fwd.logits.data)).toEqual(kept);
    },
  );
});

describe("resident forward without a state on bad keys or values", () => {
  it("raises the cached step's error (keys overflowing to ±∞) and the per-sublayer path's", () => {
    const base = loadPretrained(shipped);
    const layers = base.weights.layers.map((l, i) => {
      if (i !== 2 || l.attention.kind !== "gqa") return l;
      const w = l.attention.weights;
      // The normalized rows ≈ 1e300 (finite), K_1 = X_n W_K scaled by 1e12 overflows to ±∞.
      const keys = w.keys.map((k, g) =>
        g === 1
          ? new Matrix(
              k.rows,
              k.cols,
              k.data.map((v) => v * 1e12),
            )
          : k,
      );
      const inputNorm = { ...l.inputNorm, gain: (l.inputNorm as { gain: Float64Array }).gain.map((v) => v * 1e300) };
      return { ...l, inputNorm, attention: { ...l.attention, weights: { ...w, keys } } };
    });
    const model = new PretrainedModel(base.config, { ...base.weights, layers });
    const ids = Array.from({ length: 24 }, (_, i) => (i * 29 + 3) % model.vocabSize);
    const resident = (model as unknown as { resident?: { steps: number } }).resident;
    const fwd = errorMessage(() => model.forward(ids));
    expect(resident?.steps).toBe(1);
    expect(fwd).toMatch(/^NonFiniteError: keys\[1\]/);
    expect(fwd).toBe(errorMessage(() => model.step(model.createState(), ids)));
    expect(fwd).toBe(errorMessage(() => model.forward(ids, declined)));
  });
});

describe("resident prefill outside float32's safe range", () => {
  it("takes float32 attention's float64 fallback per head, as the fused driver does (same bits)", () => {
    const base = loadPretrained(shipped);
    // W_Q of layer 1, head 2 scaled by 2⁶⁴: that head's max|Q| leaves [2⁻⁶⁰, 2⁶⁰], so float32 attention
    // computes it in float64 (attentionInFloat32Range), the other heads stay float32.
    const layers = base.weights.layers.map((l, i) => {
      if (i !== 1 || l.attention.kind !== "gqa") return l;
      const w = l.attention.weights;
      const queries = w.queries.map((q, h) =>
        h === 2
          ? new Matrix(
              q.rows,
              q.cols,
              q.data.map((v) => v * 2 ** 64),
            )
          : q,
      );
      return { ...l, attention: { ...l.attention, weights: { ...w, queries } } };
    });
    const model = new PretrainedModel(base.config, { ...base.weights, layers });
    const ids = Array.from({ length: 40 }, (_, i) => (i * 53 + 5) % model.vocabSize);
    const resident = (model as unknown as { resident?: { steps: number } }).resident;
    const fast = model.forward(ids, { precision: "float32" });
    const ref = model.forward(ids, { precision: "float32", ...declined });
    expect(resident?.steps).toBe(1);
    expect(Array.from(fast.logits.data)).toEqual(Array.from(ref.logits.data));
    // …and differs from the unscaled model's (the scaled head changed the computation).
    expect(Array.from(fast.logits.data)).not.toEqual(Array.from(base.forward(ids, { precision: "float32" }).logits.data));
  });
});

describe("watModel kernels equal the JavaScript loops they replace", () => {
  const rng = seedrandom("watModel");
  const gauss = (n: number, s = 1) => Float64Array.from({ length: n }, () => s * (rng() + rng() + rng() - 1.5));
  const arena = new KernelArena();
  const k = arena.k;
  const rows = 7;

  it("widen_f32 and narrow_f64 are the Float32Array ↔ Float64Array copies (rounding, ±∞, NaN, −0, subnormals)", () => {
    const special = [Number.POSITIVE_INFINITY, Number.NEGATIVE_INFINITY, Number.NaN, -0, 1e-40, -3e-45, 1e39, -1e39, 2 ** -149];
    for (const n of [0, 3, 4, 13, 64]) {
      const x = gauss(n, 1e3);
      for (let i = 0; i < Math.min(n, special.length); i++) x[(i * 5) % n] = special[i];
      const [A, B, C] = arena.frame([n * 8 + 16, n * 4 + 16, n * 8 + 16]);
      k.f64.set(x, A / 8);
      k.narrow_f64(A, B, n);
      expect(Array.from(k.f32.subarray(B / 4, B / 4 + n))).toEqual(Array.from(Float32Array.from(x)));
      k.widen_f32(B, C, n);
      expect(Array.from(k.f64.subarray(C / 8, C / 8 + n))).toEqual(Array.from(Float64Array.from(Float32Array.from(x))));
    }
  });

  it("rms_rows_f64 (float64 and float32 out) is rmsNormRowsInto", () => {
    for (const cols of [64, 15]) {
      const x = gauss(rows * cols, 3);
      const gain = gauss(cols);
      const ref = new Float64Array(rows * cols);
      rmsNormRowsInto(x, ref, rows, cols, gain, 1e-6);
      const [X, Gn, O] = arena.frame([x.byteLength, gain.byteLength, x.byteLength]);
      k.f64.set(x, X / 8);
      k.f64.set(gain, Gn / 8);
      expect(k.rms_rows_f64(X, O, rows, cols, Gn, 1e-6, 0)).toBe(1);
      expect(Array.from(k.f64.subarray(O / 8, O / 8 + rows * cols))).toEqual(Array.from(ref));
      expect(k.rms_rows_f64(X, O, rows, cols, Gn, 1e-6, 1)).toBe(1);
      expect(Array.from(k.f32.subarray(O / 4, O / 4 + rows * cols))).toEqual(Array.from(ref, Math.fround));
      // Its finiteness answer is all_finite's on what it wrote: a gain of 1e300 overflows float32 only
      // (in each row position: the four-row groups, the last rows, the vector and the odd tail).
      for (const at of [0, cols - 1, 5 * cols + 2, rows * cols - 1]) {
        const g = gain.slice();
        g[at % cols] = 1e300;
        k.f64.set(g, Gn / 8);
        expect(k.rms_rows_f64(X, O, rows, cols, Gn, 1e-6, 0)).toBe(1);
        expect(k.rms_rows_f64(X, O, rows, cols, Gn, 1e-6, 1)).toBe(0);
        expect(k.all_finite(O, rows * cols, 1)).toBe(0);
        k.f64.set(gain, Gn / 8);
        const y = x.slice();
        y[at] = Number.POSITIVE_INFINITY;
        k.f64.set(y, X / 8);
        expect(k.rms_rows_f64(X, O, rows, cols, Gn, 1e-6, 0)).toBe(0);
        expect(k.rms_rows_f64(X, O, rows, cols, Gn, 1e-6, 1)).toBe(0);
        k.f64.set(x, X / 8);
      }
      expect(k.rms_rows_f64(X, O, rows, cols, Gn, 1e-6, 1)).toBe(1);
    }
  });

  it("rope_half_f64 is Rope.rotateColumnsInPlace (half pairing) on every block", () => {
    const dh = 16;
    const blocks = 3;
    const ld = blocks * dh + 5;
    const rope = new Rope(dh, { pairing: "half" });
    const positions = Float64Array.from({ length: rows }, (_, i) => 3 + 2 * i);
    const x = gauss(rows * ld, 2);
    const ref = x.slice();
    for (let b = 0; b < blocks; b++) rope.rotateColumnsInPlace(ref, rows, ld, b * dh, positions);
    const tab = new Float64Array(rows * dh);
    for (let i = 0; i < rows; i++) tab.fill(1, i * dh, i * dh + dh / 2);
    rope.rotateColumnsInPlace(tab, rows, dh, 0, positions);
    const [X, T] = arena.frame([x.byteLength, tab.byteLength]);
    k.f64.set(x, X / 8);
    k.f64.set(tab, T / 8);
    k.rope_half_f64(X, ld, rows, blocks, dh, T);
    expect(Array.from(k.f64.subarray(X / 8, X / 8 + rows * ld))).toEqual(Array.from(ref));
  });

  it("swiglu_f64 is gluForward's silu(g)·u with the SIMD exp (float64, and float32 in/out)", () => {
    for (const n of [192, 7, 19]) {
      const both = gauss(rows * 2 * n, 8);
      both[3] = 800; // e^{−g} underflows: g/1
      both[4] = -800; // e^{−g} = ∞: −0
      const e = simdExp(Float64Array.from({ length: rows * n }, (_, i) => -both[Math.floor(i / n) * 2 * n + (i % n)]));
      const ref = e.map((v, i) => {
        const r = Math.floor(i / n) * 2 * n + (i % n);
        return (both[r] / (1 + v)) * both[r + n];
      });
      const [G, H] = arena.frame([both.byteLength, rows * n * 8]);
      k.f64.set(both, G / 8);
      k.swiglu_f64(G, H, rows, n, 0);
      expect(Array.from(k.f64.subarray(H / 8, H / 8 + rows * n))).toEqual(Array.from(ref));
      const both32 = Float32Array.from(both);
      const e32 = simdExp(Float64Array.from({ length: rows * n }, (_, i) => -both32[Math.floor(i / n) * 2 * n + (i % n)]));
      const ref32 = e32.map((v, i) => {
        const r = Math.floor(i / n) * 2 * n + (i % n);
        return Math.fround((both32[r] / (1 + v)) * both32[r + n]);
      });
      k.f32.set(both32, G / 4);
      k.swiglu_f64(G, H, rows, n, 1);
      expect(Array.from(k.f32.subarray(H / 4, H / 4 + rows * n))).toEqual(Array.from(ref32));
    }
  });

  it("add_rows_f64 adds float64 or widened float32 rows; all_finite finds every ±∞ and NaN", () => {
    for (const n of [64, 9]) {
      const a = gauss(n);
      const b = gauss(n);
      const [A, B, C] = arena.frame([n * 8, n * 8, n * 8]);
      k.f64.set(a, A / 8);
      k.f64.set(b, B / 8);
      k.add_rows_f64(A, B, C, n, 0);
      expect(Array.from(k.f64.subarray(C / 8, C / 8 + n))).toEqual(Array.from(a, (v, i) => v + b[i]));
      const a32 = Float32Array.from(a);
      k.f32.set(a32, A / 4);
      k.add_rows_f64(A, B, C, n, 1);
      expect(Array.from(k.f64.subarray(C / 8, C / 8 + n))).toEqual(Array.from(a32, (v, i) => v + b[i]));
      k.f64.set(a, A / 8);
      expect(k.all_finite(A, n, 0)).toBe(1);
      k.f32.set(a32, B / 4);
      expect(k.all_finite(B, n, 1)).toBe(1);
      for (const bad of [Number.POSITIVE_INFINITY, Number.NEGATIVE_INFINITY, Number.NaN]) {
        for (const i of [0, 1, n - 2, n - 1]) {
          k.f64.set(a, A / 8);
          k.f64[A / 8 + i] = bad;
          expect(k.all_finite(A, n, 0)).toBe(0);
          k.f32.set(a32, B / 4);
          k.f32[B / 4 + i] = bad;
          expect(k.all_finite(B, n, 1)).toBe(0);
        }
      }
    }
  });
  it("copy_cols_f64, scale_rows_f64 and rows_normalize_out are the copies and loops of the fused driver", () => {
    const ld = 21;
    const cols = 6;
    const x = gauss(rows * ld, 4);
    const [X, D, Y, Lp, O] = arena.frame([x.byteLength, rows * cols * 8, rows * cols * 8, rows * 8, rows * ld * 8]);
    k.f64.set(x, X / 8);
    const block = (c0: number) => Array.from({ length: rows * cols }, (_, i) => x[Math.floor(i / cols) * ld + c0 + (i % cols)]);
    k.copy_cols_f64(X + 3 * 8, ld, D, rows, cols);
    expect(Array.from(k.f64.subarray(D / 8, D / 8 + rows * cols))).toEqual(block(3));
    for (const c of [cols, cols - 1]) {
      const scaled = Array.from({ length: rows * c }, (_, i) => x[Math.floor(i / c) * ld + 2 + (i % c)] * 0.37);
      k.scale_rows_f64(X + 2 * 8, ld, D, rows, c, 0.37, 0);
      expect(Array.from(k.f64.subarray(D / 8, D / 8 + rows * c))).toEqual(scaled);
      k.scale_rows_f64(X + 2 * 8, ld, D, rows, c, 0.37, 1);
      expect(Array.from(k.f32.subarray(D / 4, D / 4 + rows * c))).toEqual(scaled.map(Math.fround));
      // Y·(1/l) into rows of stride ld; a normalizer outside (0, ∞), or a float32 output overflowing, fails.
      const y = gauss(rows * c, 5);
      const l = Float64Array.from({ length: rows }, () => 0.5 + rng());
      k.f64.set(y, Y / 8);
      k.f64.set(l, Lp / 8);
      expect(k.rows_normalize_out(Y, Lp, O, ld, rows, c, 0)).toBe(1);
      for (let r = 0; r < rows; r++) {
        const inv = 1 / l[r];
        expect(Array.from(k.f64.subarray(O / 8 + r * ld, O / 8 + r * ld + c))).toEqual(
          Array.from(y.subarray(r * c, (r + 1) * c), (v) => v * inv),
        );
      }
      const y32 = Float32Array.from(y);
      k.f32.set(y32, Y / 4);
      expect(k.rows_normalize_out(Y, Lp, O, ld, rows, c, 1)).toBe(1);
      expect(k.f64[O / 8 + ld + 1]).toBe(y32[c + 1] * (1 / l[1]));
      k.f64[Lp / 8 + 2] = 1e-320; // 1/l overflows: y·∞ — a float32 output check fails, float64 does not
      expect(k.rows_normalize_out(Y, Lp, O, ld, rows, c, 1)).toBe(0);
      for (const bad of [0, Number.POSITIVE_INFINITY, Number.NaN]) {
        k.f64[Lp / 8 + rows - 1] = bad;
        expect(k.rows_normalize_out(Y, Lp, O, ld, rows, c, 0)).toBe(0);
      }
    }
  });
});
