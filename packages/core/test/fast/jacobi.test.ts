import { ShapeError, ValueError, getKernelBackend, setKernelBackend } from "@randattn/core";
import { symmetricMaxEigenvalue, symmetricMaxEigenvalueJs } from "@randattn/core/internal";
import { EigenvalueDecomposition, Matrix as MlMatrix } from "ml-matrix";
import seedrandom from "seedrandom";
import { afterAll, describe, expect, it } from "vitest";

// The Jacobi eigenvalue kernel (kernels/watJacobi.ts) against its JavaScript form bit for bit — its
// value is in the experiments' committed spectral errors — and both against ml-matrix's symmetric
// eigendecomposition (an independent oracle): Jacobi is backward stable, so λ_max is within a few
// ulps of ‖A‖₂ of the exact one (Golub & Van Loan §8.5.5); 1e-13·‖A‖_F is tens of ulps at these n.
// n = 64 and 128 run on the kernel's padded row stride (kernels/stride.ts, unaliasedStride), the rest unpadded.
const previous = getKernelBackend();
afterAll(() => setKernelBackend(previous));

function symmetric(n: number, seed: string, gram: boolean): Float64Array {
  const rng = seedrandom(seed);
  if (gram) {
    const rows = 2 * n + 3;
    const x = Array.from({ length: rows * n }, () => rng() - 0.5);
    const g = new Float64Array(n * n);
    for (let i = 0; i < n; i++) for (let j = 0; j < n; j++) for (let r = 0; r < rows; r++) g[i * n + j] += x[r * n + i] * x[r * n + j];
    return g;
  }
  const a = new Float64Array(n * n);
  for (let i = 0; i < n; i++) for (let j = i; j < n; j++) a[i * n + j] = a[j * n + i] = 2 * rng() - 1; // indefinite
  return a;
}

describe("symmetricMaxEigenvalue (Jacobi): WebAssembly kernel ≡ JavaScript, both against ml-matrix", () => {
  for (const n of [1, 2, 3, 7, 33, 64, 101, 128]) {
    for (const gram of [true, false]) {
      it(`n = ${n}, ${gram ? "Gram (PSD)" : "indefinite"}`, () => {
        const a = symmetric(n, `jac-${n}-${gram}`, gram);
        const copy = a.slice();
        setKernelBackend("wasm");
        const w = symmetricMaxEigenvalue(a, n);
        setKernelBackend("scalar");
        const s = symmetricMaxEigenvalue(a, n);
        expect(Object.is(w, symmetricMaxEigenvalueJs(a, n))).toBe(true);
        expect(Object.is(w, s)).toBe(true);
        expect(Array.from(a)).toEqual(Array.from(copy)); // the input is not modified
        const ev = new EigenvalueDecomposition(
          new MlMatrix(Array.from({ length: n }, (_, i) => Array.from(a.subarray(i * n, i * n + n)))),
          {
            assumeSymmetric: true,
          },
        );
        const want = Math.max(...ev.realEigenvalues);
        let fro = 0;
        for (const x of a) fro += x * x;
        expect(Math.abs(w - want)).toBeLessThanOrEqual(1e-13 * Math.sqrt(fro));
      });
    }
  }

  it("diagonal, zero and NaN-holding matrices: the same bits on both paths", () => {
    const cases: [Float64Array, number][] = [
      [Float64Array.from([3, 0, 0, 0, -1, 0, 0, 0, 2]), 3],
      [new Float64Array(16), 4],
      [Float64Array.from([1, Number.NaN, Number.NaN, 2]), 2],
      [Float64Array.from([-0, 0, 0, -0]), 2],
    ];
    for (const [a, n] of cases) {
      setKernelBackend("wasm");
      const w = symmetricMaxEigenvalue(a, n);
      expect(Object.is(w, symmetricMaxEigenvalueJs(a, n))).toBe(true);
    }
    setKernelBackend("wasm");
    expect(symmetricMaxEigenvalue(Float64Array.from([3, 0, 0, 0, -1, 0, 0, 0, 2]), 3)).toBe(3);
    expect(symmetricMaxEigenvalue(new Float64Array(0), 0)).toBe(Number.NEGATIVE_INFINITY);
  });

  it("bad n or too few entries are typed errors naming the argument", () => {
    expect(() => symmetricMaxEigenvalue(new Float64Array(4), 2.5)).toThrow(ValueError);
    expect(() => symmetricMaxEigenvalue(new Float64Array(4), 3)).toThrow(ShapeError);
    expect(() => symmetricMaxEigenvalue(new Float64Array(4), 3)).toThrow(/\ba\b.*9 entries/);
  });
});
