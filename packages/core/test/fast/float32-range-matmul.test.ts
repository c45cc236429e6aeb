// Issue #6: matmul32 / matmulTransA32 / matmulTransB32 beyond float32's range. float32 overflows
// (≈ 3.4e38) to ±∞/NaN and flushes |x| < 1.4e-45 to 0; the checked products then compute in
// float64 (range32.ts) instead of returning ±∞/NaN or a silently wrong 0. Inside the range they are
// unchanged: the raw float32 kernels' result, bit for bit.
import {
  Matrix,
  ShapeError,
  getKernelBackend,
  matmul,
  matmul32,
  matmulTransA,
  matmulTransA32,
  matmulTransB,
  matmulTransB32,
  setKernelBackend,
  transpose,
} from "@randattn/core";
import { matmul32Into, matmulTransA32Into, matmulTransB32Into } from "@randattn/core/internal";
import { afterAll, describe, expect, it } from "vitest";
import { U32, literalProduct, rnd } from "./helpers.js";

const previous = getKernelBackend();
afterAll(() => {
  setKernelBackend(previous);
});

function times(m: Matrix, s: number): Matrix {
  return new Matrix(
    m.rows,
    m.cols,
    m.data.map((x) => x * s),
  );
}

type Variant = {
  name: string;
  checked: (a: Matrix, b: Matrix) => Matrix;
  f64: (a: Matrix, b: Matrix) => Matrix;
  raw: (a: Matrix, b: Matrix) => Float64Array;
  /** Operands for an m×n result over k shared terms, as this variant takes them. */
  operands: (a: Matrix, b: Matrix) => [Matrix, Matrix];
};

const VARIANTS: Variant[] = [
  {
    name: "matmul32",
    checked: matmul32,
    f64: matmul,
    raw: (a, b) => {
      const c = new Float64Array(a.rows * b.cols);
      matmul32Into(a.data, b.data, c, a.rows, a.cols, b.cols, false);
      return c;
    },
    operands: (a, b) => [a, b],
  },
  {
    name: "matmulTransA32",
    checked: matmulTransA32,
    f64: matmulTransA,
    raw: (a, b) => {
      const c = new Float64Array(a.cols * b.cols);
      matmulTransA32Into(a.data, b.data, c, a.rows, a.cols, b.cols, false);
      return c;
    },
    operands: (a, b) => [transpose(a), b],
  },
  {
    name: "matmulTransB32",
    checked: matmulTransB32,
    f64: matmulTransB,
    raw: (a, b) => {
      const c = new Float64Array(a.rows * b.rows);
      matmulTransB32Into(a.data, b.data, c, a.rows, a.cols, b.rows);
      return c;
    },
    operands: (a, b) => [a, transpose(b)],
  },
];

/** The plain A, B of the product a variant computes from its operands. */
function plain(v: Variant, a: Matrix, b: Matrix): [Matrix, Matrix] {
  return v.name === "matmulTransA32" ? [transpose(a), b] : v.name === "matmulTransB32" ? [a, transpose(b)] : [a, b];
}

// [scale of A, scale of B, what float32 does to them]
const EXTREMES: [number, number, string][] = [
  [1e20, 1e20, "products overflow to ±∞"],
  [1e150, 1, "A overflows while rounding"],
  [1e-300, 1e10, "A flushes to 0"],
  [1e-300, 1e280, "A flushes to 0, B overflows"],
  [1e-41, 1e5, "A is subnormal in float32 (≈ 4 significant digits)"],
  [1e-25, 1e-25, "products underflow"],
];

describe("float32 products beyond float32's range", () => {
  for (const backend of ["wasm", "scalar"] as const) {
    for (const v of VARIANTS) {
      for (const [sa, sb, what] of EXTREMES) {
        it(`${v.name} (${backend}), A × ${sa}, B × ${sb} (${what}): the float64 product`, () => {
          setKernelBackend(backend);
          const [a, b] = v.operands(times(rnd(7, 9, "a"), sa), times(rnd(9, 5, "b"), sb));
          const raw = v.raw(a, b);
          const ref = v.f64(a, b);
          // The failure being guarded: the float32 kernel's result is non-finite or beyond float32's
          // own error bound (k + 3)·u·(|A||B|)_ij somewhere (0 where the product is not).
          const { abs } = literalProduct(...plain(v, a, b));
          const beyond = (x: number, i: number) => !(Math.abs(x - ref.data[i]) <= 12 * U32 * abs[i]);
          expect(raw.some(beyond)).toBe(true);
          const out = v.checked(a, b);
          expect(out.data).toEqual(ref.data);
        });
      }
      it(`${v.name} (${backend}) inside the range: unchanged float32 result`, () => {
        setKernelBackend(backend);
        const [a, b] = v.operands(rnd(7, 9, "a"), rnd(9, 5, "b"));
        const out = v.checked(a, b);
        expect(out.data).toEqual(v.raw(a, b));
        // really float32: differs from float64, within γ_k·|A||B| plus the input rounding (Higham 3.5)
        const ref = v.f64(a, b);
        expect(out.data.some((x, i) => x !== ref.data[i])).toBe(true);
        const k = 9;
        const { abs } = literalProduct(...plain(v, a, b));
        for (let i = 0; i < ref.data.length; i++) {
          expect(Math.abs(out.data[i] - ref.data[i])).toBeLessThanOrEqual(((k + 3) * U32 * abs[i]) / (1 - (k + 3) * U32));
        }
      });
    }
  }
  it("NaN/±∞ entries pass through as in the float64 products (IEEE-transparent)", () => {
    const a = rnd(3, 4, "nan");
    a.data[5] = Number.NaN; // row 1
    const out = matmul32(a, rnd(4, 2, "b"));
    expect(Number.isNaN(out.data[2]) && Number.isNaN(out.data[3])).toBe(true);
    expect([0, 1, 4, 5].every((i) => Number.isFinite(out.data[i]))).toBe(true);
  });
});

describe("float32 products check their arguments before reading them", () => {
  const m = rnd(2, 2, "m");
  for (const [name, f] of [
    ["matmul32", matmul32],
    ["matmulTransA32", matmulTransA32],
    ["matmulTransB32", matmulTransB32],
  ] as const) {
    for (const bad of [null, undefined, "a", [[1, 2]], { rows: 2, cols: 2 }]) {
      it(`${name}(${JSON.stringify(bad) ?? "undefined"}, b) and (a, …): ShapeError naming the argument`, () => {
        for (const [args, argument] of [
          [[bad, m], "a"],
          [[m, bad], "b"],
        ] as const) {
          try {
            (f as (a: unknown, b: unknown) => Matrix)(...args);
            expect.unreachable();
          } catch (e) {
            expect(e).toBeInstanceOf(ShapeError);
            expect((e as ShapeError).argument).toBe(argument);
            expect((e as ShapeError).message).toContain("a Matrix");
          }
        }
      });
    }
  }
});
