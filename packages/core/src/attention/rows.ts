/**
 * Row kernels shared by the materialized and the streaming attention loops: apply κ to one row of
 * logits in place, under a mask row, in the additive or multiplicative form (§3.2). Internal.
 */
import { ValueError } from "../errors.js";
import { allFinite, attentionInto, attentionPlan } from "./fast.js";
import { type KnownMaxima, attentionMaximaInFloat32Range } from "../kernels/range32.js";
import { fusedSoftmaxAttention, useFusedSoftmax } from "../kernels/softmaxWasm.js";
import { Matrix } from "../matrix.js";
import type { Mask, MaskForm } from "./mask.js";
import { type ResolvedKernel, kernelValueError } from "./kernel.js";
import { type ResolvedAttention, emptyRow, overflowError } from "./options.js";

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

/**
 * Softmax attention on the fused WebAssembly path (`fast/softmaxWasm.ts`): S = (scale·Q)Kᵀ, the
 * row max, exp and sum, and A V all in kernel memory with the SIMD exp — materialized (one
 * N_KV-wide tile per block of query rows) unless `keyBlock` is given (streaming, online softmax).
 * Then the row checks of the JavaScript loops, in row order and with the same errors: a row with no
 * allowed key → `emptyRow` (throws unless onEmptyRow "zero"; its Y, scores, normalizer and rowShift
 * are 0), a logit that is not finite → `overflowError` naming the query and the key.
 * Returns `null` (nothing computed) when the fused path does not apply — not softmax, the scalar
 * backend, a small problem under "auto", or more kernel memory than allowed — so the caller runs its
 * JavaScript loop.
 */
export function fusedSoftmax(
  queries: Matrix,
  keys: Matrix,
  values: Matrix | undefined,
  r: ResolvedAttention,
  opts: { keyBlock?: number; queryBlock?: number; out?: Float64Array; scores?: Float64Array },
): { rowShift: Float64Array; normalizer: Float64Array } | null {
  if (r.kernel.kind !== "softmax") return null;
  const nQ = queries.rows;
  const nKV = keys.rows;
  const d = queries.cols;
  if (!useFusedSoftmax(nQ, nKV, d)) return null;
  const stats = fusedSoftmaxAttention({
    queries: queries.data,
    keys: keys.data,
    values: values?.data,
    nQ,
    nKV,
    d,
    dV: values ? values.cols : 0,
    scale: r.kernel.scale,
    mask: r.mask,
    keyBlock: opts.keyBlock,
    queryBlock: opts.queryBlock,
    out: opts.out,
    scores: opts.scores,
  });
  if (stats === null) return null;
  const { rowMax, normalizer } = stats;
  checkFusedRows(queries, keys, r, normalizer, rowMax);
  return { rowShift: rowMax, normalizer };
}

/** The first allowed key j whose logit scale·⟨Q[i,:], K[j,:]⟩ is not finite (error path only), or −1. */
function firstNonFiniteLogit(queries: Matrix, keys: Matrix, r: ResolvedAttention, i: number): number {
  const d = queries.cols;
  const scale = r.kernel.scale;
  const q = queries.data;
  const kd = keys.data;
  for (let j = 0; j < keys.rows; j++) {
    if (r.mask && !r.mask.allows(i, j)) continue;
    let s = 0;
    for (let p = 0; p < d; p++) s += q[i * d + p] * scale * kd[j * d + p];
    if (!Number.isFinite(s)) return j;
  }
  return -1;
}

/**
 * `precision: "float32"`: Q Kᵀ and A V in float32 (max, exp, Z in float64), materialized, or
 * streaming when `blocks.blockSize` is given. On the fused WebAssembly path every mask kind and form
 * is supported (masked logits → −∞ as in float64); without it (scalar backend, no SIMD) the float32
 * kernels of `fast/attention32.ts` serve no/causal/padding masks, and other masks — or a fused
 * result that is not finite — return `null` so the caller computes in float64 (at least as accurate).
 * @throws ValueError for a kernel other than softmax — κ is only evaluated in float64.
 */
export function float32Attention(
  queries: Matrix,
  keys: Matrix,
  values: Matrix,
  r: ResolvedAttention,
  mask: Mask | undefined,
  mode: "materialized" | "streaming",
  blocks: { blockSize?: number; queryBlockSize?: number } = {},
  known?: KnownMaxima,
): Matrix | null {
  if (r.kernel.kind !== "softmax") {
    throw new ValueError(
      "options.precision",
      '"float64" unless the kernel is softmax (the float32 path has no kernel callbacks)',
      `"float32" with kernel "${r.kernel.name}"`,
    );
  }
  const nQ = queries.rows;
  const nKV = keys.rows;
  const out = new Matrix(nQ, values.cols);
  if (useFusedSoftmax(nQ, nKV, queries.cols)) {
    const stats = fusedSoftmaxAttention({
      queries: queries.data,
      keys: keys.data,
      values: values.data,
      nQ,
      nKV,
      d: queries.cols,
      dV: values.cols,
      scale: r.kernel.scale,
      mask: r.mask,
      keyBlock: mode === "streaming" ? blocks.blockSize : undefined,
      queryBlock: mode === "streaming" ? blocks.queryBlockSize : undefined,
      out: out.data,
      precision: "float32",
      // The range decision from the maxima the caller's finiteness check took (`attention`), if any.
      inFloat32Range:
        known?.queries === undefined
          ? undefined
          : attentionMaximaInFloat32Range(known.queries, known.keys, known.values, nKV, queries.cols, r.kernel.scale),
    });
    if (stats !== null) {
      checkFusedRows(queries, keys, r, stats.normalizer);
      // ±∞/NaN in Y (values beyond float32's range): the caller computes in float64 (issue #6).
      // The driver may have checked every entry already (`outputsFinite`).
      return stats.outputsFinite || allFinite(out.data) ? out : null;
    }
  }
  if (mask !== undefined && mask.kind !== "causal" && mask.kind !== "padding") return null;
  // Inputs were validated by the caller: the raw driver, not `fastAttention` (which would scan
  // Q, K, V for finiteness again). It falls back to float64 itself, so its Y is always finite.
  const plan = attentionPlan({ precision: "float32", mode, scale: r.kernel.scale, mask, onEmptyRow: r.onEmptyRow, ...blocks });
  attentionInto(plan, queries.data, keys.data, values.data, out.data, nQ, nKV, queries.cols, values.cols, known);
  return out;
}

/**
 * The row checks after a fused call, in row order: empty rows (error or zero), non-finite logits
 * (error). Also run by `attentionParallel` (node/) on the normalizers its workers return, so its
 * errors are those of `attention`.
 */
export function checkFusedRows(queries: Matrix, keys: Matrix, r: ResolvedAttention, normalizer: Float64Array, rowMax?: Float64Array): void {
  for (let i = 0; i < normalizer.length; i++) {
    const l = normalizer[i];
    if (l > 0 && l < Number.POSITIVE_INFINITY) continue;
    if (l === 0) {
      emptyRow(r, i); // throws unless onEmptyRow = "zero"; the driver wrote the zero rows
      if (rowMax) rowMax[i] = 0;
      continue;
    }
    throw overflowError(r, i, firstNonFiniteLogit(queries, keys, r, i), "logits scale·⟨Q[i,:], K[j,:]⟩");
  }
}
