// Plain-loop references for the numerical-extremes tests. The literal formula Y = Z⁻¹AV with
// A = exp(scale·QKᵀ) overflows for logits of ±1e4 — which is the point of these tests — so the
// reference evaluates the same mathematical value as P = softmax(row) written with the row max
// subtracted (exp(s − m)/Σexp(s − m) = exp(s)/Σexp(s) exactly in real arithmetic), entry by entry.
import { Matrix } from "@randattn/core";

export type Rows = number[][];

/** X W by the triple loop. */
export function refMatmul(x: Matrix, w: Matrix): Matrix {
  const out = new Matrix(x.rows, w.cols);
  for (let i = 0; i < x.rows; i++)
    for (let j = 0; j < w.cols; j++) {
      let s = 0;
      for (let p = 0; p < x.cols; p++) s += x.data[i * x.cols + p] * w.data[p * w.cols + j];
      out.data[i * w.cols + j] = s;
    }
  return out;
}

/**
 * Y[i,:] = Σ_j P[i,j] V[j,:] with P[i,:] = κ-weights of query i normalized over its allowed keys.
 * `kappaLog(s)` returns log κ for the softmax kernel (s itself) — shifted by the row max — or, with
 * `kind: "dot"`, κ = f(s) is used directly and normalized before multiplying by V.
 */
export function refAttention(
  q: Matrix,
  k: Matrix,
  v: Matrix,
  opts: { scale?: number; causalOffset?: number; kind?: "softmax" | "dot"; f?: (s: number) => number } = {},
): Matrix {
  const d = q.cols;
  const scale = opts.scale ?? (opts.kind === "dot" ? 1 : 1 / Math.sqrt(d));
  const y = new Matrix(q.rows, v.cols);
  for (let i = 0; i < q.rows; i++) {
    const logits: number[] = [];
    const allowed: number[] = [];
    for (let j = 0; j < k.rows; j++) {
      if (opts.causalOffset !== undefined && j > opts.causalOffset + i) continue;
      let s = 0;
      for (let p = 0; p < d; p++) s += q.data[i * d + p] * k.data[j * d + p];
      logits.push(scale * s);
      allowed.push(j);
    }
    let w: number[];
    if (opts.kind === "dot") w = logits.map((s) => (opts.f as (s: number) => number)(s));
    else {
      const m = Math.max(...logits);
      w = logits.map((s) => Math.exp(s - m));
    }
    const z = w.reduce((a, b) => a + b, 0);
    for (let t = 0; t < allowed.length; t++) {
      const pij = w[t] / z;
      for (let c = 0; c < v.cols; c++) y.data[i * v.cols + c] += pij * v.data[allowed[t] * v.cols + c];
    }
  }
  return y;
}

/** max |a − b| / max |b| (0/0 = 0). */
export function relMaxErr(a: Matrix, b: Matrix): number {
  let num = 0;
  let den = 0;
  for (let i = 0; i < b.data.length; i++) {
    num = Math.max(num, Math.abs(a.data[i] - b.data[i]));
    den = Math.max(den, Math.abs(b.data[i]));
  }
  return den === 0 ? num : num / den;
}

/** True when every entry is finite. */
export function allFinite(m: Matrix | ArrayLike<number>): boolean {
  const d = m instanceof Matrix ? m.data : m;
  for (let i = 0; i < d.length; i++) if (!Number.isFinite(d[i])) return false;
  return true;
}

/** A copy of m with every entry multiplied by s. */
export function scaled(m: Matrix, s: number): Matrix {
  return new Matrix(
    m.rows,
    m.cols,
    m.data.map((x) => x * s),
  );
}

/** Largest |logit| of scale·QKᵀ (for tolerances: an exp argument of size L carries ≈ L·ε error). */
export function maxLogit(q: Matrix, k: Matrix, scale: number): number {
  let m = 0;
  for (let i = 0; i < q.rows; i++)
    for (let j = 0; j < k.rows; j++) {
      let s = 0;
      for (let p = 0; p < q.cols; p++) s += q.data[i * q.cols + p] * k.data[j * q.cols + p];
      m = Math.max(m, Math.abs(scale * s));
    }
  return m;
}

/**
 * Relative tolerance for attention outputs whose logits reach |L|: the logits themselves carry a
 * rounding error of ≈ d·ε·|L| (a d-term dot product), which exp turns into a relative weight error of
 * that size; plus the usual O(N·ε) of the sums. 64ε·(1 + d·|L|) bounds both with room for the
 * different summation orders of blocked kernels.
 */
export function logitTolerance(maxAbsLogit: number, d: number): number {
  return 64 * Number.EPSILON * (1 + d * maxAbsLogit) + 1e-13;
}

/** Multi-head weights as the reference needs them (same layout as core's MultiHeadWeights). */
export interface RefHeads {
  queries: Matrix[];
  keys: Matrix[];
  values: Matrix[];
  output: Matrix;
}

/**
 * Multi-head / grouped-query attention by plain loops (§2.2, §4.1): Q_h = X_Q W_Q^h,
 * K_g = X_KV W_K^g, V_g = X_KV W_V^g with g = ⌊h/(H/G)⌋, Y = concat_h(Y_h) W_O.
 */
export function refMultiHead(xQ: Matrix, xKV: Matrix, w: RefHeads, opts: { causalOffset?: number; scale?: number } = {}): Matrix {
  const h = w.queries.length;
  const g = w.keys.length;
  const parts = w.queries.map((wq, head) => {
    const grp = Math.floor(head / (h / g));
    return refAttention(refMatmul(xQ, wq), refMatmul(xKV, w.keys[grp]), refMatmul(xKV, w.values[grp]), opts);
  });
  const dV = parts[0].cols;
  const concat = new Matrix(xQ.rows, h * dV);
  parts.forEach((p, head) => {
    for (let i = 0; i < xQ.rows; i++) for (let c = 0; c < dV; c++) concat.data[i * h * dV + head * dV + c] = p.data[i * dV + c];
  });
  return refMatmul(concat, w.output);
}

/** Largest |logit| over the heads of a multi-head layer for inputs X (scale 1/√d_QK unless given). */
export function maxHeadLogit(x: Matrix, w: RefHeads, scale?: number): number {
  const h = w.queries.length;
  const g = w.keys.length;
  let m = 0;
  w.queries.forEach((wq, head) => {
    const q = refMatmul(x, wq);
    const k = refMatmul(x, w.keys[Math.floor(head / (h / g))]);
    m = Math.max(m, maxLogit(q, k, scale ?? 1 / Math.sqrt(q.cols)));
  });
  return m;
}

/** Rows stacked by a plain copy. */
export function concatRowsRef(parts: Matrix[]): Matrix {
  const cols = parts[0].cols;
  const out = new Matrix(
    parts.reduce((s, p) => s + p.rows, 0),
    cols,
  );
  let o = 0;
  for (const p of parts) {
    out.data.set(p.data, o);
    o += p.data.length;
  }
  return out;
}
