/**
 * QB decompositions A ≈ Q B with Q (m × r) orthonormal and B = Qᵀ A (r × n).
 *
 * - {@link qb}: fixed rank — the range finder followed by one product (HMT Alg. 4.1 stage A + B = QᵀA).
 * - {@link blockedQb}: fixed accuracy — Martinsson & Voronin (2016) randQB_b with the error
 *   indicator of Yu, Gu & Li (2018) randQB_EI: blocks of b new directions are drawn from the
 *   residual A − QB (never formed: (A − QB)Ω = AΩ − Q(BΩ)), re-orthogonalized against Q ("twice is
 *   enough"), and since Q is orthonormal and B = QᵀA,
 *       ‖A − QB‖_F² = ‖A‖_F² − ‖B‖_F²,
 *   which is updated row by row of B — so the rank is trimmed to the first row at which the
 *   tolerance is met, not rounded up to a block. The subtraction loses accuracy once the residual is
 *   below ~1e3·ε·‖A‖_F² (and whenever it claims the tolerance is met); there the residual is
 *   recomputed exactly (2mnr flops) before the rank is fixed.
 */
import { Matrix, type SeedKey, ValueError, concatCols, concatRows, derive, sliceCols, sliceRows } from "@randattn/core";
import { assertInteger, assertNumber, assertOneOf, describe, matmulInto, matmulTransAInto } from "@randattn/core/internal";
import { type Cost, createSketch } from "../operators/index.js";
import { householderQr } from "./householder.js";
import {
  type Orthonormalization,
  type PowerOperator,
  type RangeFinderDriver,
  type RangeFinderOptions,
  type TestMatrixFactory,
  TEST_KINDS,
  type TestMatrixKind,
  checkInputMatrix,
  checkInputScale,
  packForPowerSteps,
  powerIterate,
  qrFlops,
  rangeFinderPacked,
  rangeFinderResolved,
  safeScaled,
  resolveRangeFinder,
  testMatrixDistribution,
  transposedProduct,
} from "./rangefinder.js";

export interface QbResult {
  /** Q (m × ℓ), orthonormal columns. */
  Q: Matrix;
  /** B = Qᵀ A (ℓ × n). */
  B: Matrix;
  /** Flops spent and peak floats held. */
  cost: Cost;
}

/** Options of {@link qb} and `randomizedSvd`: the range finder's, plus the driver that finds Q. */
export interface QbOptions extends RangeFinderOptions {
  /**
   * The range-finder driver (PARLA style: a driver takes its pieces as arguments), called with the
   * validated, resolved options, the input (exactly rescaled for extreme magnitudes) and
   * `derive(seed, "rangeFinder")`. @default the HMT range finder with power iterations (`rangeFinder`'s)
   */
  rangeFinder?: RangeFinderDriver;
}

/**
 * Fixed-rank randomized QB: Q from {@link rangeFinder}, B = Qᵀ A (`transposedProduct`).
 * @param input A (m × n), finite.
 * @param options see {@link RangeFinderOptions} (rank k, oversampling p, power iterations q, …); Q has ℓ = min(k + p, m, n) columns.
 * @param seed the test matrix's seed (same stream as `rangeFinder(a, options, seed)`).
 * @throws as {@link rangeFinder}.
 */
export function qb(input: Matrix, options: QbOptions, seed: SeedKey): QbResult {
  const mx = checkInputScale(input, "a");
  const r = resolveRangeFinder(options, input.rows, input.cols);
  const driver = options.rangeFinder ?? rangeFinderResolved;
  if (typeof driver !== "function") throw new ValueError("options.rangeFinder", "a range-finder driver function", describe(driver));
  // extreme scales run on an exactly rescaled copy (see safeScaled); B is scaled back
  const { scaled: a, factor } = safeScaled(input, mx);
  // The default driver shares A's packed panels with B = QᵀA (rangefinder.ts' packForPowerSteps).
  const packed = driver === rangeFinderResolved ? packForPowerSteps(a, r) : null;
  let found: ReturnType<RangeFinderDriver>;
  let b: Matrix;
  try {
    found =
      driver === rangeFinderResolved
        ? rangeFinderPacked(a, r, derive(seed, "rangeFinder"), packed)
        : driver(a, r, derive(seed, "rangeFinder"));
    const Q = found?.Q;
    if (!(Q instanceof Matrix) || Q.rows !== a.rows || Q.cols < 1 || Q.cols > Math.min(a.rows, a.cols)) {
      throw new ValueError("options.rangeFinder", `a driver returning { Q: ${a.rows}×ℓ, cost }`, describe(Q));
    }
    // B = QᵀA directly (transposedProduct: the narrow Q is the strided operand, A is packed along its rows)
    const l = Q.cols;
    b = new Matrix(l, a.cols, packed !== null ? packed.transposedProduct(Q.data, l) : transposedProduct(a.data, Q.data, a.rows, a.cols, l));
  } finally {
    packed?.release();
  }
  const Q = found.Q;
  const cost: Cost = { ...found.cost };
  const l = Q.cols;
  if (factor !== 1) for (let i = 0; i < b.data.length; i++) b.data[i] *= factor;
  cost.flops += 2 * a.rows * a.cols * l;
  cost.floatsStored += l * a.cols;
  return { Q, B: b, cost };
}

export interface BlockedQbOptions {
  /** Relative Frobenius tolerance ε ∈ (0, 1): stop once ‖A − QB‖_F ≤ ε‖A‖_F. */
  tolerance: number;
  /** Block size b (directions added per step). @default 16 */
  blockSize?: number;
  /** Largest rank allowed. @default min(m, n) */
  maxRank?: number;
  /**
   * Power iterations on the residual per block.
   * @default 0 — unlike `rangeFinder`/`qb`/`randomizedSvd` (2). Why: each block of the blocked QB
   * is drawn from the current RESIDUAL A − QB, whose leading directions are the ones still missing,
   * and the loop stops on the error indicator ‖A‖²_F − ‖B‖²_F ≤ ε²‖A‖²_F (Yu, Gu & Li 2018), so the
   * tolerance is certified however the blocks were found; power steps only lower the rank reached
   * on slowly decaying spectra, at 2 extra passes over A per step and per block. The fixed-rank
   * drivers have no such certificate, so they default to 2 power steps.
   */
  powerIterations?: number;
  /** Re-normalization between power steps. @default "qr" */
  orthonormalization?: Orthonormalization;
  /** Test-matrix kind or factory (see RangeFinderOptions). @default "gaussian" */
  testMatrix?: TestMatrixKind | TestMatrixFactory;
}

export interface BlockedQbResult extends QbResult {
  /** r, the rank reached (columns of Q, rows of B). */
  rank: number;
  /** Whether ‖A − QB‖_F ≤ tolerance·‖A‖_F was reached within maxRank. */
  converged: boolean;
  /** ‖A − QB‖_F / ‖A‖_F (from the indicator ‖A‖² − ‖B‖², or exact once that is unreliable). */
  relativeError: number;
}

/** (A − QB)·X = A X − Q (B X), given the two products `ax` = A X (m × c, overwritten) and `bx` = B X (r × c). */
function subtractQ(ax: Matrix, q: Matrix, bx: Matrix): Matrix {
  if (q.cols === 0) return ax;
  const p = new Float64Array(ax.rows * ax.cols);
  matmulInto(q.data, bx.data, p, q.rows, q.cols, ax.cols, false);
  for (let i = 0; i < p.length; i++) ax.data[i] -= p[i];
  return ax;
}

/** (A − QB)·Z for a dense Z (n × c). */
function residualTimes(a: Matrix, q: Matrix, b: Matrix, z: Matrix): Matrix {
  const ax = new Matrix(a.rows, z.cols);
  matmulInto(a.data, z.data, ax.data, a.rows, a.cols, z.cols, false);
  const bx = new Matrix(q.cols, z.cols);
  if (q.cols > 0) matmulInto(b.data, z.data, bx.data, q.cols, b.cols, z.cols, false);
  return subtractQ(ax, q, bx);
}

/** (A − QB)ᵀ Y = AᵀY − Bᵀ(QᵀY), n × c. */
function residualTransposeTimes(a: Matrix, q: Matrix, b: Matrix, y: Matrix): Matrix {
  const n = a.cols;
  const c = y.cols;
  const z = new Matrix(n, c);
  matmulTransAInto(a.data, y.data, z.data, a.rows, n, c, false);
  if (q.cols > 0) {
    const qy = new Float64Array(q.cols * c);
    matmulTransAInto(q.data, y.data, qy, a.rows, q.cols, c, false);
    const bqy = new Float64Array(n * c);
    matmulTransAInto(b.data, qy, bqy, q.cols, n, c, false);
    for (let i = 0; i < z.data.length; i++) z.data[i] -= bqy[i];
  }
  return z;
}

/** The residual R = A − QB as a power-iteration operator (never formed). */
function residualOperator(a: Matrix, q: Matrix, b: Matrix): PowerOperator {
  const m = a.rows;
  const n = a.cols;
  const r = q.cols;
  return {
    times: (x) => residualTimes(a, q, b, x),
    transposeTimes: (y) => residualTransposeTimes(a, q, b, y),
    stepFlops: (c) => 4 * m * n * c + 8 * m * r * c,
  };
}

/** X − Q(QᵀX) for orthonormal Q (one Gram–Schmidt pass of a block). */
function projectOut(q: Matrix, x: Matrix): Matrix {
  if (q.cols === 0) return x;
  const c = x.cols;
  const qx = new Float64Array(q.cols * c);
  matmulTransAInto(q.data, x.data, qx, q.rows, q.cols, c, false);
  const out = x.clone();
  const p = new Float64Array(q.rows * c);
  matmulInto(q.data, qx, p, q.rows, q.cols, c, false);
  for (let i = 0; i < p.length; i++) out.data[i] -= p[i];
  return out;
}

function sumSquares(a: Float64Array): number {
  let s = 0;
  for (let i = 0; i < a.length; i++) s += a[i] * a[i];
  return s;
}

/**
 * Fixed-accuracy blocked randomized QB (module doc): adds blocks of directions until
 * ‖A − QB‖_F ≤ tolerance·‖A‖_F or maxRank, and returns the rank reached (trimmed to the first row
 * meeting the tolerance). A zero matrix returns rank 0 (Q: m × 0, B: 0 × n).
 * @param input A (m × n), finite.
 * @param seed block i's test matrix is drawn from `derive(seed, "blockedQb", "block", i)`.
 * @throws ShapeError / NonFiniteError for a bad `a`; ValueError for tolerance ∉ (0, 1), bad block size, maxRank, modes.
 */
export function blockedQb(input: Matrix, options: BlockedQbOptions, seed: SeedKey): BlockedQbResult {
  checkInputMatrix(input, "a");
  // extreme scales run on an exactly rescaled copy (‖A‖² of a 1e-300 matrix is 0); B is scaled back
  const { scaled: a, factor } = safeScaled(input);
  if (options === null || typeof options !== "object")
    throw new ValueError("options", "an options object with tolerance", describe(options));
  const m = a.rows;
  const n = a.cols;
  assertNumber(options.tolerance, "options.tolerance", { positive: true, max: 1 });
  const tol = options.tolerance;
  const blockSize = options.blockSize ?? 16;
  assertInteger(blockSize, "options.blockSize", 1);
  const maxRank = options.maxRank ?? Math.min(m, n);
  assertInteger(maxRank, "options.maxRank", 1, Math.min(m, n));
  const powerIterations = options.powerIterations ?? 0;
  assertInteger(powerIterations, "options.powerIterations", 0);
  const mode = options.orthonormalization ?? "qr";
  assertOneOf(mode, "options.orthonormalization", ["qr", "lu", "none"] as const);
  const testMatrix = options.testMatrix ?? "gaussian";
  if (typeof testMatrix !== "function") assertOneOf(testMatrix, "options.testMatrix", TEST_KINDS);

  const normA2 = sumSquares(a.data);
  const threshold = tol * tol * normA2;
  const cost: Cost = { flops: 2 * m * n, floatsStored: 0 };
  let q = new Matrix(m, 0);
  let b = new Matrix(0, n);
  let residual2 = normA2;
  let converged = normA2 <= threshold; // a zero matrix is already approximated
  const unreliable = 1e3 * Number.EPSILON * normA2;
  for (let block = 0; !converged && q.cols < maxRank; block++) {
    const r = q.cols;
    const bi = Math.min(blockSize, maxRank - r);
    const omega = createSketch(testMatrixDistribution(testMatrix, n, bi), derive(seed, "blockedQb", "block", block));
    // (A − QB)Ω through the operator (A·Ω and B·Ω), so a structured Ω is never materialized.
    let y = subtractQ(omega.sketchRight(a), q, r > 0 ? omega.sketchRight(b) : new Matrix(0, bi));
    cost.flops += 2 * m * n * bi + 4 * m * r * bi;
    // Power steps on the residual R = A − QB, through the range finder's shared pieces (the same
    // re-normalization, with its overflow rescaling for "none").
    y = powerIterate(residualOperator(a, q, b), y, powerIterations, mode, cost);
    // Orthonormalize, then re-orthogonalize against Q and once more ("twice is enough").
    let qi = householderQr(y).q;
    qi = householderQr(projectOut(q, qi)).q;
    cost.flops += 2 * qrFlops(m, bi) + 4 * m * r * bi;
    // B_i = Q_iᵀ A − (Q_iᵀ Q) B.
    const bNew = new Matrix(bi, n);
    matmulTransAInto(qi.data, a.data, bNew.data, m, bi, n, false);
    if (r > 0) {
      const qq = new Float64Array(bi * r);
      matmulTransAInto(qi.data, q.data, qq, m, bi, r, false);
      const corr = new Float64Array(bi * n);
      matmulInto(qq, b.data, corr, bi, r, n, false);
      for (let i = 0; i < corr.length; i++) bNew.data[i] -= corr[i];
    }
    cost.flops += 2 * m * n * bi + 2 * m * bi * r + 2 * bi * r * n;
    // Error indicator, row by row: keep the first `keep` rows at which the tolerance is met. Once
    // ‖A‖² − ‖B‖² has cancelled to rounding level (or claims success), confirm with the exact residual.
    let keep = bi;
    let stop = false;
    for (let t = 0; t < bi; t++) {
      residual2 -= sumSquares(bNew.data.subarray(t * n, (t + 1) * n));
      if (residual2 <= threshold || residual2 <= unreliable) {
        const qTry = concatCols([q, sliceCols(qi, 0, t + 1)]);
        const bTry = concatRows([b, sliceRows(bNew, 0, t + 1)]);
        residual2 = exactResidual2(a, qTry, bTry);
        cost.flops += 2 * m * n * qTry.cols + 2 * m * n;
        if (residual2 <= threshold) {
          keep = t + 1;
          converged = true;
          break;
        }
        if (residual2 <= unreliable) {
          // Below rounding level there is nothing left to find: more directions would only add noise.
          keep = t + 1;
          stop = true;
          break;
        }
      }
    }
    q = concatCols([q, keep === bi ? qi : sliceCols(qi, 0, keep)]);
    b = concatRows([b, keep === bi ? bNew : sliceRows(bNew, 0, keep)]);
    if (stop) break;
  }
  cost.floatsStored = m * q.cols + q.cols * n + m * blockSize + n * blockSize;
  if (factor !== 1) for (let i = 0; i < b.data.length; i++) b.data[i] *= factor;
  return { Q: q, B: b, cost, rank: q.cols, converged, relativeError: normA2 > 0 ? Math.sqrt(Math.max(residual2, 0) / normA2) : 0 };
}

/** ‖A − QB‖_F², formed in row blocks so no extra m × n matrix is held. */
function exactResidual2(a: Matrix, q: Matrix, b: Matrix): number {
  const m = a.rows;
  const n = a.cols;
  const r = q.cols;
  const rowsPer = Math.max(1, Math.floor(65536 / Math.max(1, n)));
  const buf = new Float64Array(rowsPer * n);
  let s = 0;
  for (let i0 = 0; i0 < m; i0 += rowsPer) {
    const i1 = Math.min(m, i0 + rowsPer);
    const rows = i1 - i0;
    const out = buf.subarray(0, rows * n);
    if (r > 0) matmulInto(q.data.subarray(i0 * r, i1 * r), b.data, out, rows, r, n, false);
    else out.fill(0);
    for (let t = 0; t < rows * n; t++) {
      const d = a.data[i0 * n + t] - out[t];
      s += d * d;
    }
  }
  return s;
}
