// Issue #6: fastAttention at the edge of float64. A logit scale·⟨q, k⟩ beyond ≈ 1.8e308 has no
// float64 answer: a NumericalError naming queries/keys, on the fused driver and the JavaScript
// loops alike (the loops used to return NaN: ∞ − ∞ in the max shift). Values near float64's
// maximum, whose weighted sum Σ_j A_ij V_j overflows although Y (a convex combination of the rows
// of V) fits, are computed on V·2⁻⁶⁴ and scaled back exactly: a finite, exact result.
import { Matrix, NumericalError, fastAttention, getKernelBackend, setKernelBackend } from "@randattn/core";
import { afterAll, describe, expect, it } from "vitest";
import { allFinite, refAttention, relMaxErr, scaled } from "../reliability/reference.js";
import { rnd } from "./helpers.js";

const previous = getKernelBackend();
afterAll(() => {
  setKernelBackend(previous);
});

const FORMS = [{ mode: "materialized" as const }, { mode: "streaming" as const, blockSize: 5, queryBlockSize: 3 }];

describe("fastAttention at float64's limits", () => {
  for (const backend of ["wasm", "scalar"] as const) {
    for (const precision of ["float64", "float32"] as const) {
      for (const form of FORMS) {
        it(`${backend}, ${precision}, ${form.mode}: logits beyond float64 → NumericalError naming queries, keys`, () => {
          setKernelBackend(backend);
          const q = scaled(rnd(6, 4, "oq"), 1e160);
          const k = scaled(rnd(9, 4, "ok"), 1e160);
          const v = rnd(9, 2, "ov");
          expect(Number.isFinite(1e160 * 1e160)).toBe(false);
          try {
            fastAttention(q, k, v, { ...form, precision });
            expect.unreachable();
          } catch (e) {
            expect(e).toBeInstanceOf(NumericalError);
            expect((e as NumericalError).argument).toMatch(/^queries, keys/);
            expect((e as NumericalError).message).toContain("overflow");
          }
        });
        it(`${backend}, ${precision}, ${form.mode}: values ≈ 1.5e308 whose sum overflows → exact`, () => {
          setKernelBackend(backend);
          // equal logits: every row averages the values, Σ_j V_j = 9·1.5e308 = ∞ in float64
          const q = new Matrix(6, 4);
          const k = rnd(9, 4, "vk");
          const v = new Matrix(9, 2, new Float64Array(18).fill(1.5e308));
          v.data[1] = -1.5e308;
          expect(Number.isFinite(9 * 1.5e308)).toBe(false);
          const y = fastAttention(q, k, v, { ...form, precision });
          expect(allFinite(y)).toBe(true);
          expect(relMaxErr(y, refAttention(q, k, v))).toBeLessThanOrEqual(1e-12);
        });
      }
    }
  }
});
