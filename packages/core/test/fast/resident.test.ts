/**
 * kernels/resident.ts: products and exp on operands kept in WebAssembly memory. They must give the
 * bits of the ordinary drivers (random-feature attention relies on it for its bit identity), and
 * the scratch must survive the largest products of gemmWasm/gemmWasmPacked run in between.
 */
import { getKernelBackend, setKernelBackend, wasmSimdAvailable } from "@randattn/core";
import {
  RESIDENT_BASE_BYTES,
  STAGE_MAX,
  gemmWasm,
  gemmWasmPacked,
  matmulInto,
  matmulTransAInto,
  packOperandF64,
  panelIndex,
  residentExp,
  residentGemmPanels,
  residentGemmRows,
  residentKernels,
  simdExp,
} from "@randattn/core/internal";
import fc from "fast-check";
import { afterAll, describe, expect, it } from "vitest";

const previous = getKernelBackend();
afterAll(() => {
  setKernelBackend(previous);
});

function rnd(n: number, seed: number): Float64Array {
  const a = new Float64Array(n);
  let s = seed;
  for (let i = 0; i < n; i++) {
    s = (s * 1103515245 + 12345) % 2147483648;
    a[i] = s / 1073741824 - 1;
  }
  return a;
}

/** rows × cols row-major `a` into 4-column panels at f[o…]. */
function toPanels(a: Float64Array, rows: number, cols: number, f: Float64Array, o: number): void {
  for (let p = 0; p < rows; p++)
    for (let j = 0; j < Math.ceil(cols / 4) * 4; j++) f[o + panelIndex(p, j, rows)] = j < cols ? a[p * cols + j] : 0;
}

describe.runIf(wasmSimdAvailable())("resident kernels", () => {
  const base = RESIDENT_BASE_BYTES / 8;
  it("row-major-A product over two depth slices (k = 300) equals matmulInto bit for bit", () => {
    setKernelBackend("wasm");
    const [m, k, n] = [37, 300, 65];
    const a = rnd(m * k, 1);
    const b = rnd(k * n, 2);
    const ref = new Float64Array(m * n);
    matmulInto(a, b, ref, m, k, n, false);
    const K = residentKernels(m * k + k * 68 + m * n);
    K.f64.set(a, base);
    toPanels(b, k, n, K.f64, base + m * k);
    residentGemmRows(K, base, k, base + m * k, k, base + m * k + k * 68, n, m, n, k);
    const got = K.f64.subarray(base + m * k + k * 68, base + m * k + k * 68 + m * n);
    expect(got.every((x, i) => Object.is(x, ref[i]))).toBe(true);
  });
  it("packed-panel product accumulated over blocks equals matmulTransAInto (Cᵀ = Bᵀ A order swapped)", () => {
    setKernelBackend("wasm");
    const [t, F, dV] = [256, 20, 12]; // two key blocks of 128; F not a multiple of 4 on purpose
    const phi = rnd(t * F, 3);
    const v = rnd(t * dV, 4);
    // Reference: state (F × dV) = φᵀ V, one 128-row block at a time.
    const state = new Float64Array(F * dV);
    for (let j = 0; j < t; j += 128)
      matmulTransAInto(phi.subarray(j * F, (j + 128) * F), v.subarray(j * dV, (j + 128) * dV), state, 128, F, dV, j > 0);
    const K = residentKernels(2 * 128 * 24 + dV * F);
    const [pp, vp, st] = [base, base + 128 * 24, base + 2 * 128 * 24];
    K.f64.fill(0, st, st + dV * F);
    for (let j = 0; j < t; j += 128) {
      toPanels(phi.subarray(j * F, (j + 128) * F), 128, F, K.f64, pp);
      toPanels(v.subarray(j * dV, (j + 128) * dV), 128, dV, K.f64, vp);
      residentGemmPanels(K, vp, pp, st, F, dV, F, 128); // stateᵀ += Vᵀ φ
    }
    for (let l = 0; l < F; l++) for (let a = 0; a < dV; a++) expect(K.f64[st + a * F + l]).toBe(state[l * dV + a]);
  });
  it("exp in place equals simdExp; the scratch survives the largest gemmWasm and gemmWasmPacked products", () => {
    setKernelBackend("wasm");
    const x = rnd(1001, 5).map((v) => 40 * v);
    const K = residentKernels(1001);
    K.f64.set(x, base);
    residentExp(K, base, 1001);
    const ref = simdExp(x);
    const mine = Float64Array.from(K.f64.subarray(base, base + 1001));
    expect(mine.every((y, i) => y === ref[i])).toBe(true);
    // Products whose buffers are as large as the drivers allow (C chunk 2²⁰ floats, A chunk too;
    // gemmWasm's staged A and B at STAGE_MAX = 2²⁰ entries each).
    const n = 1024;
    const a = rnd(n * n, 6);
    expect(n * n).toBe(STAGE_MAX);
    gemmWasm("float64", false, false, a, a, new Float64Array(n * n), n, n, n, false);
    const packed = packOperandF64(a.subarray(0, 256 * 1024), false, 256, 1024);
    if (packed) gemmWasmPacked(a.subarray(0, 4096 * 256), packed, new Float64Array(4096 * 1024), 4096, false);
    expect(
      residentKernels(1001)
        .f64.subarray(base, base + 1001)
        .every((y, i) => y === mine[i]),
    ).toBe(true);
  });
  it("rows_max_f64 and rows_affine_exp_f64 equal the JavaScript loops and simdExp bit for bit (odd widths, |·|)", () => {
    const [rows, cols, ld] = [5, 37, 41];
    const u = rnd(rows * ld, 7).map((x) => 30 * x);
    const K = residentKernels(rows * ld + rows * cols + 3 * rows);
    const [up, dp, mp, ep] = [base, base + rows * ld, base + rows * ld + rows * cols, base + rows * ld + rows * cols + rows];
    K.f64.set(u, up);
    for (const abs of [0, 1]) {
      K.rows_max_f64(up * 8, ld, rows, cols, mp * 8, abs);
      for (let r = 0; r < rows; r++) {
        let mx = Number.NEGATIVE_INFINITY;
        for (let l = 0; l < cols; l++) mx = Math.max(mx, abs ? Math.abs(u[r * ld + l]) : u[r * ld + l]);
        expect(K.f64[mp + r]).toBe(mx);
      }
    }
    const s = 0.353;
    for (let r = 0; r < rows; r++) K.f64[ep + r] = r === 2 ? 0 : -0.25 * r;
    K.rows_affine_exp_f64(up * 8, ld, dp * 8, cols, rows, cols, s, mp * 8, ep * 8);
    for (let r = 0; r < rows; r++) {
      const x = new Float64Array(cols);
      for (let l = 0; l < cols; l++) x[l] = u[r * ld + l] * s - K.f64[mp + r] + K.f64[ep + r];
      const y = simdExp(x);
      for (let l = 0; l < cols; l++) expect(K.f64[dp + r * cols + l]).toBe(y[l]);
    }
  });
  // Stop 24's rows_max_f64 (pmax tree, NaN flagged off the chain, a zero maximum's sign re-scanned)
  // against Math.max over the row from −∞, Object.is per row: every width from 0 to 41 (whole
  // 8-element steps and each tail length), NaN and ±∞ in a step and in the tail, rows of zeros of
  // either sign, a −0 maximum beside negative entries, |·| of −0.
  it("rows_max_f64 is Math.max's row maximum bit for bit: NaN, ±0, ±∞, every tail length, |·|", () => {
    const special = [Number.NaN, 0, -0, Number.POSITIVE_INFINITY, Number.NEGATIVE_INFINITY, -1e-300, 1e300, -3];
    const rowOf = (cols: number, seed: number, spots: [number, number][]): Float64Array => {
      const u = rnd(cols, seed).map((x) => 5 * x);
      for (const [at, which] of spots) if (cols > 0) u[at % cols] = special[which % special.length];
      return u;
    };
    const check = (u: Float64Array) => {
      const cols = u.length;
      const ld = cols + 3; // a stride past the row: the kernel must not read it
      const K = residentKernels(2 * ld + 2);
      K.f64.fill(Number.NaN, base, base + 2 * ld);
      K.f64.set(u, base);
      K.f64.set(
        u.map((x) => -x),
        base + ld,
      );
      for (const abs of [0, 1]) {
        K.rows_max_f64(base * 8, ld, 2, cols, (base + 2 * ld) * 8, abs);
        for (let r = 0; r < 2; r++) {
          let mx = Number.NEGATIVE_INFINITY;
          for (let l = 0; l < cols; l++) {
            const x = K.f64[base + r * ld + l];
            mx = Math.max(mx, abs ? Math.abs(x) : x);
          }
          expect(Object.is(K.f64[base + 2 * ld + r], mx), `cols ${cols} row ${r} abs ${abs}: ${K.f64[base + 2 * ld + r]} vs ${mx}`).toBe(
            true,
          );
        }
      }
    };
    for (let cols = 0; cols <= 41; cols++) {
      check(rowOf(cols, cols + 1, []));
      check(rowOf(cols, cols + 2, [[3, 0]])); // NaN in a step (or the tail when cols < 8)
      check(rowOf(cols, cols + 3, [[cols - 1, 0]])); // NaN last: the tail
      check(rowOf(cols, cols + 4, [[cols >> 1, 3]])); // +∞
      check(new Float64Array(cols).fill(-0)); // all −0: −0 (and +0 under |·|)
      check(new Float64Array(cols).map((_, i) => (i === cols - 1 ? 0 : -0))); // one +0, last
      check(new Float64Array(cols).map((_, i) => (i % 3 === 0 ? -0 : -1 - i))); // maximum −0 among negatives
    }
    fc.assert(
      fc.property(
        fc.integer({ min: 0, max: 70 }),
        fc.integer({ min: 1, max: 1e6 }),
        fc.array(fc.tuple(fc.nat(), fc.nat()), { maxLength: 4 }),
        (cols, seed, spots) => {
          check(rowOf(cols, seed, spots));
        },
      ),
      { seed: 24, numRuns: 200 },
    );
  });
  it("rows_affine_exp_panels_f64 writes simdExp of the JavaScript loop's exponents at panelIndex positions, bit for bit", () => {
    // 13 rows: one group of 8 and a partial group of 5; kb > rows: a partial panel block whose
    // rows past `rows` must stay as they were; a stride past the row (ld > cols).
    for (const [rows, cols, ld, kb] of [
      [13, 12, 13, 15],
      [8, 4, 4, 8],
      [1, 8, 9, 3],
    ]) {
      const u = rnd(rows * ld, 8 + rows).map((x) => 10 * x);
      const K = residentKernels(rows * ld + kb * cols + 2 * rows + 8 * cols);
      const [up, dp, mp, ep] = [base, base + rows * ld, base + rows * ld + kb * cols, base + rows * ld + kb * cols + rows];
      const tp = ep + rows;
      K.f64.set(u, up);
      K.f64.fill(7, dp, dp + kb * cols);
      for (let r = 0; r < rows; r++) {
        K.f64[mp + r] = 0.5 * r;
        K.f64[ep + r] = -0.125 * r;
      }
      const s = 0.71;
      K.rows_affine_exp_panels_f64(up * 8, ld, dp * 8, kb, rows, cols, s, mp * 8, ep * 8, tp * 8);
      for (let r = 0; r < kb; r++) {
        const x = new Float64Array(cols);
        for (let l = 0; l < cols; l++) x[l] = r < rows ? u[r * ld + l] * s - K.f64[mp + r] + K.f64[ep + r] : 0;
        const y = simdExp(x);
        for (let l = 0; l < cols; l++) {
          expect(Object.is(K.f64[dp + panelIndex(r, l, kb)], r < rows ? y[l] : 7), `rows ${rows} kb ${kb}: (${r}, ${l})`).toBe(true);
        }
      }
    }
  });
});
