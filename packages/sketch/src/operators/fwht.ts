/**
 * Fast Walsh–Hadamard transform (unnormalized, Sylvester ordering): y = H x with
 * H[a, b] = (−1)^{popcount(a & b)}, H Hᵀ = n I, in n·log₂ n additions/subtractions, in place.
 */
import { ShapeError, ValueError } from "@randattn/core";
import { assertInteger, describe } from "@randattn/core/internal";

function checkBuffer(x: unknown): asserts x is Float64Array {
  if (!(x instanceof Float64Array)) throw new ShapeError("x", "a Float64Array", describe(x));
}

function checkPow2(n: number, argument: string): void {
  assertInteger(n, argument, 1);
  if ((n & (n - 1)) !== 0) throw new ValueError(argument, "a power of two", String(n));
}

/** In-place FWHT of `x[offset .. offset+n)`; n must be a power of two. */
export function fwhtInPlace(x: Float64Array, n?: number, offset = 0): Float64Array {
  checkBuffer(x);
  // (not a default parameter: it would read x.length before `x` is checked)
  n ??= x.length;
  checkPow2(n, "n");
  assertInteger(offset, "offset", 0);
  if (offset + n > x.length) throw new ShapeError("x", `length ≥ ${offset + n} (offset + n)`, `length ${x.length}`);
  for (let h = 1; h < n; h <<= 1) {
    for (let i = offset; i < offset + n; i += h << 1) {
      for (let j = i; j < i + h; j++) {
        const a = x[j];
        const b = x[j + h];
        x[j] = a + b;
        x[j + h] = a - b;
      }
    }
  }
  return x;
}

/**
 * In-place FWHT along the ROW index of an n × p row-major block (each column transformed):
 * the butterflies combine whole rows, so the inner loop runs over p contiguous floats.
 */
export function fwhtRowsInPlace(x: Float64Array, n: number, p: number): Float64Array {
  checkBuffer(x);
  checkPow2(n, "n");
  assertInteger(p, "p", 0);
  if (x.length < n * p) throw new ShapeError("x", `length ≥ ${n * p} (n·p)`, `length ${x.length}`);
  for (let h = 1; h < n; h <<= 1) {
    for (let i = 0; i < n; i += h << 1) {
      for (let j = i; j < i + h; j++) {
        const ra = j * p;
        const rb = (j + h) * p;
        for (let c = 0; c < p; c++) {
          const a = x[ra + c];
          const b = x[rb + c];
          x[ra + c] = a + b;
          x[rb + c] = a - b;
        }
      }
    }
  }
  return x;
}
