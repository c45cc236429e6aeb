/**
 * Test-only references written as the literal formulas (plain loops, small sizes) and the exact
 * moments of the single-frequency random-feature estimators.
 */
import { Matrix } from "@randattn/core";

/** Exact softmax attention Y = Z⁻¹ exp(scale·QKᵀ) V by plain loops (no shift: small inputs only). */
export function exactSoftmaxAttention(q: Matrix, k: Matrix, v: Matrix, scale = 1 / Math.sqrt(q.cols)): Matrix {
  const y = new Matrix(q.rows, v.cols);
  for (let i = 0; i < q.rows; i++) {
    let z = 0;
    const acc = new Float64Array(v.cols);
    for (let j = 0; j < k.rows; j++) {
      let s = 0;
      for (let t = 0; t < q.cols; t++) s += q.get(i, t) * k.get(j, t);
      const a = Math.exp(scale * s);
      z += a;
      for (let c = 0; c < v.cols; c++) acc[c] += a * v.get(j, c);
    }
    for (let c = 0; c < v.cols; c++) y.set(i, c, acc[c] / z);
  }
  return y;
}

/** Â[i, j] = φ(qᵢ)ᵀφ(kⱼ) from explicit (unshifted) feature matrices, by plain loops. */
export function featureProductMatrix(phiQ: Matrix, phiK: Matrix): Matrix {
  const a = new Matrix(phiQ.rows, phiK.rows);
  for (let i = 0; i < phiQ.rows; i++)
    for (let j = 0; j < phiK.rows; j++) {
      let s = 0;
      for (let l = 0; l < phiQ.cols; l++) s += phiQ.get(i, l) * phiK.get(j, l);
      a.set(i, j, s);
    }
  return a;
}

/** Y = D⁻¹ (Â ⊙ M) V by plain loops; `visible(i, j)` is the mask. Rows with D = 0 are left at 0. */
export function maskedRatio(a: Matrix, v: Matrix, visible: (i: number, j: number) => boolean): Matrix {
  const y = new Matrix(a.rows, v.cols);
  for (let i = 0; i < a.rows; i++) {
    let d = 0;
    const acc = new Float64Array(v.cols);
    for (let j = 0; j < a.cols; j++) {
      if (!visible(i, j)) continue;
      d += a.get(i, j);
      for (let c = 0; c < v.cols; c++) acc[c] += a.get(i, j) * v.get(j, c);
    }
    if (d !== 0) for (let c = 0; c < v.cols; c++) y.set(i, c, acc[c] / d);
  }
  return y;
}

export function dot(a: ArrayLike<number>, b: ArrayLike<number>): number {
  let s = 0;
  for (let i = 0; i < a.length; i++) s += a[i] * b[i];
  return s;
}

export function norm2(a: ArrayLike<number>): number {
  return dot(a, a);
}

function binom(n: number, k: number): number {
  let r = 1;
  for (let i = 1; i <= k; i++) r = (r * (n - k + i)) / i;
  return r;
}

/**
 * Raw moments E[X^j], j = 0..4, of one frequency's term X of the softmax estimator
 * φ(x)ᵀφ(y) = (1/m) Σ_l X_l, from the Gaussian moment generating function (t = ωᵀv ~ N(0, ‖v‖²)):
 *  positive:   X = e^{−(‖x‖²+‖y‖²)/2} e^{t},  v = x + y,  E e^{at} = e^{a²‖v‖²/2};
 *  hyperbolic: X = e^{−(‖x‖²+‖y‖²)/2} cosh t, v = x + y,  cosh^j = 2^{−j} Σ C(j,i) e^{(j−2i)t};
 *  trig:       X = e^{(‖x‖²+‖y‖²)/2} cos t,   v = x − y,  cos^j = 2^{−j} Σ C(j,i) e^{i(j−2i)t}, E e^{iat} = e^{−a²‖v‖²/2}.
 */
export function termMoments(kind: "positive" | "hyperbolic" | "trig", x: ArrayLike<number>, y: ArrayLike<number>): number[] {
  const s = norm2(x) + norm2(y);
  const v = Array.from(x, (xi, i) => (kind === "trig" ? xi - y[i] : xi + y[i]));
  const w = norm2(v);
  const c = kind === "trig" ? Math.exp(s / 2) : Math.exp(-s / 2);
  const out: number[] = [];
  for (let j = 0; j <= 4; j++) {
    let e: number;
    if (kind === "positive") e = Math.exp((j * j * w) / 2);
    else {
      e = 0;
      for (let i = 0; i <= j; i++) {
        const a = j - 2 * i;
        e += binom(j, i) * Math.exp(((kind === "trig" ? -1 : 1) * a * a * w) / 2);
      }
      e /= 2 ** j;
    }
    out.push(c ** j * e);
  }
  return out;
}

/**
 * Mean and variance of the squared error e = (X̄ − μ)² of the mean of m i.i.d. terms:
 * E e = σ²/m, E e² = (μ₄ + 3(m − 1)σ⁴)/m³ (central moments μ₄, σ² of one term).
 */
export function squaredErrorMoments(moments: number[], m: number): { mse: number; variance: number; mean: number } {
  const [, m1, m2, m3, m4] = moments;
  const sigma2 = m2 - m1 * m1;
  const mu4 = m4 - 4 * m1 * m3 + 6 * m1 * m1 * m2 - 3 * m1 ** 4;
  const mse = sigma2 / m;
  const e2 = (mu4 + 3 * (m - 1) * sigma2 * sigma2) / m ** 3;
  return { mse, variance: e2 - mse * mse, mean: m1 };
}
