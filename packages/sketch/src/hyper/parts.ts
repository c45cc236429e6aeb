/**
 * Partial attention sums in a per-row log scale, the currency of the LSH-based sketches: a part
 * holds, for each query i, a numerator row nᵢ (≈ Σ_j A_ij V_j) and a normalizer dᵢ (≈ Σ_j A_ij),
 * both divided by e^{shiftᵢ}. Parts over disjoint key sets add (HyperAttention's causal recursion,
 * Algorithm 4, adds the diagonal blocks' and the off-diagonal block's sums row by row).
 */
export interface AttentionPart {
  /** N_Q × d_V row-major numerator, in units of e^{shift[i]}. */
  num: Float64Array;
  /** Normalizer, in units of e^{shift[i]}. */
  den: Float64Array;
  /** Per-row log scale (−∞ for a row with no contribution yet). */
  shift: Float64Array;
}

/** An empty part for `rows` queries and `dV` value columns. */
export function emptyPart(rows: number, dV: number): AttentionPart {
  return { num: new Float64Array(rows * dV), den: new Float64Array(rows), shift: new Float64Array(rows).fill(Number.NEGATIVE_INFINITY) };
}

/** Adds `part` (rows 0…part.den.length−1) into `into` at row offset `rowOffset`. */
export function addPart(into: AttentionPart, part: AttentionPart, rowOffset: number, dV: number): void {
  const rows = part.den.length;
  for (let r = 0; r < rows; r++) {
    const i = rowOffset + r;
    const a = into.shift[i];
    const b = part.shift[r];
    if (b === Number.NEGATIVE_INFINITY) continue;
    const s = Math.max(a, b);
    const fa = a === Number.NEGATIVE_INFINITY ? 0 : Math.exp(a - s);
    const fb = Math.exp(b - s);
    into.den[i] = into.den[i] * fa + part.den[r] * fb;
    for (let c = 0; c < dV; c++) into.num[i * dV + c] = into.num[i * dV + c] * fa + part.num[r * dV + c] * fb;
    into.shift[i] = s;
  }
}

/** Mutable cost accumulator (flops, floats, kernel entries, random bits, sign bits). */
export interface CostTally {
  flops: number;
  floatsStored: number;
  kernelEvaluations: number;
  randomBits: number;
  hashes: number;
}

/** A zeroed tally. */
export function newTally(): CostTally {
  return { flops: 0, floatsStored: 0, kernelEvaluations: 0, randomBits: 0, hashes: 0 };
}

/** scale·⟨q_i, k_j⟩ on raw row-major data. */
export function logit(q: Float64Array, i: number, k: Float64Array, j: number, d: number, scale: number): number {
  let s = 0;
  const oi = i * d;
  const oj = j * d;
  for (let t = 0; t < d; t++) s += q[oi + t] * k[oj + t];
  return s * scale;
}

/**
 * Exact causal sums of the square block (query i sees keys j ≤ i), the base case of the causal
 * recursion: (n(n+1)/2) kernel entries.
 */
export function exactCausalPart(
  q: Float64Array,
  k: Float64Array,
  v: Float64Array,
  n: number,
  d: number,
  dV: number,
  scale: number,
  tally: CostTally,
): AttentionPart {
  const part = emptyPart(n, dV);
  const row = new Float64Array(n);
  for (let i = 0; i < n; i++) {
    let mx = Number.NEGATIVE_INFINITY;
    for (let j = 0; j <= i; j++) {
      row[j] = logit(q, i, k, j, d, scale);
      if (row[j] > mx) mx = row[j];
    }
    let den = 0;
    for (let j = 0; j <= i; j++) {
      const w = Math.exp(row[j] - mx);
      den += w;
      for (let c = 0; c < dV; c++) part.num[i * dV + c] += w * v[j * dV + c];
    }
    part.den[i] = den;
    part.shift[i] = mx;
  }
  const pairs = (n * (n + 1)) / 2;
  tally.flops += pairs * (2 * d + 2 + 2 * dV);
  tally.kernelEvaluations += pairs;
  tally.floatsStored = Math.max(tally.floatsStored, n);
  return part;
}

/** Divides numerators by normalizers; `why` names what to change when a normalizer is 0. */
export function finishPart(part: AttentionPart, dV: number): { output: Float64Array; zeroRow: number } {
  const rows = part.den.length;
  const out = new Float64Array(rows * dV);
  for (let i = 0; i < rows; i++) {
    const den = part.den[i];
    if (!(den > 0)) return { output: out, zeroRow: i };
    for (let c = 0; c < dV; c++) out[i * dV + c] = part.num[i * dV + c] / den;
  }
  return { output: out, zeroRow: -1 };
}
