/**
 * The low-rank drivers are composed from shared pieces (issue 9, PARLA style): `blockedQb` runs the
 * range finder's `powerIterate`/`renormalize` on its residual — so the overflow rescaling of
 * orthonormalization "none" protects it too — and `qb`/`randomizedSvd` take the range-finder
 * driver as `options.rangeFinder`.
 */
import { Matrix, ValueError, derive, matmulTransA } from "@randattn/core";
import { describe, expect, it } from "vitest";
import { type RangeFinderDriver, blockedQb, qb, randomizedSvd, rangeFinderResolved } from "../../src/lowrank/index.js";
import { spectra, withSpectrum } from "./spectra.js";

const a = withSpectrum(60, 40, spectra.exponential(40), 81);
const huge = new Matrix(
  a.rows,
  a.cols,
  a.data.map((x) => x * 1e100),
);

describe("blockedQb composes the range finder's power iteration", () => {
  it('A·1e100 with 3 power steps and orthonormalization "none" succeeds, as qb does', () => {
    // (A Aᵀ)³ A Ω scales like σ₁⁷ ≈ 1e700 without the power-of-two rescaling: ±∞ and a NonFiniteError.
    const fromQb = qb(huge, { rank: 10, powerIterations: 3, orthonormalization: "none" }, [82]);
    expect(fromQb.B.data.every(Number.isFinite)).toBe(true);
    const opts = { tolerance: 1e-3, blockSize: 4, powerIterations: 3, orthonormalization: "none" } as const;
    const scaled = blockedQb(huge, opts, [83]);
    const plain = blockedQb(a, opts, [83]);
    expect(scaled.converged).toBe(true);
    expect(scaled.relativeError).toBeLessThanOrEqual(1e-3);
    // same draw, same directions: the rank and the relative error do not depend on the scale of A
    expect(scaled.rank).toBe(plain.rank);
    expect(Math.abs(scaled.relativeError - plain.relativeError)).toBeLessThan(1e-9);
    expect(scaled.B.data.every(Number.isFinite)).toBe(true);
  });

  it("power steps on the residual still lower the rank reached on a slow spectrum", () => {
    const slow = withSpectrum(80, 60, spectra.slow(60), 84);
    const q0 = blockedQb(slow, { tolerance: 0.5, blockSize: 2, powerIterations: 0 }, [85]);
    const q2 = blockedQb(slow, { tolerance: 0.5, blockSize: 2, powerIterations: 2 }, [85]);
    expect(q2.rank).toBeLessThan(q0.rank);
  });
});

describe("qb and randomizedSvd take the range-finder driver as an argument", () => {
  it("the default driver is the range finder; a custom one is called with the resolved options and derive(seed, 'rangeFinder')", () => {
    const calls: { rank: number; samples: number; seed: unknown }[] = [];
    const driver: RangeFinderDriver = (m, r, seed) => {
      calls.push({ rank: r.rank, samples: r.samples, seed });
      return rangeFinderResolved(m, { ...r, powerIterations: 0 }, seed);
    };
    const custom = qb(a, { rank: 6, oversampling: 2, rangeFinder: driver }, [86]);
    expect(calls).toEqual([{ rank: 6, samples: 8, seed: derive([86], "rangeFinder") }]);
    // the driver's Q is the one used (= the q = 0 range finder), and B = QᵀA
    const q0 = qb(a, { rank: 6, oversampling: 2, powerIterations: 0 }, [86]);
    expect(Array.from(custom.Q.data)).toEqual(Array.from(q0.Q.data));
    expect(Array.from(custom.B.data)).toEqual(Array.from(matmulTransA(custom.Q, a).data));
    // …and differs from the default driver's (q = 2)
    expect(Array.from(qb(a, { rank: 6, oversampling: 2 }, [86]).Q.data)).not.toEqual(Array.from(q0.Q.data));
    const svd = randomizedSvd(a, { rank: 6, oversampling: 2, rangeFinder: driver }, [86]);
    expect(calls).toHaveLength(2);
    expect(svd.S.length).toBe(6);
  });

  it("a driver that is not a function, or returns no m × ℓ Q, is a ValueError naming options.rangeFinder", () => {
    for (const bad of [3 as never, (() => ({ Q: new Matrix(2, 2), cost: { flops: 0, floatsStored: 0 } })) as never]) {
      try {
        qb(a, { rank: 4, rangeFinder: bad }, [87]);
        expect.unreachable();
      } catch (e) {
        expect(e).toBeInstanceOf(ValueError);
        expect((e as ValueError).argument).toBe("options.rangeFinder");
      }
    }
  });
});
