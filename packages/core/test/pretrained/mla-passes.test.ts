/**
 * The WebAssembly passes of the resident MLA prefill (kernels/watModel.ts, pretrained/residentMla.ts,
 * issue 14) against the JavaScript they replace, bit for bit: interleaved RoPE on every head's rope
 * columns (Rope.rotateColumnsInPlace), K_h / V_h packed into the fused driver's panels from column
 * blocks of a strided float32 or float64 block (softmaxWasm.ts packPanels on the assembled K_h, V_h)
 * with their max |x| (NaN found), and the MoE gather and weighted scatter-add (moe.ts).
 */
import { describe, expect, it } from "vitest";
import { Rope } from "@randattn/core";
import { KernelArena, packPanels, scatterAddWeighted } from "@randattn/core/internal";
import seedrandom from "seedrandom";

const rng = seedrandom("mla-passes");
const gauss = (n: number, s = 1) => Float64Array.from({ length: n }, () => s * (rng() + rng() + rng() - 1.5));
const arena = new KernelArena();
const k = arena.k;
const bits = (a: ArrayLike<number>) => Array.from(a, (x) => (Object.is(x, -0) ? "-0" : String(x)));

describe("MLA prefill passes equal the JavaScript they replace", () => {
  it("rope_pairs_f64 is Rope.rotateColumnsInPlace (interleaved) on every head's rope columns", () => {
    const rows = 9;
    const [H, nope, dR] = [3, 6, 8];
    const dQ = nope + dR;
    const ld = H * dQ + 3;
    const rope = new Rope(dR, { pairing: "interleaved" });
    const positions = Float64Array.from({ length: rows }, (_, i) => 5 + 3 * i);
    const x = gauss(rows * ld, 2);
    x[nope] = 0; // a zero pair: the signs of the zeros too
    x[nope + 1] = -0;
    const ref = x.slice();
    for (let h = 0; h < H; h++) rope.rotateColumnsInPlace(ref, rows, ld, h * dQ + nope, positions);
    // The table residentMla.ts builds: (1, 0) rotated, i.e. (cos, sin) of every pair.
    const tab = new Float64Array(rows * dR);
    for (let i = 0; i < rows * dR; i += 2) tab[i] = 1;
    rope.rotateColumnsInPlace(tab, rows, dR, 0, positions);
    const [X, T] = arena.frame([x.byteLength, tab.byteLength]);
    k.f64.set(x, X / 8);
    k.f64.set(tab, T / 8);
    k.rope_pairs_f64(X + nope * 8, ld, rows, H, dQ, dR, T);
    expect(bits(k.f64.subarray(X / 8, X / 8 + rows * ld))).toEqual(bits(ref));
    // …and the one block of the shared rotary key (ld = blocks' width).
    const kr = gauss(rows * dR);
    const kref = kr.slice();
    rope.rotateColumnsInPlace(kref, rows, dR, 0, positions);
    k.f64.set(kr, X / 8);
    k.rope_pairs_f64(X, dR, rows, 1, dR, dR, T);
    expect(bits(k.f64.subarray(X / 8, X / 8 + rows * dR))).toEqual(bits(kref));
  });

  it.each([
    [false, false],
    [true, true],
    [true, false],
    [false, true],
  ])("pack_key_panels / pack_value_panels are packPanels of [L W_LK^h | k_R], L W_LV^h (src32 %s, dst32 %s)", (src32, dst32) => {
    // dV 10: not a multiple of NR (padded columns, the scalar loop); 16: whole panels (the v128 copy when the types agree).
    for (const [n, dV] of [
      [13, 10],
      [16, 10],
      [13, 16],
      [16, 16],
    ]) {
      const [H, nope, dR] = [2, 6, 4];
      const dQ = nope + dR;
      const ld = H * (nope + dV) + 1;
      const NR = dst32 ? 8 : 4;
      const es = dst32 ? 4 : 8;
      const ess = src32 ? 4 : 8;
      const kv = gauss(n * ld, 4);
      const rot = gauss(n * dR, 3);
      const src = src32 ? Float64Array.from(kv, Math.fround) : kv;
      const h = 1;
      // The literal K_h and V_h, then the driver's packing of them.
      const K = new Float64Array(n * dQ);
      const V = new Float64Array(n * dV);
      for (let i = 0; i < n; i++) {
        for (let c = 0; c < nope; c++) K[i * dQ + c] = src[i * ld + h * nope + c];
        for (let c = 0; c < dR; c++) K[i * dQ + nope + c] = rot[i * dR + c];
        for (let c = 0; c < dV; c++) V[i * dV + c] = src[i * ld + H * nope + h * dV + c];
      }
      const kLen = Math.ceil(n / NR) * NR * dQ;
      const vLen = Math.ceil(dV / NR) * NR * n;
      const ref = (dst32 ? new Float32Array(kLen + vLen) : new Float64Array(kLen + vLen)).fill(7);
      packPanels(K, ref, 0, n, dQ, NR, true);
      packPanels(V, ref, kLen, n, dV, NR, false);
      const [S, Rt, P] = arena.frame([n * ld * 8, rot.byteLength, (kLen + vLen) * 8]);
      if (src32) k.f32.set(kv, S / 4);
      else k.f64.set(kv, S / 8);
      k.f64.set(rot, Rt / 8);
      const mem = dst32 ? k.f32 : k.f64;
      mem.fill(7, P / es, P / es + kLen + vLen);
      // residentMla.ts' order: the last partial panel zeroed, k_R's columns once, then the head's.
      const full = Math.floor(n / NR) * NR;
      if (full < n) mem.fill(0, P / es + full * dQ, P / es + (full + NR) * dQ);
      const rMax = k.pack_key_panels(Rt, dR, n, dR, 0, P + nope * NR * es, dQ, NR, dst32 ? 1 : 0, 1);
      const kMax = k.pack_key_panels(S + h * nope * ess, ld, n, nope, src32 ? 1 : 0, P, dQ, NR, dst32 ? 1 : 0, 1);
      const vMax = k.pack_value_panels(S + (H * nope + h * dV) * ess, ld, n, dV, src32 ? 1 : 0, P + kLen * es, NR, dst32 ? 1 : 0, 1);
      expect(bits(mem.subarray(P / es, P / es + kLen + vLen))).toEqual(bits(ref));
      const absMax = (a: Float64Array) => a.reduce((m, x) => Math.max(m, Math.abs(x)), 0);
      expect(Math.max(kMax, rMax)).toBe(absMax(K));
      expect(vMax).toBe(absMax(V));
      // Without maxima: 0; a NaN anywhere in the head's block: NaN.
      expect(k.pack_key_panels(S, ld, n, nope, src32 ? 1 : 0, P, dQ, NR, dst32 ? 1 : 0, 0)).toBe(0);
      (src32 ? k.f32 : k.f64)[S / ess + (n - 1) * ld + h * nope + 2] = Number.NaN;
      (src32 ? k.f32 : k.f64)[S / ess + 3 * ld + H * nope + h * dV + dV - 1] = Number.NaN;
      expect(k.pack_key_panels(S + h * nope * ess, ld, n, nope, src32 ? 1 : 0, P, dQ, NR, dst32 ? 1 : 0, 1)).toBeNaN();
      expect(k.pack_value_panels(S + (H * nope + h * dV) * ess, ld, n, dV, src32 ? 1 : 0, P + kLen * es, NR, dst32 ? 1 : 0, 1)).toBeNaN();
    }
  });

  it.each([false, true])("gather_rows and scatter_add_rows are the MoE gather and scatterAddWeighted (float32 y: %s)", (y32) => {
    const [t, d, te] = [11, 8, 5];
    const rows = Int32Array.from([0, 3, 4, 9, 10]);
    const w = gauss(te);
    const x = gauss(t * d);
    const y = y32 ? Float32Array.from(gauss(te * d, 5)) : gauss(te * d, 5);
    const out = gauss(t * d);
    const ref = out.slice();
    scatterAddWeighted(ref, y, rows, w, 0, te, d);
    const es = y32 ? 4 : 8;
    const [O, Y, Ip, Wp, Xp, G] = arena.frame([out.byteLength, te * d * 8, rows.byteLength, w.byteLength, x.byteLength, te * d * 8]);
    k.f64.set(out, O / 8);
    if (y32) k.f32.set(y, Y / 4);
    else k.f64.set(y, Y / 8);
    new Int32Array(k.f64.buffer, Ip, te).set(rows);
    k.f64.set(w, Wp / 8);
    k.scatter_add_rows(O, Y, Ip, Wp, te, d, y32 ? 1 : 0);
    expect(bits(k.f64.subarray(O / 8, O / 8 + t * d))).toEqual(bits(ref));
    // Rows of d·es bytes (a multiple of 16, as residentMla.ts requires) gathered in order.
    const mem = y32 ? k.f32 : k.f64;
    mem.set(x, Xp / es);
    k.gather_rows(Xp, G, Ip, te, d * es);
    const want = Array.from(rows).flatMap((r) => Array.from(mem.subarray(Xp / es + r * d, Xp / es + (r + 1) * d)));
    expect(bits(mem.subarray(G / es, G / es + te * d))).toEqual(bits(want));
  });

  it("max_abs_block is max |x| over a strided block (NaN found in any lane or the odd column; 0 when empty)", () => {
    const ld = 40;
    for (const cols of [32, 7]) {
      const rows = 9;
      const x = gauss(rows * ld, 5);
      const [X] = arena.frame([x.byteLength]);
      const ref = (v: Float64Array) => {
        let m = 0;
        for (let r = 0; r < rows; r++) for (let c = 0; c < cols; c++) m = Math.max(m, Math.abs(v[r * ld + c]));
        return m;
      };
      x[4 * ld + cols] = 1e9; // outside the block: not counted
      k.f64.set(x, X / 8);
      expect(k.max_abs_block(X, ld, rows, cols)).toBe(ref(x));
      expect(k.max_abs_block(X, ld, 0, cols)).toBe(0);
      for (const at of [0, 1, cols - 1]) {
        k.f64.set(x, X / 8);
        k.f64[X / 8 + 5 * ld + at] = Number.NaN;
        expect(k.max_abs_block(X, ld, rows, cols)).toBeNaN();
      }
    }
  });
});
