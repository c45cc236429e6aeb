/**
 * Rotary position embedding (RoPE, Su et al. 2021 "RoFormer", the paper's [Su+23]).
 *
 * A d-dimensional row vector x at position m is rotated pairwise: pair p (of d/2) is turned by the
 * angle m·θ_p with θ_p = base^(−2p/d). Written as a matrix acting on row vectors from the right —
 * the paper's §4.2 convention, Q_h[i,:] R_i R_jᵀ K_h[j,:]ᵀ — the rotated row is x R_m, and because
 * 2-D rotations commute, R_i R_jᵀ = R_{i−j}: the score ⟨q R_i, k R_j⟩ depends on i − j only.
 *
 * Two pairings exist in the wild and give different numbers on the same input (ERRATA):
 *  - "interleaved": pairs (2p, 2p+1), as in RoFormer's eq. (34);
 *  - "half": pairs (p, p + d/2), the GPT-NeoX / Hugging Face `rotate_half` layout.
 * Both rotate pair p by the same angle m·θ_p; only which coordinates form a pair differs.
 */
import { ShapeError, ValueError } from "../errors.js";
import type { PositionalRotation } from "../attention/index.js";
import { Matrix } from "../matrix.js";
import { assertFinite, assertInteger, assertMatrix, assertNumber, assertOneOf, assertOptions } from "../validate.js";

/** Which coordinates form a rotation pair (see the module comment). */
export type RopePairing = "interleaved" | "half";

/** The pairings accepted by {@link Rope}. */
export const ROPE_PAIRINGS: readonly RopePairing[] = ["interleaved", "half"];

/** Options of {@link Rope}. */
export interface RopeOptions {
  /** Frequency base b in θ_p = b^(−2p/d). @default 10000 */
  base?: number;
  /** Coordinate pairing: RoFormer's interleaved (2p, 2p+1) or GPT-NeoX/HF's half split (p, p+d/2). @default "interleaved" */
  pairing?: RopePairing;
  /**
   * Explicit inverse frequencies θ_p (d/2 positive numbers), replacing base^(−2p/d): the scaled
   * RoPE variants of real checkpoints (Llama 3.1 `llama3`, linear, YaRN) only change θ_p.
   * @default undefined (θ_p = base^(−2p/d))
   */
  frequencies?: ArrayLike<number>;
  /**
   * Factor on cos and sin (HF's "attention_factor", YaRN's mscale ratio); 1 keeps R_m a rotation.
   * @default 1
   */
  magnitude?: number;
}

/**
 * Positions whose cos/sin rows are cached. Beyond this |position| the angles are computed on the
 * fly (same formula, same floats), so a stray huge position cannot allocate a huge table.
 */
const MAX_TABLE_POSITIONS = 1 << 16;

/**
 * The rotation frequencies θ_p = base^(−2p/d), p = 0 … d/2 − 1 (RoFormer eq. 15).
 * @param dim even head dimension d.
 * @param base frequency base. @default 10000
 */
export function ropeFrequencies(dim: number, base = 10000): Float64Array {
  assertInteger(dim, "dim");
  if (dim % 2 !== 0) throw new ValueError("dim", "an even dimension (RoPE rotates coordinate pairs)", String(dim));
  assertNumber(base, "base", { positive: true });
  const half = dim / 2;
  const theta = new Float64Array(half);
  for (let p = 0; p < half; p++) theta[p] = base ** ((-2 * p) / dim);
  return theta;
}

/**
 * Rotary position embedding for vectors of a fixed even dimension `dim`. Implements the attention
 * module's `PositionalRotation`, so it plugs into `multiHeadAttention(…, { rope })`, the MLA forms
 * (decoupled rotary part) and the KV-cache decoders.
 *
 * cos(m θ_p) and sin(m θ_p) are tabulated per integer position and the table grows (doubling) on
 * demand; negative integer positions reuse the table of |m| (cos even, sin odd); non-integer
 * positions are computed directly.
 */
export class Rope implements PositionalRotation {
  /** Head dimension d (even). */
  readonly dim: number;
  /** Frequency base. */
  readonly base: number;
  /** Coordinate pairing. */
  readonly pairing: RopePairing;
  /** θ_p = base^(−2p/d), p = 0 … d/2 − 1. */
  readonly frequencies: Float64Array;
  /** Factor on cos and sin (1 for a pure rotation). */
  readonly magnitude: number;
  // Row m of each table holds cos(m θ_p) / sin(m θ_p), p = 0 … d/2 − 1; `tableSize` rows are valid.
  private cosTable = new Float64Array(0);
  private sinTable = new Float64Array(0);
  private tableSize = 0;

  /**
   * @param dim even dimension d of the rotated vectors.
   * @throws ValueError when `dim` is not a positive even integer, `base` is not > 0, or `pairing` is unknown.
   */
  constructor(dim: number, options: RopeOptions = {}) {
    assertOptions(options, "options");
    assertInteger(dim, "dim");
    if (dim % 2 !== 0) throw new ValueError("dim", "an even dimension (RoPE rotates coordinate pairs)", String(dim));
    const base = options.base ?? 10000;
    assertNumber(base, "options.base", { positive: true });
    const pairing = options.pairing ?? "interleaved";
    assertOneOf(pairing, "options.pairing", ROPE_PAIRINGS);
    this.dim = dim;
    this.base = base;
    this.pairing = pairing;
    const magnitude = options.magnitude ?? 1;
    assertNumber(magnitude, "options.magnitude", { positive: true });
    this.magnitude = magnitude;
    if (options.frequencies !== undefined) {
      const f = options.frequencies;
      if (f === null || typeof f !== "object" || f.length !== dim / 2) {
        throw new ShapeError("options.frequencies", `${dim / 2} inverse frequencies (dim / 2)`, String(f?.length ?? f));
      }
      for (let p = 0; p < f.length; p++) assertNumber(f[p], `options.frequencies[${p}]`, { positive: true });
      this.frequencies = Float64Array.from(f);
    } else {
      this.frequencies = ropeFrequencies(dim, base);
    }
  }

  /** Makes rows 0 … n−1 of the cos/sin tables valid (capacity doubles so appends stay amortized O(1)). */
  private ensureTable(n: number): void {
    if (n <= this.tableSize) return;
    const half = this.dim / 2;
    let capacity = Math.max(16, this.cosTable.length / half);
    while (capacity < n) capacity *= 2;
    capacity = Math.min(capacity, MAX_TABLE_POSITIONS);
    if (capacity * half > this.cosTable.length) {
      const cos = new Float64Array(capacity * half);
      const sin = new Float64Array(capacity * half);
      cos.set(this.cosTable.subarray(0, this.tableSize * half));
      sin.set(this.sinTable.subarray(0, this.tableSize * half));
      this.cosTable = cos;
      this.sinTable = sin;
    }
    const theta = this.frequencies;
    for (let m = this.tableSize; m < capacity; m++) {
      const o = m * half;
      for (let p = 0; p < half; p++) {
        const angle = m * theta[p];
        this.cosTable[o + p] = this.magnitude * Math.cos(angle);
        this.sinTable[o + p] = this.magnitude * Math.sin(angle);
      }
    }
    this.tableSize = capacity;
  }

  /** Fills `cos`/`sin` (length d/2) with the angles of `position`, from the table when possible. */
  private angles(position: number, cos: Float64Array, sin: Float64Array): void {
    const half = this.dim / 2;
    const m = Math.abs(position);
    if (Number.isInteger(m) && m < MAX_TABLE_POSITIONS) {
      this.ensureTable(m + 1);
      const o = m * half;
      const sign = position < 0 ? -1 : 1;
      for (let p = 0; p < half; p++) {
        cos[p] = this.cosTable[o + p];
        sin[p] = sign * this.sinTable[o + p];
      }
    } else {
      for (let p = 0; p < half; p++) {
        const angle = position * this.frequencies[p];
        cos[p] = this.magnitude * Math.cos(angle);
        sin[p] = this.magnitude * Math.sin(angle);
      }
    }
  }

  /**
   * Rotates row i of `x` by R_{positions[i]}: returns X' with X'[i,:] = X[i,:] R_{positions[i]}.
   * Per pair (a, b) of coordinates and angle φ = m θ_p: a' = a cos φ − b sin φ, b' = a sin φ + b cos φ.
   * @param x N×d matrix (d = this.dim), finite.
   * @param positions N finite positions (usually the token indices 0, 1, …; may be negative or fractional).
   * @throws ShapeError when x.cols ≠ dim or positions.length ≠ x.rows; NonFiniteError on NaN/±Inf in x or positions.
   */
  apply(x: Matrix, positions: ArrayLike<number>): Matrix {
    assertMatrix(x, "x");
    if (x.cols !== this.dim) throw new ShapeError("x", `*×${this.dim} (cols = RoPE dim)`, x.shape);
    if (positions === null || typeof positions !== "object" || typeof positions.length !== "number") {
      throw new ShapeError("positions", `${x.rows} positions (one per row of x)`, String(positions));
    }
    if (positions.length !== x.rows) throw new ShapeError("positions", `length ${x.rows} (x.rows)`, `length ${positions.length}`);
    assertFinite(x, "x");
    assertFinite(positions, "positions");
    const d = this.dim;
    const half = d / 2;
    const out = new Matrix(x.rows, d);
    const src = x.data;
    const dst = out.data;
    const cos = new Float64Array(half);
    const sin = new Float64Array(half);
    // The pair of coordinate p: (2p, 2p+1) interleaved, (p, p + d/2) half split.
    const stride = this.pairing === "interleaved" ? 2 : 1;
    const partner = this.pairing === "interleaved" ? 1 : half;
    for (let i = 0; i < x.rows; i++) {
      this.angles(positions[i], cos, sin);
      const o = i * d;
      for (let p = 0; p < half; p++) {
        const ia = o + p * stride;
        const ib = ia + partner;
        const a = src[ia];
        const b = src[ib];
        dst[ia] = a * cos[p] - b * sin[p];
        dst[ib] = a * sin[p] + b * cos[p];
      }
    }
    return out;
  }

  /**
   * `apply` in place on columns c0 … c0 + dim − 1 of a row-major block with `ld` columns (row i by
   * R_{positions[i]}): the same arithmetic as `apply`, so the same bits, without a copy per head.
   * Internal to core's model forwards: no checks (the block and positions are finite and shaped).
   * @internal
   */
  rotateColumnsInPlace(data: Float64Array, rows: number, ld: number, c0: number, positions: ArrayLike<number>): void {
    const half = this.dim / 2;
    const cos = new Float64Array(half);
    const sin = new Float64Array(half);
    const stride = this.pairing === "interleaved" ? 2 : 1;
    const partner = this.pairing === "interleaved" ? 1 : half;
    for (let i = 0; i < rows; i++) {
      this.angles(positions[i], cos, sin);
      const o = i * ld + c0;
      for (let p = 0; p < half; p++) {
        const ia = o + p * stride;
        const ib = ia + partner;
        const a = data[ia];
        const b = data[ib];
        data[ia] = a * cos[p] - b * sin[p];
        data[ib] = a * sin[p] + b * cos[p];
      }
    }
  }

  /**
   * The d×d rotation R_m with `apply(x, [m]) = x R_m` (row-vector convention of §4.2). Block p is
   * [[cos mθ_p, sin mθ_p], [−sin mθ_p, cos mθ_p]] on the rows/cols of pair p — the transpose of
   * RoFormer's column-vector R_{Θ,m}. Meant for tests and explanation, not for hot paths.
   * @param position the position m (finite).
   */
  rotationMatrix(position: number): Matrix {
    assertNumber(position, "position");
    const d = this.dim;
    const half = d / 2;
    const cos = new Float64Array(half);
    const sin = new Float64Array(half);
    this.angles(position, cos, sin);
    const r = new Matrix(d, d);
    const stride = this.pairing === "interleaved" ? 2 : 1;
    const partner = this.pairing === "interleaved" ? 1 : half;
    for (let p = 0; p < half; p++) {
      const a = p * stride;
      const b = a + partner;
      r.data[a * d + a] = cos[p];
      r.data[a * d + b] = sin[p];
      r.data[b * d + a] = -sin[p];
      r.data[b * d + b] = cos[p];
    }
    return r;
  }
}
