/**
 * Plain-loop reference forms for the latent/cache tests: the paper's formulas written as nested
 * loops on number[][] (no kernels from the library under test), used on small sizes only.
 */
import type { Matrix, MlaWeights, Rope } from "@randattn/core";

export type Mat = number[][];

export const arr = (m: Matrix): Mat => m.toArray();

export function mm(a: Mat, b: Mat): Mat {
  const out: Mat = [];
  for (let i = 0; i < a.length; i++) {
    const row: number[] = [];
    for (let j = 0; j < b[0].length; j++) {
      let s = 0;
      for (let p = 0; p < b.length; p++) s += a[i][p] * b[p][j];
      row.push(s);
    }
    out.push(row);
  }
  return out;
}

export function tr(a: Mat): Mat {
  return a[0].map((_, j) => a.map((row) => row[j]));
}

export function hcat(parts: Mat[]): Mat {
  return parts[0].map((_, i) => parts.flatMap((p) => p[i]));
}

/** Row i rotated by R_{positions[i]} (x R_m, row convention), R_m from the Rope under test's literal-checked matrix. */
export function rotateRows(x: Mat, rope: Rope, positions: ArrayLike<number>): Mat {
  return x.map((row, i) => mm([row], arr(rope.rotationMatrix(positions[i])))[0]);
}

/**
 * Y = Z⁻¹ A V with A[i,j] = exp(scale ⟨Q_i, K_j⟩) on allowed keys j ≤ offset + i (causal) or all keys.
 */
export function literalAttention(q: Mat, k: Mat, v: Mat, scale: number, causalOffset?: number): Mat {
  return q.map((qi, i) => {
    const logits = k.map((kj) => qi.reduce((s, x, p) => s + x * kj[p], 0) * scale);
    const allowed = logits.map((_, j) => causalOffset === undefined || j <= causalOffset + i);
    const mx = Math.max(...logits.filter((_, j) => allowed[j]));
    const a = logits.map((l, j) => (allowed[j] ? Math.exp(l - mx) : 0));
    const z = a.reduce((s, x) => s + x, 0);
    return v[0].map((_, c) => a.reduce((s, aj, j) => s + aj * v[j][c], 0) / z);
  });
}

export interface LiteralMlaOptions {
  causal?: boolean;
  rope?: Rope;
  queryPositions?: number[];
  keyPositions?: number[];
}

/**
 * MLA by the literal formulas of §4.2 (unmerged): L_Q = X_Q W_LQ, L = X W_L, Q_h = L_Q W_LQQ^h,
 * K_h = L W_LK^h, V_h = L W_LV^h; decoupled part [Q_h | L_Q W_QR^h R_i], [K_h | X W_KR R_j];
 * naive RoPE (no rotary part) rotates Q_h and K_h; scale 1/√(d_head + d_R); Y = concat(Y_h) W_O.
 */
export function literalMla(xQ: Matrix, xKV: Matrix, w: MlaWeights, o: LiteralMlaOptions = {}): Mat {
  const nQ = xQ.rows;
  const nKV = xKV.rows;
  const qPos = o.queryPositions ?? Array.from({ length: nQ }, (_, i) => nKV - nQ + i);
  const kPos = o.keyPositions ?? Array.from({ length: nKV }, (_, j) => j);
  const lQ = mm(arr(xQ), arr(w.queryDown));
  const l = mm(arr(xKV), arr(w.latentDown));
  const dHead = w.queryUp[0].cols;
  const dR = w.keyRope ? w.keyRope.cols : 0;
  const scale = 1 / Math.sqrt(dHead + dR);
  let kR: Mat | undefined;
  if (w.keyRope) {
    kR = mm(arr(xKV), arr(w.keyRope));
    if (o.rope) kR = rotateRows(kR, o.rope, kPos);
  }
  const ys: Mat[] = [];
  for (let h = 0; h < w.queryUp.length; h++) {
    let q = mm(lQ, arr(w.queryUp[h]));
    let k = mm(l, arr(w.keyUp[h]));
    const v = mm(l, arr(w.valueUp[h]));
    if (kR && w.queryRope) {
      let qR = mm(lQ, arr(w.queryRope[h]));
      if (o.rope) qR = rotateRows(qR, o.rope, qPos);
      q = hcat([q, qR]);
      k = hcat([k, kR]);
    } else if (o.rope) {
      q = rotateRows(q, o.rope, qPos);
      k = rotateRows(k, o.rope, kPos);
    }
    ys.push(literalAttention(q, k, v, scale, o.causal ? nKV - nQ : undefined));
  }
  return mm(hcat(ys), arr(w.output));
}

/** ‖a − b‖_F / ‖b‖_F on nested arrays or matrices. */
export function relErr(a: Matrix | Mat, b: Matrix | Mat): number {
  const fa = Array.isArray(a) ? a.flat() : Array.from(a.data);
  const fb = Array.isArray(b) ? b.flat() : Array.from(b.data);
  if (fa.length !== fb.length) throw new Error(`size mismatch ${fa.length} vs ${fb.length}`);
  let num = 0;
  let den = 0;
  for (let i = 0; i < fa.length; i++) {
    num += (fa[i] - fb[i]) ** 2;
    den += fb[i] ** 2;
  }
  return Math.sqrt(num / den);
}
