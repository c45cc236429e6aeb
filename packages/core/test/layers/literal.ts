/**
 * Literal (loop-by-loop) reference implementations of the sublayers of §3, used to check the
 * layers as compositions. Written independently of the library's kernels: plain triple loops,
 * softmax by its definition, norms by their formulas.
 */
import {
  type FfnWeights,
  Matrix,
  type MultiHeadWeights,
  type NormParams,
  type NormPlacement,
  type SublayerNorms,
  erf,
} from "@randattn/core";

export function mm(a: Matrix, b: Matrix): Matrix {
  const out = new Matrix(a.rows, b.cols);
  for (let i = 0; i < a.rows; i++)
    for (let j = 0; j < b.cols; j++) {
      let s = 0;
      for (let k = 0; k < a.cols; k++) s += a.get(i, k) * b.get(k, j);
      out.set(i, j, s);
    }
  return out;
}

export function plus(a: Matrix, b: Matrix): Matrix {
  return new Matrix(
    a.rows,
    a.cols,
    a.data.map((v, i) => v + b.data[i]),
  );
}

export function norm(x: Matrix, p: NormParams): Matrix {
  const out = new Matrix(x.rows, x.cols);
  for (let i = 0; i < x.rows; i++) {
    const row = x.row(i);
    const mu = p.kind === "layer" ? row.reduce((a, b) => a + b, 0) / x.cols : 0;
    const s2 = row.reduce((a, b) => a + (b - mu) ** 2, 0) / x.cols;
    for (let j = 0; j < x.cols; j++) {
      const v = (p.gain[j] * (row[j] - mu)) / Math.sqrt(s2 + p.epsilon);
      out.set(i, j, p.kind === "layer" ? v + p.shift[j] : v);
    }
  }
  return out;
}

const sig = (z: number) => 1 / (1 + Math.exp(-z));
const F: Record<string, (z: number) => number> = {
  relu: (z) => Math.max(0, z),
  gelu: (z) => 0.5 * z * (1 + erf(z / Math.SQRT2)),
  "gelu-tanh": (z) => 0.5 * z * (1 + Math.tanh(Math.sqrt(2 / Math.PI) * (z + 0.044715 * z ** 3))),
  glu: sig,
  bilinear: (z) => z,
  reglu: (z) => Math.max(0, z),
  geglu: (z) => 0.5 * z * (1 + erf(z / Math.SQRT2)),
  "geglu-tanh": (z) => 0.5 * z * (1 + Math.tanh(Math.sqrt(2 / Math.PI) * (z + 0.044715 * z ** 3))),
  swiglu: (z) => z * sig(z),
};

export function ffn(x: Matrix, w: FfnWeights): Matrix {
  const a = mm(x, w.w1);
  const l = w.v ? mm(x, w.v) : undefined;
  const h = new Matrix(a.rows, a.cols);
  for (let i = 0; i < a.rows; i++)
    for (let j = 0; j < a.cols; j++) {
      let v = F[w.kind](a.get(i, j) + (w.b1 ? w.b1[j] : 0));
      if (l) v *= l.get(i, j) + (w.c ? w.c[j] : 0);
      h.set(i, j, v);
    }
  const y = mm(h, w.w2);
  if (w.b2) for (let i = 0; i < y.rows; i++) for (let j = 0; j < y.cols; j++) y.set(i, j, y.get(i, j) + w.b2[j]);
  return y;
}

/** Softmax attention of one head by definition: Y[i,:] = Σ_j softmax_j(q_i·k_j/√d) v_j over allowed j. */
function head(q: Matrix, k: Matrix, v: Matrix, allowed: (i: number, j: number) => boolean): Matrix {
  const out = new Matrix(q.rows, v.cols);
  const scale = 1 / Math.sqrt(q.cols);
  for (let i = 0; i < q.rows; i++) {
    const logits: number[] = [];
    for (let j = 0; j < k.rows; j++) {
      let s = 0;
      for (let t = 0; t < q.cols; t++) s += q.get(i, t) * k.get(j, t);
      logits.push(allowed(i, j) ? s * scale : Number.NEGATIVE_INFINITY);
    }
    const mx = Math.max(...logits);
    const e = logits.map((s) => Math.exp(s - mx));
    const z = e.reduce((a, b) => a + b, 0);
    for (let c = 0; c < v.cols; c++) {
      let s = 0;
      for (let j = 0; j < k.rows; j++) s += (e[j] / z) * v.get(j, c);
      out.set(i, c, s);
    }
  }
  return out;
}

export interface Rotation {
  apply(x: Matrix, positions: ArrayLike<number>): Matrix;
}

/**
 * Multi-head attention (§2.2) with GQA group map g(h) = ⌊h/(H/G)⌋: Y = concat_h(Y_h) W_O.
 * `causal` = query i (at position qOffset + i) sees keys j ≤ qOffset + i.
 */
export function mha(
  xQ: Matrix,
  xKV: Matrix,
  w: MultiHeadWeights,
  opts: { causal?: boolean; rope?: Rotation; keyLength?: number } = {},
): Matrix {
  const H = w.queries.length;
  const G = w.keys.length;
  const qPos = Array.from({ length: xQ.rows }, (_, i) => i);
  const kPos = Array.from({ length: xKV.rows }, (_, j) => j);
  const allowed = (i: number, j: number) => (!opts.causal || j <= i) && (opts.keyLength === undefined || j < opts.keyLength);
  const heads: Matrix[] = [];
  for (let h = 0; h < H; h++) {
    const g = Math.floor(h / (H / G));
    let q = mm(xQ, w.queries[h]);
    let k = mm(xKV, w.keys[g]);
    if (opts.rope) {
      q = opts.rope.apply(q, qPos);
      k = opts.rope.apply(k, kPos);
    }
    heads.push(head(q, k, mm(xKV, w.values[g]), allowed));
  }
  const dv = heads[0].cols;
  const concat = new Matrix(xQ.rows, H * dv);
  for (let h = 0; h < H; h++) for (let i = 0; i < xQ.rows; i++) for (let c = 0; c < dv; c++) concat.set(i, h * dv + c, heads[h].get(i, c));
  return mm(concat, w.output);
}

/** post: norm(x + F(x)); pre: x + F(norm(x)); peri: x + norm_out(F(norm_in(x))). */
export function block(x: Matrix, f: (h: Matrix) => Matrix, placement: NormPlacement, n: SublayerNorms): Matrix {
  if (placement === "post") return norm(plus(x, f(x)), n.after!);
  if (placement === "pre") return plus(x, f(norm(x, n.before!)));
  return plus(x, norm(f(norm(x, n.before!)), n.after!));
}

/** Perturbs the norm gains/shifts and FFN biases so the check exercises them (init has γ = 1, β = 0, b = 0). */
export function perturbNorms(n: SublayerNorms, seed: number): SublayerNorms {
  const jig = (p: NormParams | undefined, s: number): NormParams | undefined => {
    if (!p) return p;
    const gain = p.gain.map((g, j) => g + 0.3 * Math.sin(s * 3.1 + j));
    return p.kind === "layer" ? { ...p, gain, shift: p.shift.map((_, j) => 0.2 * Math.cos(s * 1.7 + j)) } : { ...p, gain };
  };
  return { before: jig(n.before, seed), after: jig(n.after, seed + 100) };
}

export function relErr(x: Matrix, y: Matrix): number {
  if (x.rows !== y.rows || x.cols !== y.cols) throw new Error(`shape ${x.shape} vs ${y.shape}`);
  let num = 0;
  let den = 0;
  for (let i = 0; i < x.data.length; i++) {
    num += (x.data[i] - y.data[i]) ** 2;
    den += y.data[i] ** 2;
  }
  return Math.sqrt(num / (den || 1));
}
