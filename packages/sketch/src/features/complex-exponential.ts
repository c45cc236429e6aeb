/**
 * Complex generalized exponential random features (GERF with complex parameters; Likhosherstov et
 * al., "Chefs' Random Tables", NeurIPS 2022, §3) for SM(x, y) = exp(xᵀy), ω ~ N(0, I_d):
 *
 *   f⁽¹⁾(ω, x) = D·exp(A‖ω‖² + B ωᵀx + C‖x‖²),   f⁽²⁾(ω, y) = D·exp(A‖ω‖² + sB ωᵀy + C‖y‖²),
 *
 * with A, B, C, D ∈ ℂ and s ∈ {+1, −1}. E over ω of exp(2A‖ω‖² + ωᵀu) is (1−4A)^{−d/2} exp(uᵀu/(2(1−4A)))
 * for Re(1 − 4A) > 0 (principal branch, the analytic continuation of the real case), so with
 * w = 1 − 4A the product is unbiased for exp(xᵀy) iff
 *   B² = s·w,   C = −s/2,   D = w^{d/4}            (B = √w for s = +1, B = i√w for s = −1).
 * (For the Gaussian kernel exp(−‖x − y‖²/2) = e^{−‖x‖²/2}e^{−‖y‖²/2}SM(x, y), C gets an extra −½.) Special cases with
 * the same frequencies: s = +1, A = 0 is FAVOR+ (positive features); s = +1, A real is the real GERF
 * of features/exponential.ts (OPRF at its closed-form A*); s = −1, A = 0 gives
 * Re(f⁽¹⁾f⁽²⁾) = e^{(‖x‖²+‖y‖²)/2} cos(ωᵀ(x − y)), the trigonometric features.
 *
 * Estimator: Z = f⁽¹⁾f⁽²⁾ is complex with E Z = K real, so the kernel estimate is Re Z (its imaginary
 * part has mean 0 and only adds noise). Per frequency, with Δ = ‖x + sy‖², N₂ = ‖x‖² + ‖y‖²:
 *   E[Z²]  = w^d (2w − 1)^{−d/2} exp(2swΔ/(2w − 1) − sN₂)                       (complex),
 *   E|Z|²  = |w|^d (2Re w − 1)^{−d/2} exp(2(Re B)²Δ/(2Re w − 1) − sN₂),  (Re B)² = (|w| + s·Re w)/2,
 *   Var Re Z = ½(Re E[Z²] + E|Z|²) − K²,   finite iff Re w > ½ (Re A < ⅛);
 * the m-frequency estimator divides it by m ({@link complexGerfVariance}).
 *
 * Attention: the features are complex, φ(x) ∈ ℂ^m for queries and ψ(y) ∈ ℂ^m for keys, and
 * Re(φ(x)ᵀψ(y)) = Re φᵀ Re ψ − Im φᵀ Im ψ. The driver therefore stores each complex feature as two
 * real columns — queries [Re φ, Im φ], keys [Re ψ, −Im ψ] — so F = 2m real features (the cost and
 * the floats stored count 2 per complex feature, like trig's sin/cos pair), and numerator and
 * normalizer are both the real part of the complex sums: D̂ᵢ = Re Σⱼ φ(xᵢ)ᵀψ(yⱼ), an unbiased estimate
 * of Zᵢ that can be ≤ 0 (handled like trig's, by `onNonPositiveNormalizer`).
 *
 * Optimal parameters: the paper's positive closed form (OPRF) is the real s = +1 slice. For complex
 * A the objective E[(Re Z)²] is a sum of two exponentials and has no closed-form minimizer here;
 * with the homogeneity heuristic (Δ, N₂ replaced by their means over all pairs (i, j):
 * mean‖x‖² + mean‖y‖² + 2s x̄ᵀȳ and mean‖x‖² + mean‖y‖²) we minimize log E[(Re Z)²] over w numerically
 * ({@link optimalComplexGerf}: a deterministic iterated grid over Re w ∈ (½, ½ + e⁶], Im w ≥ 0 —
 * the objective is even in Im w). Its real s = +1 slice reproduces OPRF's closed form (tested), which
 * validates the search. The CRT text could not be read through the project's search tool; the
 * formulas are derived here and checked by Monte Carlo in test/features/complex-exponential.test.ts.
 */
import { Matrix, ValueError, matmulTransB } from "@randattn/core";
import { finishFeatures } from "./exponential.js";

/** Parameters of a complex GERF: s and A = aRe + i·aIm (the rest follows from them). */
export interface ComplexGerfParameters {
  s: 1 | -1;
  aRe: number;
  aIm: number;
  /** log E[(Re Z)²] per frequency at the mean pair statistics (the minimized objective; informational). */
  objective: number;
  /** Objective evaluations the search spent (0 when A was given). */
  evaluations: number;
}

/** How the complex GERF is chosen. */
export interface ComplexGerfOptions {
  /**
   * s ∈ {+1, −1}; omitted: both are optimized and the one with the smaller objective is taken.
   * Required when `a` is given.
   * @default the better of the two optimized
   */
  s?: 1 | -1;
  /** A as [Re A, Im A] with Re A < ¼ (unbiased; the variance is finite only for Re A < ⅛). @default the optimum for s */
  a?: readonly [number, number];
}

/** Mean pair statistics the homogeneity heuristic uses. */
export interface PairStatistics {
  /** mean‖x‖² + mean‖y‖². */
  n2: number;
  /** x̄ᵀȳ. */
  cross: number;
  dim: number;
}

/** n2, cross of scaled queries x and keys y. */
export function pairStatistics(x: Matrix, y: Matrix): PairStatistics {
  const d = x.cols;
  const xm = new Float64Array(d);
  const ym = new Float64Array(d);
  let n2 = 0;
  for (const [z, zm] of [
    [x, xm],
    [y, ym],
  ] as const) {
    for (let i = 0; i < z.rows; i++)
      for (let t = 0; t < d; t++) {
        const v = z.data[i * d + t];
        zm[t] += v / z.rows;
        n2 += (v * v) / z.rows;
      }
  }
  let cross = 0;
  for (let t = 0; t < d; t++) cross += xm[t] * ym[t];
  if (!Number.isFinite(n2) || !Number.isFinite(cross)) throw new ValueError("queries, keys", "data with finite second moments", String(n2));
  return { n2, cross, dim: d };
}

/** Principal log of u + iv as [ln|z|, arg z]. */
function clog(u: number, v: number): [number, number] {
  return [Math.log(Math.hypot(u, v)), Math.atan2(v, u)];
}

/**
 * log E[f⁽¹⁾²f⁽²⁾²] (complex, as [re, im]) and log E|f⁽¹⁾f⁽²⁾|² for w = u + iv (module comment), given
 * Δ = ‖x + sy‖² and N₂ = ‖x‖² + ‖y‖².
 */
function logMoments(s: 1 | -1, u: number, v: number, delta: number, n2: number, d: number): { sq: [number, number]; abs: number } {
  const [lw, aw] = clog(u, v);
  const [l2, a2] = clog(2 * u - 1, 2 * v);
  // 2swΔ/(2w − 1) = 2sΔ·w·conj(2w − 1)/|2w − 1|²
  const den = (2 * u - 1) ** 2 + 4 * v * v;
  const qr = (u * (2 * u - 1) + v * (2 * v)) / den;
  const qi = (v * (2 * u - 1) - u * (2 * v)) / den;
  const sq: [number, number] = [d * lw - (d / 2) * l2 + 2 * s * delta * qr - s * n2, d * aw - (d / 2) * a2 + 2 * s * delta * qi];
  const reB2 = (Math.hypot(u, v) + s * u) / 2;
  const abs = d * lw - (d / 2) * Math.log(2 * u - 1) + (2 * reB2 * delta) / (2 * u - 1) - s * n2;
  return { sq, abs };
}

/** log E[(Re Z)²] per frequency (module comment); +∞ outside Re w > ½. */
function logRealSecondMoment(s: 1 | -1, u: number, v: number, delta: number, n2: number, d: number): number {
  if (!(u > 0.5)) return Number.POSITIVE_INFINITY;
  const { sq, abs } = logMoments(s, u, v, delta, n2, d);
  // ½(Re e^{sq} + e^{abs}) = ½e^{abs}(1 + e^{sq.re − abs} cos(sq.im)), kept in log form.
  const inner = 1 + Math.exp(sq[0] - abs) * Math.cos(sq[1]);
  return inner > 0 ? abs + Math.log(inner / 2) : Number.POSITIVE_INFINITY;
}

/**
 * Closed-form variance of the m-frequency estimator Re(φ(x)ᵀψ(y)) of exp(xᵀy) (module comment), for
 * the pair (x, y) in the kernel's scaled coordinates. +∞ when Re A ≥ ⅛.
 */
export function complexGerfVariance(
  params: ComplexGerfParameters,
  x: ArrayLike<number>,
  y: ArrayLike<number>,
  numFrequencies: number,
): number {
  const d = x.length;
  let delta = 0;
  let n2 = 0;
  let dot = 0;
  for (let t = 0; t < d; t++) {
    delta += (x[t] + params.s * y[t]) ** 2;
    n2 += x[t] ** 2 + y[t] ** 2;
    dot += x[t] * y[t];
  }
  const u = 1 - 4 * params.aRe;
  const v = -4 * params.aIm;
  return (Math.exp(logRealSecondMoment(params.s, u, v, delta, n2, d)) - Math.exp(2 * dot)) / numFrequencies;
}

/** The homogeneity-heuristic objective log E[(Re Z)²] at the mean pair statistics, for A = aRe + i·aIm. */
export function complexGerfObjective(s: 1 | -1, aRe: number, aIm: number, stats: PairStatistics): number {
  return logRealSecondMoment(s, 1 - 4 * aRe, -4 * aIm, stats.n2 + 2 * s * stats.cross, stats.n2, stats.dim);
}

/**
 * Minimizes {@link complexGerfObjective} over A for one s: an iterated 17 × 17 grid over
 * (log(Re w − ½), Im w) ∈ [−14, 6] × [0, 8], w = 1 − 4A, shrunk 14 times (×¼ each) around the best
 * point (the objective is even in Im w): ≈ 4,000 evaluations, final spacing ≈ 1e-7. `real: true` searches Im A = 0 only (then it must agree with OPRF).
 */
export function optimalComplexGerf(s: 1 | -1, stats: PairStatistics, real = false): ComplexGerfParameters {
  const f = (t: number, v: number) => logRealSecondMoment(s, 0.5 + Math.exp(t), v, stats.n2 + 2 * s * stats.cross, stats.n2, stats.dim);
  let t0 = -14;
  let t1 = 6;
  let v0 = 0;
  let v1 = real ? 0 : 8;
  const g = 17;
  let best = { t: 0, v: 0, val: f(0, 0) }; // w = 1.5 … start anywhere finite
  let evaluations = 1;
  for (let round = 0; round < 14; round++) {
    const ht = (t1 - t0) / (g - 1);
    const hv = (v1 - v0) / (g - 1);
    for (let i = 0; i < g; i++)
      for (let j = 0; j < (real ? 1 : g); j++) {
        const t = t0 + i * ht;
        const v = v0 + j * hv;
        const val = f(t, v);
        evaluations++;
        if (val < best.val) best = { t, v, val };
      }
    t0 = best.t - 2 * ht;
    t1 = best.t + 2 * ht;
    v0 = Math.max(0, best.v - 2 * hv);
    v1 = best.v + 2 * hv;
  }
  const w = 0.5 + Math.exp(best.t);
  return { s, aRe: (1 - w) / 4, aIm: -best.v / 4, objective: best.val, evaluations };
}

/**
 * The parameters the attention driver uses: the given A (validated), or the optimum for the given s,
 * or the better of both s (module comment).
 * @throws ValueError for s ∉ {+1, −1}, A without s, or Re A ≥ ¼ / non-finite A.
 */
export function complexGerfParameters(x: Matrix, y: Matrix, options: ComplexGerfOptions = {}): ComplexGerfParameters {
  if (options === null || typeof options !== "object") throw new ValueError("options.complexGerf", "an object { s?, a? }", String(options));
  const s = options.s;
  if (s !== undefined && s !== 1 && s !== -1) throw new ValueError("options.complexGerf.s", "1 or -1", String(s));
  const stats = pairStatistics(x, y);
  if (options.a !== undefined) {
    const a = options.a;
    if (!Array.isArray(a) || a.length !== 2 || !Number.isFinite(a[0]) || !Number.isFinite(a[1]) || !(a[0] < 0.25)) {
      throw new ValueError(
        "options.complexGerf.a",
        "[Re A, Im A], finite, with Re A < 1/4",
        Array.isArray(a) ? `[${a.join(", ")}]` : String(a),
      );
    }
    if (s === undefined) throw new ValueError("options.complexGerf.s", "1 or -1 when options.complexGerf.a is given", "undefined");
    return { s, aRe: a[0], aIm: a[1], objective: complexGerfObjective(s, a[0], a[1], stats), evaluations: 0 };
  }
  if (s !== undefined) return optimalComplexGerf(s, stats);
  const plus = optimalComplexGerf(1, stats);
  const minus = optimalComplexGerf(-1, stats);
  const chosen = minus.objective < plus.objective ? minus : plus;
  return { ...chosen, evaluations: plus.evaluations + minus.evaluations };
}

/**
 * Complex GERF features of the rows of x (scaled) as 2m real columns (module comment): queries
 * [Re φ, Im φ], keys [Re ψ, −Im ψ], so that the real inner product of a query row and a key row is
 * Re(φᵀψ). φ(x_i) = f[i,:]·exp(logScale[i]), the shift taken on Re of the exponents.
 */
export function evaluateComplexGerfFeatures(
  x: Matrix,
  omega: Matrix,
  params: ComplexGerfParameters,
  side: "query" | "key",
  shift: "row" | "global" | "none",
): { features: Matrix; logScale: Float64Array } {
  const n = x.rows;
  const d = x.cols;
  const m = omega.rows;
  const s = params.s;
  const u = 1 - 4 * params.aRe;
  const v = -4 * params.aIm;
  // B = √w (s = +1) or i√w (s = −1), principal root; the key side uses sB.
  const r = Math.sqrt(Math.hypot(u, v));
  const half = Math.atan2(v, u) / 2;
  let bRe = r * Math.cos(half);
  let bIm = r * Math.sin(half);
  if (s === -1) [bRe, bIm] = [-bIm, bRe];
  if (side === "key" && s === -1) [bRe, bIm] = [-bRe, -bIm];
  const [lw, aw] = clog(u, v);
  const baseRe = (d / 4) * lw - 0.5 * Math.log(m);
  const baseIm = (d / 4) * aw;
  const proj = matmulTransB(x, omega).data; // n × m, ω_lᵀx_i
  const w2 = new Float64Array(m);
  for (let l = 0; l < m; l++) {
    let t = 0;
    for (let c = 0; c < d; c++) t += omega.data[l * d + c] ** 2;
    w2[l] = t;
  }
  const re = new Float64Array(n * m);
  const im = new Float64Array(n * m);
  const rowMax = new Float64Array(n).fill(Number.NEGATIVE_INFINITY);
  for (let i = 0; i < n; i++) {
    let x2 = 0;
    for (let c = 0; c < d; c++) x2 += x.data[i * d + c] ** 2;
    for (let l = 0; l < m; l++) {
      const p = proj[i * m + l];
      const e = params.aRe * w2[l] + bRe * p - (s / 2) * x2 + baseRe;
      re[i * m + l] = e;
      im[i * m + l] = params.aIm * w2[l] + bIm * p + baseIm;
      if (e > rowMax[i]) rowMax[i] = e;
    }
  }
  const mag = finishFeatures(re, rowMax, n, m, shift);
  const out = new Matrix(n, 2 * m);
  const sign = side === "key" ? -1 : 1;
  for (let i = 0; i < n; i++)
    for (let l = 0; l < m; l++) {
      const a = mag.features.data[i * m + l];
      const ph = im[i * m + l];
      out.data[i * 2 * m + l] = a * Math.cos(ph);
      out.data[i * 2 * m + m + l] = sign * a * Math.sin(ph);
    }
  return { features: out, logScale: mag.logScale };
}
