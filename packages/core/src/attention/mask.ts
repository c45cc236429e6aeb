/**
 * Attention masks (Serret 2026, §3.2). Query row i may attend only to the keys j ∈ S_i:
 *   A = (1_{j∈S_i} κ(Q[i,:], K[j,:]))_{i,j}
 *     = κ(QKᵀ + M)      with M[i,j] = 0 on S_i and ∅_κ (−∞ for exp) elsewhere   (additive form)
 *     = κ(QKᵀ) ⊙ M̃      with M̃[i,j] = 1_{S_i}(j)                                 (multiplicative form).
 * In the multiplicative form a masked entry is exactly 0 whatever κ gives there (0·κ := 0, as in
 * the indicator formula), so an overflowing κ on a masked pair never leaks a NaN.
 *
 * Kinds: causal (query i sees j ≤ offset + i, offset default N_KV − N_Q — ERRATA: with N_Q < N_KV
 * the queries are the newest tokens), padding (keys j < keyLength are real), arbitrary allowed
 * sets S_i, and a dense 0/1 matrix M̃.
 */
import { ShapeError, ValueError } from "../errors.js";
import { Matrix } from "../matrix.js";
import { assertInteger, assertShape, describe } from "../validate.js";
import { type Kernel, resolveKernel } from "./kernel.js";

/** Which keys each query row may attend to. */
export type Mask =
  /** Query i sees keys j ≤ offset + i. `offset` default N_KV − N_Q (queries are the newest tokens). */
  | { kind: "causal"; offset?: number }
  /** Keys j < keyLength are real, the rest padding (masked for every query). */
  | { kind: "padding"; keyLength: number }
  /** S_i per query row: `sets[i]` lists the key indices row i may attend to. */
  | { kind: "allowed"; sets: readonly (readonly number[])[] }
  /** M̃ ∈ {0,1}^{N_Q×N_KV}: 1 = allowed. */
  | { kind: "dense"; allowed: Matrix };

/** The mask kinds. */
export type MaskKind = Mask["kind"];
/** All mask kinds. */
export const MASK_KINDS: readonly MaskKind[] = ["causal", "padding", "allowed", "dense"];

/** Additive κ(QKᵀ + M) or multiplicative κ(QKᵀ) ⊙ M̃ — equal by §3.2. */
export type MaskForm = "additive" | "multiplicative";
/** Both mask forms. */
export const MASK_FORMS: readonly MaskForm[] = ["additive", "multiplicative"];

/** Causal mask: query i sees keys j ≤ offset + i. @param offset @default N_KV − N_Q */
export function causalMask(offset?: number): Mask {
  if (offset !== undefined) assertInteger(offset, "offset", Number.MIN_SAFE_INTEGER);
  return offset === undefined ? { kind: "causal" } : { kind: "causal", offset };
}

/** Padding mask: only keys j < keyLength are attended to. */
export function paddingMask(keyLength: number): Mask {
  assertInteger(keyLength, "keyLength", 0);
  return { kind: "padding", keyLength };
}

/** Mask from explicit allowed sets S_i (one array of key indices per query row). */
export function allowedSetsMask(sets: readonly (readonly number[])[]): Mask {
  if (!Array.isArray(sets)) throw new ValueError("sets", "an array of arrays of key indices", describe(sets));
  return { kind: "allowed", sets };
}

/** Mask from a dense 0/1 matrix M̃ (N_Q×N_KV, 1 = allowed). */
export function denseMask(allowed: Matrix): Mask {
  return { kind: "dense", allowed };
}

/** `CompiledMask.tile` status: no entry of the tile is allowed (the tile can be skipped). */
export const TILE_NONE = 0;
/** `CompiledMask.tile` status: every entry of the tile is allowed (no masking needed). */
export const TILE_ALL = 1;
/** `CompiledMask.tile` status: mixed; the 0/1 tile has been written to `out`. */
export const TILE_PARTIAL = 2;
/** A tile of the mask is fully masked, fully allowed, or mixed. */
export type TileStatus = typeof TILE_NONE | typeof TILE_ALL | typeof TILE_PARTIAL;

/** The stored form of a compiled mask: row limits (prefix masks), CSR sets, or the dense 0/1 matrix. */
export interface CompiledMaskParts {
  /** Prefix masks (causal, padding): row i allows keys j < limit[i]. */
  limit?: Int32Array;
  /** Allowed sets in CSR form (sorted, unique): row i's keys are colIdx[rowPtr[i] … rowPtr[i+1]). */
  rowPtr?: Int32Array;
  colIdx?: Int32Array;
  /** Dense M̃, N_Q × N_KV row-major 0/1. */
  dense?: Float64Array;
}

/**
 * A mask checked against N_Q × N_KV and put in a form the attention loops query tile by tile,
 * never as an N_Q×N_KV array unless the user gave one (dense): causal and padding become a per-row
 * prefix length, allowed sets a sorted compressed-row list. O(N_Q + Σ|S_i|) memory.
 */
export class CompiledMask {
  readonly nQ: number;
  readonly nKV: number;
  /** Number of allowed keys of each query row. */
  readonly allowedCount: Int32Array;
  private readonly limit?: Int32Array; // prefix masks: row i allows j < limit[i]
  private readonly rowPtr?: Int32Array; // allowed sets (CSR, sorted, unique)
  private readonly colIdx?: Int32Array;
  private readonly dense?: Float64Array;

  constructor(nQ: number, nKV: number, parts: CompiledMaskParts) {
    this.nQ = nQ;
    this.nKV = nKV;
    this.limit = parts.limit;
    this.rowPtr = parts.rowPtr;
    this.colIdx = parts.colIdx;
    this.dense = parts.dense;
    const count = new Int32Array(nQ);
    for (let i = 0; i < nQ; i++) {
      if (this.limit) count[i] = this.limit[i];
      else if (this.rowPtr) count[i] = this.rowPtr[i + 1] - this.rowPtr[i];
      else {
        let c = 0;
        const d = this.dense!;
        for (let j = i * nKV; j < (i + 1) * nKV; j++) c += d[j];
        count[i] = c;
      }
    }
    this.allowedCount = count;
  }

  /**
   * The compiled parts of query rows [i0, i1) as plain typed arrays (copies): `new CompiledMask(i1 − i0,
   * nKV, parts)` is this mask restricted to those rows, row r being row i0 + r here — what a worker
   * thread needs to compute a block of query rows (node/parallel-attention.ts).
   */
  rowParts(i0: number, i1: number): CompiledMaskParts {
    if (this.limit) return { limit: this.limit.slice(i0, i1) };
    if (this.rowPtr) {
      const base = this.rowPtr[i0];
      const rowPtr = new Int32Array(i1 - i0 + 1);
      for (let i = i0; i <= i1; i++) rowPtr[i - i0] = this.rowPtr[i] - base;
      return { rowPtr, colIdx: this.colIdx!.slice(base, this.rowPtr[i1]) };
    }
    return { dense: this.dense!.slice(i0 * this.nKV, i1 * this.nKV) };
  }

  /** Prefix masks (causal, padding): the row limits (row i allows keys j < limit[i]); else undefined. */
  prefixLimits(): Int32Array | undefined {
    return this.limit;
  }

  /** Whether query i may attend to key j. */
  allows(i: number, j: number): boolean {
    if (this.limit) return j < this.limit[i];
    if (this.rowPtr) {
      const lo = lowerBound(this.colIdx!, this.rowPtr[i], this.rowPtr[i + 1], j);
      return lo < this.rowPtr[i + 1] && this.colIdx![lo] === j;
    }
    return this.dense![i * this.nKV + j] === 1;
  }

  /**
   * Status of the tile rows [i0, i1) × keys [j0, j1). For `TILE_PARTIAL`, `out` (length ≥
   * (i1−i0)(j1−j0)) holds the 0/1 tile row-major with row stride j1 − j0; otherwise `out` is untouched.
   */
  tile(i0: number, i1: number, j0: number, j1: number, out: Uint8Array): TileStatus {
    const w = j1 - j0;
    if (this.limit) {
      let lo = Number.POSITIVE_INFINITY;
      let hi = Number.NEGATIVE_INFINITY;
      for (let i = i0; i < i1; i++) {
        const l = this.limit[i];
        if (l < lo) lo = l;
        if (l > hi) hi = l;
      }
      if (hi <= j0) return TILE_NONE;
      if (lo >= j1) return TILE_ALL;
      for (let i = i0; i < i1; i++) {
        const o = (i - i0) * w;
        const l = this.limit[i] - j0; // allowed tile columns: c < l
        for (let c = 0; c < w; c++) out[o + c] = c < l ? 1 : 0;
      }
      return TILE_PARTIAL;
    }
    let allowed = 0;
    if (this.rowPtr) {
      const ci = this.colIdx!;
      out.fill(0, 0, (i1 - i0) * w);
      for (let i = i0; i < i1; i++) {
        const end = this.rowPtr[i + 1];
        const o = (i - i0) * w - j0;
        for (let p = lowerBound(ci, this.rowPtr[i], end, j0); p < end && ci[p] < j1; p++) {
          out[o + ci[p]] = 1;
          allowed++;
        }
      }
    } else {
      const d = this.dense!;
      for (let i = i0; i < i1; i++) {
        const o = (i - i0) * w;
        const s = i * this.nKV + j0;
        for (let c = 0; c < w; c++) {
          const a = d[s + c];
          out[o + c] = a;
          allowed += a;
        }
      }
    }
    if (allowed === 0) return TILE_NONE;
    if (allowed === (i1 - i0) * w) return TILE_ALL;
    return TILE_PARTIAL;
  }
}

function lowerBound(a: Int32Array, lo: number, hi: number, x: number): number {
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if (a[mid] < x) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

/**
 * Checks `mask` against a query count `nQ` and key count `nKV` and compiles it.
 * @throws ValueError on an unknown kind, a non-integer offset/keyLength, a keyLength outside
 *   [0, N_KV], a key index outside [0, N_KV) or a dense entry other than 0/1; ShapeError when the
 *   number of sets or the dense matrix's shape does not match N_Q × N_KV.
 */
export function compileMask(mask: unknown, nQ: number, nKV: number, argument = "options.mask"): CompiledMask {
  // masks store rows and key indices in Int32Arrays: sizes must fit (and be integers at all)
  assertInteger(nQ, "nQ", 0, 2 ** 31 - 1);
  assertInteger(nKV, "nKV", 0, 2 ** 31 - 1);
  if (mask === null || typeof mask !== "object") throw new ValueError(argument, "a Mask object { kind, … }", describe(mask));
  const m = mask as { kind?: unknown; offset?: unknown; keyLength?: unknown; sets?: unknown; allowed?: unknown };
  switch (m.kind) {
    case "causal": {
      // ERRATA: query i sits at absolute position offset + i, offset = N_KV − N_Q by default.
      const offset = m.offset === undefined ? nKV - nQ : m.offset;
      assertInteger(offset, `${argument}.offset`, Number.MIN_SAFE_INTEGER);
      const limit = new Int32Array(nQ);
      for (let i = 0; i < nQ; i++) limit[i] = Math.max(0, Math.min(nKV, offset + i + 1));
      return new CompiledMask(nQ, nKV, { limit });
    }
    case "padding": {
      assertInteger(m.keyLength, `${argument}.keyLength`, 0, nKV);
      return new CompiledMask(nQ, nKV, { limit: new Int32Array(nQ).fill(m.keyLength) });
    }
    case "allowed": {
      const sets = m.sets;
      if (!Array.isArray(sets)) throw new ValueError(`${argument}.sets`, "an array of N_Q arrays of key indices", describe(sets));
      if (sets.length !== nQ)
        throw new ShapeError(`${argument}.sets`, `${nQ} sets (one per query row, N_Q = ${nQ})`, `${sets.length} sets`);
      const rowPtr = new Int32Array(nQ + 1);
      const cols: number[] = [];
      for (let i = 0; i < nQ; i++) {
        const s = sets[i] as unknown;
        if (!Array.isArray(s)) throw new ValueError(`${argument}.sets[${i}]`, "an array of key indices", describe(s));
        const row = s.slice() as number[];
        for (let p = 0; p < row.length; p++) assertInteger(row[p], `${argument}.sets[${i}][${p}]`, 0, nKV - 1);
        row.sort((a, b) => a - b);
        let last = -1;
        for (const j of row) {
          if (j !== last) cols.push(j); // a set: duplicates are the same key
          last = j;
        }
        rowPtr[i + 1] = cols.length;
      }
      return new CompiledMask(nQ, nKV, { rowPtr, colIdx: Int32Array.from(cols) });
    }
    case "dense": {
      assertShape(m.allowed, `${argument}.allowed`, nQ, nKV, "N_Q×N_KV");
      const d = m.allowed.data;
      for (let p = 0; p < d.length; p++) {
        if (d[p] !== 0 && d[p] !== 1) {
          throw new ValueError(`${argument}.allowed`, "entries 0 or 1", `${d[p]} at [${Math.floor(p / nKV)}, ${p % nKV}]`);
        }
      }
      return new CompiledMask(nQ, nKV, { dense: d });
    }
    default:
      throw new ValueError(`${argument}.kind`, `one of ${MASK_KINDS.map((s) => `"${s}"`).join(", ")}`, describe(m.kind));
  }
}

function checkSizes(nQ: unknown, nKV: unknown): asserts nQ is number {
  assertInteger(nQ, "nQ");
  assertInteger(nKV, "nKV");
}

/**
 * The multiplicative mask M̃ ∈ {0,1}^{N_Q×N_KV}, M̃[i,j] = 1_{S_i}(j) (§3.2).
 */
export function multiplicativeMask(mask: Mask, nQ: number, nKV: number): Matrix {
  checkSizes(nQ, nKV);
  const c = compileMask(mask, nQ, nKV, "mask");
  const out = new Matrix(nQ, nKV);
  const t = new Uint8Array(nQ * nKV);
  const s = c.tile(0, nQ, 0, nKV, t);
  if (s === TILE_ALL) out.data.fill(1);
  else if (s === TILE_PARTIAL) for (let p = 0; p < t.length; p++) out.data[p] = t[p];
  return out;
}

/**
 * The additive mask M (§3.2): M[i,j] = 0 for j ∈ S_i and ∅_κ otherwise (−∞ for the exponential
 * kernel, the default). Attention computes κ(QKᵀ + M) with it.
 * @param kernel The kernel whose ∅_κ fills masked entries. @default softmax
 * @throws ValueError when the kernel has no ∅_κ (a dot kernel with f(−∞) ≠ 0, a pairwise kernel):
 *   use `multiplicativeMask` for those.
 */
export function additiveMask(mask: Mask, nQ: number, nKV: number, kernel?: Kernel): Matrix {
  checkSizes(nQ, nKV);
  const r = resolveKernel(kernel, 1, "kernel");
  if (r.empty === undefined) {
    throw new ValueError("kernel", "a kernel with an empty value ∅_κ (softmax, or dot with f(−∞) = 0)", `kernel "${r.name}" has none`);
  }
  const mt = multiplicativeMask(mask, nQ, nKV);
  const out = new Matrix(nQ, nKV);
  for (let p = 0; p < out.data.length; p++) out.data[p] = mt.data[p] === 1 ? 0 : r.empty;
  return out;
}

/** Indices of the query rows with no allowed key (S_i = ∅) — the rows `onEmptyRow` decides. */
export function emptyMaskRows(mask: Mask, nQ: number, nKV: number): number[] {
  checkSizes(nQ, nKV);
  const c = compileMask(mask, nQ, nKV, "mask");
  const out: number[] = [];
  for (let i = 0; i < nQ; i++) if (c.allowedCount[i] === 0) out.push(i);
  return out;
}
