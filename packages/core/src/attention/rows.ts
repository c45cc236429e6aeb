/**
 * Row kernels shared by the materialized and the streaming attention loops: apply κ to one row of
 * logits in place, under a mask row, in the additive or multiplicative form (§3.2). Internal.
 */
import type { MaskForm } from "./mask.js";
import { type ResolvedKernel, kernelValueError } from "./kernel.js";

const NEG_INF = Number.NEGATIVE_INFINITY;

/**
 * Max of the allowed logits of s[o, o+w). `mk` (offset `mo`) is the 0/1 mask row or null (all
 * allowed). Additive form: masked logits become s + ∅_κ = −∞ in place, as in κ(QKᵀ + M).
 * Multiplicative form: logits are left as they are (κ runs on all of them, ⊙ M̃ comes after).
 * Returns −∞ when no entry is allowed.
 */
export function allowedRowMax(s: Float64Array, o: number, w: number, mk: Uint8Array | null, mo: number, form: MaskForm): number {
  let mx = NEG_INF;
  if (mk === null) {
    for (let j = o; j < o + w; j++) if (s[j] > mx) mx = s[j];
  } else if (form === "additive") {
    for (let c = 0; c < w; c++) {
      if (mk[mo + c] === 0) s[o + c] = NEG_INF;
      else if (s[o + c] > mx) mx = s[o + c];
    }
  } else {
    for (let c = 0; c < w; c++) if (mk[mo + c] === 1 && s[o + c] > mx) mx = s[o + c];
  }
  return mx;
}

/**
 * s ← exp(s − shift) on s[o, o+w) (the max-shifted exponential kernel: the shift is a per-row
 * constant that cancels in Z⁻¹A and keeps logits of ±1e4 finite), then ⊙ M̃ in the multiplicative
 * form (masked entries set to exactly 0). Returns the row sum (NaN/∞ when a logit was not finite).
 */
export function expRow(s: Float64Array, o: number, w: number, shift: number, mk: Uint8Array | null, mo: number, form: MaskForm): number {
  let sum = 0;
  if (mk !== null && form === "multiplicative") {
    // A = κ(QKᵀ) ⊙ M̃ with 0·κ := 0 (the indicator formula of §3.2): a masked entry is exactly 0
    // even where exp overflowed, so it cannot leak an ∞ or NaN into the row.
    for (let c = 0; c < w; c++) {
      const e = Math.exp(s[o + c] - shift);
      const v = mk[mo + c] === 1 ? e : 0;
      s[o + c] = v;
      sum += v;
    }
    return sum;
  }
  for (let j = o; j < o + w; j++) {
    const e = Math.exp(s[j] - shift);
    s[j] = e;
    sum += e;
  }
  return sum;
}

/**
 * s ← f(s) on s[o, o+w) for a dot kernel κ(v,w) = f(scale·⟨v,w⟩) whose scale is already in s.
 * Additive: masked entries get f(s + ∅_κ) = f(−∞) = 0. Multiplicative: f on the entries, then ⊙ M̃.
 * Validates κ ≥ 0 and finite on allowed entries (query `i`, first key `j0`). Returns the row sum.
 */
export function dotRow(
  r: ResolvedKernel,
  s: Float64Array,
  o: number,
  w: number,
  mk: Uint8Array | null,
  mo: number,
  form: MaskForm,
  i: number,
  j0: number,
): number {
  const f = r.f!;
  let sum = 0;
  for (let c = 0; c < w; c++) {
    const masked = mk !== null && mk[mo + c] === 0;
    let v: number;
    if (!masked) {
      v = f(s[o + c]);
      if (!(v >= 0 && v < Number.POSITIVE_INFINITY)) throw kernelValueError(r, v, i, j0 + c);
      sum += v;
    } else if (form === "additive") {
      v = f(s[o + c] + NEG_INF); // = f(−∞) = 0: checked when the kernel was resolved
    } else {
      v = 0; // κ(QKᵀ) ⊙ M̃ with 0·κ := 0: the masked κ value never reaches A, so it is not evaluated.
    }
    s[o + c] = v;
  }
  return sum;
}

/** Index (relative to o) of the first non-finite entry of s[o, o+w), or −1. */
export function firstNonFinite(s: Float64Array, o: number, w: number): number {
  for (let c = 0; c < w; c++) if (!Number.isFinite(s[o + c])) return c;
  return -1;
}
