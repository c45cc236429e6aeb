/**
 * Approximate matrix multiplication by sampling (Drineas, Kannan & Mahoney 2006): AB = Σ_k A⁽ᵏ⁾B₍ₖ₎
 * (outer products of column k of A and row k of B) is estimated by C R = Σ_t c_t A⁽ⁱᵗ⁾B₍ᵢₜ₎ from
 * s sampled k's. With replacement, c_t = 1/(s p_{i_t}) and
 *   E‖AB − CR‖²_F = (1/s)(Σ_k ‖A⁽ᵏ⁾‖²‖B₍ₖ₎‖²/p_k − ‖AB‖²_F),
 * minimized by p_k ∝ ‖A⁽ᵏ⁾‖·‖B₍ₖ₎‖ (Cauchy–Schwarz): the "optimal" probabilities.
 */
import { Matrix, NumericalError, type SeedKey, ShapeError, ValueError, matmul, selectRows } from "@randattn/core";
import { assertFinite, assertInteger, assertMatrix, assertNonEmpty, assertRequiredOptions } from "@randattn/core/internal";
import type { Cost } from "../operators/types.js";
import { normalizeWeights, validateProbabilities } from "../random/probabilities.js";
import { type SamplingDesign, drawWeightedSample } from "./design.js";

/** Probabilities over the inner index k of A·B: explicit, or a named scheme. */
export type MatmulProbabilities = ArrayLike<number> | "uniform" | "optimal";

/** Options of {@link sampledMatmul}. */
export interface SampledMatmulOptions {
  /** s, the number of sampled inner indices (≥ 1; ≤ support for without-replacement designs). */
  samples: number;
  /** p over k = 0…n−1 (Σ = 1 within 1e-9), or `"uniform"` / `"optimal"` (∝ ‖A[:,k]‖·‖B[k,:]‖, DKM). */
  probabilities: MatmulProbabilities;
  /** How indices are drawn and weighted (sampling/design.ts). @default "with-replacement" */
  design?: SamplingDesign;
}

/** Result of {@link sampledMatmul}. */
export interface SampledMatmulResult {
  /** C R ≈ A B (m × p). */
  output: Matrix;
  cost: Cost;
  /** The s sampled inner indices. */
  indices: Int32Array;
  /** Their weights c_t (1/(s p_k) with replacement). */
  weights: Float64Array;
  /** The sampling distribution used (length n). */
  probabilities: Float64Array;
}

function checkPair(a: Matrix, b: Matrix, aName: string, bName: string): void {
  assertMatrix(a, aName);
  assertMatrix(b, bName);
  assertNonEmpty(a, aName);
  assertNonEmpty(b, bName);
  if (a.cols !== b.rows) throw new ShapeError(bName, `${a.cols}×* (rows = ${aName}.cols)`, b.shape);
  assertFinite(a, aName);
  assertFinite(b, bName);
}

/** ‖A⁽ᵏ⁾‖² for each column k. */
export function squaredColumnNorms(a: Matrix): Float64Array {
  assertMatrix(a, "a");
  const out = new Float64Array(a.cols);
  for (let i = 0; i < a.rows; i++) for (let k = 0; k < a.cols; k++) out[k] += a.data[i * a.cols + k] ** 2;
  return out;
}

/** ‖B₍ₖ₎‖² for each row k. */
export function squaredRowNorms(b: Matrix): Float64Array {
  assertMatrix(b, "b");
  const out = new Float64Array(b.rows);
  for (let k = 0; k < b.rows; k++) {
    let s = 0;
    for (let c = 0; c < b.cols; c++) s += b.data[k * b.cols + c] ** 2;
    out[k] = s;
  }
  return out;
}

/**
 * DKM-optimal probabilities p_k = ‖A⁽ᵏ⁾‖·‖B₍ₖ₎‖ / Σ_l ‖A⁽ˡ⁾‖·‖B₍ₗ₎‖.
 * @throws ValueError when every product of norms is 0 (AB = 0 from every k).
 */
export function optimalMatmulProbabilities(a: Matrix, b: Matrix, names: readonly [string, string] = ["a", "b"]): Float64Array {
  const [aName, bName] = names;
  checkPair(a, b, aName, bName);
  const ca = squaredColumnNorms(a);
  const rb = squaredRowNorms(b);
  return normalizeWeights(
    Float64Array.from(ca, (v, k) => Math.sqrt(v * rb[k])),
    `${aName}, ${bName} (column-norm × row-norm products)`,
  );
}

/** Resolves a {@link MatmulProbabilities} into a validated vector of length n. */
export function resolveMatmulProbabilities(
  a: Matrix,
  b: Matrix,
  probabilities: MatmulProbabilities,
  argument = "probabilities",
): Float64Array {
  if (probabilities === "uniform") return new Float64Array(a.cols).fill(1 / a.cols);
  if (probabilities === "optimal") return optimalMatmulProbabilities(a, b);
  if (typeof probabilities === "string") {
    throw new ShapeError(argument, `a probability vector of length ${a.cols}, "uniform" or "optimal"`, JSON.stringify(probabilities));
  }
  const p = validateProbabilities(probabilities, argument);
  if (p.length !== a.cols) throw new ShapeError(argument, `length ${a.cols} (a.cols)`, `length ${p.length}`);
  return p;
}

/**
 * C R ≈ A B by sampling s columns of A and the matching rows of B.
 * @param a A, m × n. @param b B, n × p.
 * @param options `samples` (s ≥ 1), `probabilities` and the design.
 * @param seed the SeedKey of the draw.
 * @throws ShapeError on mismatched shapes, ValueError on s or p, NonFiniteError on NaN/±Inf.
 */
export function sampledMatmul(a: Matrix, b: Matrix, options: SampledMatmulOptions, seed: SeedKey): SampledMatmulResult {
  assertRequiredOptions(options, "options");
  checkPair(a, b, "a", "b");
  const s = options.samples;
  assertInteger(s, "options.samples", 1);
  const p = resolveMatmulProbabilities(a, b, options.probabilities);
  const { indices, weights } = drawWeightedSample(p, { samples: s, design: options.design ?? "with-replacement" }, seed);
  const { rows: m, cols: n } = a;
  const pc = b.cols;
  // C = A[:, J]·diag(c) (m × s), R = B[J, :] (s × p), then the tiled kernel for C R.
  const c = new Matrix(m, s);
  for (let i = 0; i < m; i++) for (let t = 0; t < s; t++) c.data[i * s + t] = weights[t] * a.data[i * n + indices[t]];
  const r = selectRows(b, indices);
  const output = matmul(c, r);
  const probabilityFlops = options.probabilities === "optimal" ? 2 * m * n + 2 * n * pc + 2 * n : 0;
  return {
    output,
    cost: { flops: m * s + 2 * m * s * pc + probabilityFlops, floatsStored: m * s + s * pc + 2 * s },
    indices,
    weights,
    probabilities: p,
  };
}

/**
 * The exact expected squared error of the with-replacement estimator (DKM 2006, Lemma 4):
 *   E‖AB − CR‖²_F = (1/s)(Σ_k ‖A⁽ᵏ⁾‖²‖B₍ₖ₎‖²/p_k − ‖AB‖²_F).
 * `probabilities` may also be an m × n matrix of per-row distributions (row i of AB estimated from
 * its own sample, as the per-query attention scheme does); the error is then the sum over rows of
 * the same formula with A's row i in place of A.
 * @throws ValueError when some p_k = 0 while A⁽ᵏ⁾B₍ₖ₎ ≠ 0 (the estimator is then biased).
 */
export function dkmExpectedSquaredError(a: Matrix, b: Matrix, s: number, probabilities: ArrayLike<number> | Matrix): number {
  checkPair(a, b, "a", "b");
  assertInteger(s, "s", 1);
  const { rows: m, cols: n } = a;
  const ab = matmul(a, b);
  const rb = squaredRowNorms(b);
  let exact = 0;
  for (const v of ab.data) exact += v * v;
  const check = (pk: number, mass: number, where: string) => {
    if (pk === 0 && mass > 0) throw new ValueError("probabilities", "p > 0 wherever the outer product is nonzero", `p = 0 at ${where}`);
  };
  let total = 0;
  if (probabilities instanceof Matrix) {
    if (probabilities.rows !== m || probabilities.cols !== n)
      throw new ShapeError("probabilities", `${m}×${n} (per-row distributions)`, probabilities.shape);
    for (let i = 0; i < m; i++) {
      validateProbabilities(probabilities.rowView(i), `probabilities[${i}]`);
      for (let k = 0; k < n; k++) {
        const mass = a.data[i * n + k] ** 2 * rb[k];
        const pk = probabilities.data[i * n + k];
        check(pk, mass, `[${i}, ${k}]`);
        if (mass > 0) total += mass / pk;
      }
    }
  } else {
    const p = validateProbabilities(probabilities);
    if (p.length !== n) throw new ShapeError("probabilities", `length ${n} (a.cols)`, `length ${p.length}`);
    const ca = squaredColumnNorms(a);
    for (let k = 0; k < n; k++) {
      const mass = ca[k] * rb[k];
      check(p[k], mass, `[${k}]`);
      if (mass > 0) total += mass / p[k];
    }
  }
  // Σ mass/p_k can leave float64 (e.g. ‖A⁽ᵏ⁾‖²‖B₍ₖ₎‖² ≈ 1e600 for entries of 1e150): say so, never ∞/NaN.
  if (!Number.isFinite(total) || !Number.isFinite(exact)) {
    throw new NumericalError("a, b", "Σ_k ‖A⁽ᵏ⁾‖²‖B₍ₖ₎‖²/p_k and ‖AB‖²_F within float64 range", `${total} and ${exact}`);
  }
  // The expectation is ≥ 0 (Cauchy–Schwarz: ‖AB‖²_F ≤ Σ_k ‖A⁽ᵏ⁾‖²‖B₍ₖ₎‖²/p_k); a negative value is
  // cancellation in the difference (rounding of two nearly equal sums), so clamp it to 0.
  return Math.max(0, total - exact) / s;
}
