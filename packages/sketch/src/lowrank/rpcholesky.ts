/**
 * Randomly pivoted partial Cholesky (RPCholesky): a rank-k Nyström approximation Â = F Fᵀ of a
 * positive-semidefinite N × N matrix A from k of its columns.
 *
 *  - `"plain"` — Chen, Epperly, Tropp & Webber, "Randomly pivoted Cholesky: practical approximation
 *    of a kernel matrix with few entry evaluations" (arXiv 2207.06503, Alg. 2.1): pivot s_i is drawn
 *    with probability ∝ the residual diagonal d = diag(A − F Fᵀ); the new column is
 *    g = A[:, s] − F F[s, :]ᵀ, F ← [F, g/√g_s], d ← d − (g/√g_s)². (k + 1)N entry evaluations.
 *  - `"accelerated"` — Epperly, Tropp & Webber, "Embrace rejection: kernel matrix approximation by
 *    accelerated randomly pivoted Cholesky" (arXiv 2410.03969, Alg. 2): a block of B candidates is
 *    drawn i.i.d. ∝ d (d frozen for the block); candidate j is then accepted with probability
 *    (its residual diagonal after the candidates already accepted in this block) / d_j, computed by
 *    Schur-complementing the B × B residual submatrix. Accepted pivots are distributed exactly as
 *    the sequential algorithm's (rejection sampling from the updated residual); the columns of the
 *    block are formed with one N × T product and a T × T Cholesky factor (BLAS-3).
 *
 * Guarantee (Chen et al., Thm 5.1): for r ≥ 1, ε > 0, η = tr(A − ⟦A⟧_r)/tr A,
 * E tr(A − Â) ≤ (1 + ε)·tr(A − ⟦A⟧_r) once k ≥ r/ε + r·log(1/(εη)). The exact identity for one
 * step, E tr(A − Â₁) = tr A − ‖A‖²_F / tr A, is what the tests check to z·SE.
 *
 * A is given as a Matrix or as a `PsdColumns` oracle (diagonal + columns), so a kernel matrix is
 * never formed; `cost.kernelEvaluations` counts the entries requested.
 */
import { Matrix, RandomStream, type SeedKey, ShapeError, ValueError, derive } from "@randattn/core";
import {
  assertFinite,
  assertInteger,
  assertMatrix,
  assertNonEmpty,
  assertNumber,
  assertOneOf,
  assertRequiredOptions,
  describe,
} from "@randattn/core/internal";
import type { Cost } from "../operators/types.js";

/** Bits of randomness of one uniform double (`RandomStream.uniform`). */
export const BITS_PER_UNIFORM = 53;

/** A PSD matrix known through its entries (e.g. a kernel matrix κ(x_a, x_b)). */
export interface PsdColumns {
  /** N, the order of A. */
  readonly size: number;
  /** diag(A), length N, entries ≥ 0. */
  diagonal(): Float64Array;
  /** A[:, indices], an N × |indices| matrix. */
  columns(indices: readonly number[]): Matrix;
  /** Flops of one entry evaluation (e.g. 2d + 1 for exp(γ⟨x, y⟩)). @default 0 */
  readonly entryFlops?: number;
}

/** The variants (module comment). */
export type RpCholeskyVariant = "plain" | "accelerated";

/** Options of {@link rpCholesky}. */
export interface RpCholeskyOptions {
  /** k, the number of pivots (1 ≤ k ≤ N). Fewer are returned if the residual trace reaches 0. */
  rank: number;
  /** One pivot at a time, or blocks with rejection (module comment). @default "plain" */
  variant?: RpCholeskyVariant;
  /** B, candidates drawn per block of the accelerated variant. @default 16 */
  blockSize?: number;
  /** Stop once tr(A − Â) ≤ tolerance·tr A. @default 0 (run to k pivots) */
  tolerance?: number;
}

/** What {@link rpCholesky} returns. */
export interface RpCholeskyResult {
  /** F (N × k'), k' ≤ k, with Â = F Fᵀ; F[pivots, :] is lower triangular with a positive diagonal. */
  readonly factor: Matrix;
  /** The pivots s_1, …, s_k' in the order chosen. */
  readonly pivots: Int32Array;
  /** diag(A − Â) ≥ 0. */
  readonly residualDiagonal: Float64Array;
  /** tr(A − Â) = Σ residualDiagonal. */
  readonly traceError: number;
  /** Candidates drawn (= k' for plain; ≥ k' for accelerated, the rest rejected). */
  readonly candidates: number;
  /** Flops, floats stored (F, d, block buffers), entries evaluated, random bits. */
  readonly cost: Cost & { kernelEvaluations: number; randomBits: number };
}

/** A dense PSD matrix as a column oracle. */
export function psdMatrixColumns(a: Matrix): PsdColumns {
  return {
    size: a.rows,
    diagonal: () => {
      const d = new Float64Array(a.rows);
      for (let i = 0; i < a.rows; i++) d[i] = a.data[i * a.cols + i];
      return d;
    },
    columns: (indices) => {
      const out = new Matrix(a.rows, indices.length);
      for (let i = 0; i < a.rows; i++)
        for (let t = 0; t < indices.length; t++) out.data[i * indices.length + t] = a.data[i * a.cols + indices[t]];
      return out;
    },
  };
}

function checkSource(a: unknown): PsdColumns {
  if (a instanceof Matrix) {
    assertMatrix(a, "a");
    assertNonEmpty(a, "a");
    if (a.rows !== a.cols) throw new ShapeError("a", "a square (PSD) matrix", a.shape);
    assertFinite(a, "a");
    return psdMatrixColumns(a);
  }
  if (a === null || typeof a !== "object") throw new ValueError("a", "a PSD Matrix or a PsdColumns oracle", describe(a));
  const s = a as PsdColumns;
  assertInteger(s.size, "a.size", 1);
  if (typeof s.diagonal !== "function" || typeof s.columns !== "function") {
    throw new ValueError("a", "an object with diagonal() and columns(indices)", "missing methods");
  }
  return s;
}

/** Draws an index ∝ d (d ≥ 0, total > 0) from one uniform by inversion of the cumulative sum. */
function drawIndex(d: Float64Array, total: number, u: number): number {
  let target = u * total;
  let last = -1;
  for (let i = 0; i < d.length; i++) {
    if (d[i] <= 0) continue;
    last = i;
    target -= d[i];
    if (target < 0) return i;
  }
  return last; // rounding: u·total ≥ Σ d by an ulp
}

/**
 * Randomly pivoted partial Cholesky (module comment).
 * @param a the PSD matrix, dense or as an entry oracle.
 * @param options rank k, variant, block size, tolerance.
 * @param seed pivots are drawn from `derive(seed, "rpCholesky")`.
 * @returns `{ factor, pivots, residualDiagonal, traceError, candidates, cost }`.
 * @throws ShapeError / NonFiniteError for a bad matrix; ValueError for bad options or a negative
 *   diagonal; NumericalError never (a vanishing residual ends the factorization early).
 */
export function rpCholesky(a: Matrix | PsdColumns, options: RpCholeskyOptions, seed: SeedKey): RpCholeskyResult {
  const src = checkSource(a);
  assertRequiredOptions(options, "options");
  const n = src.size;
  assertInteger(options.rank, "options.rank", 1, n);
  const variant = options.variant ?? "plain";
  assertOneOf(variant, "options.variant", ["plain", "accelerated"] as const);
  const blockSize = options.blockSize ?? 16;
  assertInteger(blockSize, "options.blockSize", 1);
  const tolerance = options.tolerance ?? 0;
  assertNumber(tolerance, "options.tolerance", { min: 0, max: 1 });
  const entryFlops = src.entryFlops ?? 0;
  const k = options.rank;
  const d = Float64Array.from(src.diagonal());
  if (d.length !== n) throw new ShapeError("a.diagonal()", `length ${n}`, String(d.length));
  for (let i = 0; i < n; i++) {
    if (!Number.isFinite(d[i]) || d[i] < 0) throw new ValueError("a", "a PSD matrix (finite diagonal ≥ 0)", `diag[${i}] = ${d[i]}`);
  }
  let trace0 = 0;
  for (let i = 0; i < n; i++) trace0 += d[i];
  const rng = new RandomStream(derive(seed, "rpCholesky"));
  // F is held column-major by pivot (cols[j] = F[:, j]) and packed at the end.
  const cols: Float64Array[] = [];
  const pivots: number[] = [];
  let kernelEvaluations = n;
  let flops = n * entryFlops;
  let uniforms = 0;
  let candidates = 0;
  const total = () => {
    let t = 0;
    for (let i = 0; i < n; i++) t += d[i];
    return t;
  };
  const done = (t: number) => !(t > 0) || t <= tolerance * trace0;
  if (variant === "plain") {
    while (pivots.length < k) {
      const t = total();
      flops += n;
      if (done(t)) break;
      const s = drawIndex(d, t, rng.uniform());
      uniforms++;
      candidates++;
      const col = src.columns([s]).data;
      kernelEvaluations += n;
      flops += n * entryFlops;
      const g = Float64Array.from(col);
      for (const f of cols) {
        const fs = f[s];
        if (fs !== 0) for (let i = 0; i < n; i++) g[i] -= f[i] * fs;
      }
      flops += 2 * n * cols.length;
      const gs = g[s];
      if (!(gs > 0)) {
        d[s] = 0; // rounding left a zero-residual pivot: remove it from the distribution
        continue;
      }
      const inv = 1 / Math.sqrt(gs);
      for (let i = 0; i < n; i++) {
        g[i] *= inv;
        d[i] = Math.max(0, d[i] - g[i] * g[i]);
      }
      d[s] = 0;
      flops += 3 * n;
      cols.push(g);
      pivots.push(s);
    }
  } else {
    while (pivots.length < k) {
      const t = total();
      flops += n;
      if (done(t)) break;
      const b = Math.min(blockSize, k - pivots.length);
      const cand: number[] = [];
      for (let j = 0; j < b; j++) cand.push(drawIndex(d, t, rng.uniform()));
      uniforms += b;
      candidates += b;
      // Residual submatrix G = A[S, S] − F[S, :] F[S, :]ᵀ of the candidates.
      const block = src.columns(cand); // n × b
      kernelEvaluations += n * b;
      flops += n * b * entryFlops;
      const g = new Float64Array(b * b);
      for (let p = 0; p < b; p++) {
        for (let q = 0; q < b; q++) {
          let v = block.data[cand[p] * b + q];
          for (const f of cols) v -= f[cand[p]] * f[cand[q]];
          g[p * b + q] = v;
        }
      }
      flops += 2 * b * b * cols.length;
      const g0 = Float64Array.from(g);
      const accepted: number[] = [];
      for (let j = 0; j < b; j++) {
        const u = rng.uniform();
        uniforms++;
        const gjj = g[j * b + j];
        // Accept with probability (residual diagonal given the accepted ones) / (frozen d).
        if (!(gjj > 0) || u * d[cand[j]] >= gjj) continue;
        accepted.push(j);
        // Schur complement: G ← G − G[:, j] G[j, :] / G_jj (only later candidates matter).
        for (let p = j + 1; p < b; p++) {
          const gp = g[p * b + j] / gjj;
          for (let q = j + 1; q < b; q++) g[p * b + q] -= gp * g[j * b + q];
        }
        flops += 2 * (b - j) * (b - j);
      }
      if (accepted.length === 0) continue;
      // Cholesky of the accepted residual block G0[T, T] = L Lᵀ, then F_T = (A[:, T] − F F[T, :]ᵀ) L⁻ᵀ.
      const m = accepted.length;
      const l = new Float64Array(m * m);
      let ok = true;
      for (let p = 0; p < m && ok; p++) {
        for (let q = 0; q <= p; q++) {
          let v = g0[accepted[p] * b + accepted[q]];
          for (let r = 0; r < q; r++) v -= l[p * m + r] * l[q * m + r];
          if (p === q) {
            if (!(v > 0)) ok = false;
            else l[p * m + p] = Math.sqrt(v);
          } else l[p * m + q] = v / l[q * m + q];
        }
      }
      flops += (m * m * m) / 3;
      if (!ok) {
        // Rounding made the accepted block numerically singular: drop this block's draws.
        for (const j of accepted) d[cand[j]] = Math.min(d[cand[j]], Math.max(0, g[j * b + j]));
        continue;
      }
      const h: Float64Array[] = accepted.map((j) => {
        const col = new Float64Array(n);
        for (let i = 0; i < n; i++) col[i] = block.data[i * b + j];
        for (const f of cols) {
          const fs = f[cand[j]];
          if (fs !== 0) for (let i = 0; i < n; i++) col[i] -= f[i] * fs;
        }
        return col;
      });
      flops += 2 * n * m * cols.length;
      // Forward substitution on the columns: F_p = (H_p − Σ_{q<p} L_pq F_q) / L_pp.
      for (let p = 0; p < m; p++) {
        const col = h[p];
        for (let q = 0; q < p; q++) {
          const lpq = l[p * m + q];
          const fq = h[q];
          for (let i = 0; i < n; i++) col[i] -= lpq * fq[i];
        }
        const inv = 1 / l[p * m + p];
        for (let i = 0; i < n; i++) {
          col[i] *= inv;
          d[i] = Math.max(0, d[i] - col[i] * col[i]);
        }
        d[cand[accepted[p]]] = 0;
        cols.push(col);
        pivots.push(cand[accepted[p]]);
      }
      flops += n * m * m + 3 * n * m;
    }
  }
  const r = cols.length;
  const factor = new Matrix(n, r);
  for (let j = 0; j < r; j++) for (let i = 0; i < n; i++) factor.data[i * r + j] = cols[j][i];
  const floatsStored = n * r + n + (variant === "accelerated" ? n * blockSize + 2 * blockSize * blockSize : n);
  return {
    factor,
    pivots: Int32Array.from(pivots),
    residualDiagonal: d,
    traceError: total(),
    candidates,
    cost: { flops, floatsStored, kernelEvaluations, randomBits: BITS_PER_UNIFORM * uniforms },
  };
}
