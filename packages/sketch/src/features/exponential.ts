/**
 * Generalized exponential random features for the softmax kernel SM(x, y) = exp(xᵀy)
 * (Likhosherstov et al., "Chefs' Random Tables: Non-Trigonometric Random Features", NeurIPS 2022;
 * "FAVOR#: Sharp Attention Kernel Approximations via New Classes of Positive Random Features",
 * ICML 2023). Frequencies ω ~ N(0, I_d).
 *
 * GERF (real, positive branch): f(ω, x) = D·exp(A‖ω‖² + B ωᵀx + C‖x‖²). E[f(ω,x) f(ω,y)] =
 * D² e^{C(‖x‖²+‖y‖²)} (1−4A)^{−d/2} exp(B²‖x+y‖²/(2(1−4A))) equals exp(xᵀy) for every x, y iff
 *   B = √(1 − 4A),  C = −½,  D = (1 − 4A)^{d/4},   A < ¼   (A = 0 is FAVOR+).
 * Its second moment per frequency (finite for A < ⅛):
 *   E[f(ω,x)² f(ω,y)²] = (1−4A)^d (1−8A)^{−d/2} exp(2(1−4A)‖x+y‖²/(1−8A) − ‖x‖² − ‖y‖²),
 * so the m-frequency i.i.d. estimator has variance (that − exp(2xᵀy))/m.
 *
 * OPRF (optimal positive RF): A minimizing the second moment's log averaged over all pairs (i, j)
 * of the data. With ρ = mean_{ij} ‖x_i + y_j‖² (O((N_Q+N_KV)d): mean‖x‖² + mean‖y‖² + 2 x̄ᵀȳ) and
 * u = 1 − 8A, the objective d·log(1+u) − (d/2)·log u + ρ/u is stationary at
 *   d u² − (d + 2ρ) u − 2ρ = 0,   i.e.   A* = (1 − 2ρ/d − √((2ρ/d + 1)² + 8ρ/d)) / 16   (A* ≤ 0).
 *
 * DERF (dense-exponential RF; the asymmetric form): f⁽¹⁾(ω, x) = D·exp(A‖ω‖² + B ωᵀΨx − ½‖Ψx‖²),
 * f⁽²⁾(ω, y) = D·exp(A‖ω‖² + B ωᵀΨ⁻ᵀy − ½‖Ψ⁻ᵀy‖²) — GERF applied to x' = Ψx, y' = Ψ⁻ᵀy, which keeps
 * x'ᵀy' = xᵀy, hence unbiased for any invertible Ψ. The averaged log second moment is
 *   d log(1−4A) − (d/2) log(1−8A) + (γ − 1)(tr(S M₁) + tr(S⁻¹ M₂)) + 2γ x̄ᵀȳ + const,
 * γ = 2(1−4A)/(1−8A) ≥ 1, S = ΨᵀΨ, M₁ = mean x xᵀ, M₂ = mean y yᵀ. For every A it is minimized by
 * the matrix geometric mean S = M₁⁻¹ # M₂ = M₁^{−½}(M₁^{½} M₂ M₁^{½})^{½} M₁^{−½} (minimum of
 * tr(SM₁) + tr(S⁻¹M₂): 2 tr((M₁^{½}M₂M₁^{½})^{½})), so Ψ = S^{½} in closed form, then A = A*(ρ') with
 * ρ' = mean ‖x'_i + y'_j‖² — OPRF on the transformed data. Derived here from the FAVOR# construction
 * (which we could not consult in full); M₁, M₂ are divided by their mean diagonal and get a ridge
 * of 1e-9 so that rank-deficient data still give an invertible Ψ (data whose second moments are 0
 * or overflow fall back to Ψ = I, i.e. OPRF). Not implemented: the complex GERF branch and the
 * symmetric DERF with a matrix A.
 */
import { EigenvalueDecomposition, Matrix as MlMatrix } from "ml-matrix";
import { Matrix, NumericalError, ValueError, matmulTransB } from "@randattn/core";

/** The exponential feature families added to the random-feature driver. */
export type ExponentialFeatureKind = "gerf" | "oprf" | "derf";
/** All of them. */
export const EXPONENTIAL_FEATURE_KINDS: readonly ExponentialFeatureKind[] = ["gerf", "oprf", "derf"];

/** Parameters of a GERF/OPRF/DERF map. */
export interface ExponentialFeatureParameters {
  kind: ExponentialFeatureKind;
  /** A (< ⅛ for finite variance). */
  a: number;
  /** Ψ (d × d) applied to the (scaled) queries, Ψ⁻ᵀ to the keys; null for GERF/OPRF (Ψ = I). */
  psi: Matrix | null;
  psiInverseTranspose: Matrix | null;
  /** mean ‖x' + y'‖² of the (transformed) data: what A was chosen from (informational for GERF). */
  rho: number;
}

/** A* of OPRF for the pair statistic ρ = mean ‖x + y‖² in dimension d (module comment). */
export function oprfParameter(rho: number, dim: number): number {
  if (!(rho >= 0) || !Number.isFinite(rho)) throw new ValueError("rho", "a finite ρ ≥ 0", String(rho));
  const r = rho / dim;
  return (1 - 2 * r - Math.sqrt((2 * r + 1) ** 2 + 8 * r)) / 16;
}

/** mean_{ij} ‖x_i + y_j‖² = mean‖x‖² + mean‖y‖² + 2 x̄ᵀȳ. */
export function meanPairSquaredNorm(x: Matrix, y: Matrix): number {
  const d = x.cols;
  const xm = new Float64Array(d);
  const ym = new Float64Array(d);
  let xx = 0;
  let yy = 0;
  for (let i = 0; i < x.rows; i++)
    for (let t = 0; t < d; t++) {
      const v = x.data[i * d + t];
      xm[t] += v / x.rows;
      xx += (v * v) / x.rows;
    }
  for (let i = 0; i < y.rows; i++)
    for (let t = 0; t < d; t++) {
      const v = y.data[i * d + t];
      ym[t] += v / y.rows;
      yy += (v * v) / y.rows;
    }
  let c = 0;
  for (let t = 0; t < d; t++) c += xm[t] * ym[t];
  return Math.max(0, xx + yy + 2 * c);
}

/** mean x xᵀ divided by its mean diagonal t (returned), plus a ridge of 1e-9; null when t is 0 or not finite. */
function normalizedSecondMoment(x: Matrix): { m: MlMatrix; t: number } | null {
  const d = x.cols;
  const m = new MlMatrix(d, d);
  let tr = 0;
  for (let a = 0; a < d; a++) {
    for (let b = a; b < d; b++) {
      let s = 0;
      for (let i = 0; i < x.rows; i++) s += x.data[i * d + a] * x.data[i * d + b];
      s /= x.rows;
      m.set(a, b, s);
      m.set(b, a, s);
    }
    tr += m.get(a, a);
  }
  const t = tr / d;
  if (!(t > 0) || !Number.isFinite(t) || !(t > 1e-290)) return null;
  for (let a = 0; a < d; a++) for (let b = 0; b < d; b++) m.set(a, b, m.get(a, b) / t + (a === b ? 1e-9 : 0));
  return { m, t };
}

/** f(M) for symmetric M through its eigendecomposition (eigenvalues clamped at 0 from rounding). */
function symmetricFunction(m: MlMatrix, f: (lambda: number) => number): MlMatrix {
  const e = new EigenvalueDecomposition(m, { assumeSymmetric: true });
  const vecs = e.eigenvectorMatrix;
  const vals = e.realEigenvalues.map((l) => f(Math.max(l, 0)));
  const d = m.rows;
  const out = new MlMatrix(d, d);
  for (let a = 0; a < d; a++)
    for (let b = a; b < d; b++) {
      let s = 0;
      for (let k = 0; k < d; k++) s += vecs.get(a, k) * vals[k] * vecs.get(b, k);
      out.set(a, b, s);
      out.set(b, a, s);
    }
  return out;
}

function fromMl(m: MlMatrix): Matrix {
  return new Matrix(m.rows, m.columns, Float64Array.from(m.to1DArray()));
}

/**
 * Closed-form parameters of the family for scaled queries x (N_Q × d) and keys y (N_KV × d):
 * GERF takes A as given (`a`, default 0 = FAVOR+), OPRF and DERF compute it (module comment).
 * @throws ValueError for A ≥ ¼ (no unbiased GERF) or non-finite statistics.
 */
export function exponentialFeatureParameters(kind: ExponentialFeatureKind, x: Matrix, y: Matrix, a?: number): ExponentialFeatureParameters {
  if (kind === "gerf") {
    const A = a ?? 0;
    if (typeof A !== "number" || !(A < 0.25) || !Number.isFinite(A)) throw new ValueError("options.gerfA", "a finite A < 1/4", String(A));
    return { kind, a: A, psi: null, psiInverseTranspose: null, rho: meanPairSquaredNorm(x, y) };
  }
  const n1 = kind === "derf" ? normalizedSecondMoment(x) : null;
  const n2 = kind === "derf" ? normalizedSecondMoment(y) : null;
  if (n1 === null || n2 === null) {
    // OPRF, and DERF on data whose second moments vanish or leave float64 (Ψ = I is then as good as any).
    const rho = meanPairSquaredNorm(x, y);
    if (!Number.isFinite(rho)) throw new ValueError("queries, keys", "data with finite second moments", String(rho));
    return { kind, a: oprfParameter(rho, x.cols), psi: null, psiInverseTranspose: null, rho };
  }
  // Geometric mean of the trace-normalized moments, rescaled: (αM₁)⁻¹ # (βM₂) = √(β/α)·(M₁⁻¹ # M₂).
  const m1 = n1.m;
  const m2 = n2.m;
  const rescale = Math.sqrt(Math.sqrt(n2.t / n1.t)); // Ψ = S^{1/2} picks up (β/α)^{1/4}
  const m1h = symmetricFunction(m1, Math.sqrt);
  const m1ih = symmetricFunction(m1, (l) => 1 / Math.sqrt(l));
  const inner = symmetricFunction(m1h.mmul(m2).mmul(m1h), Math.sqrt);
  const s = m1ih.mmul(inner).mmul(m1ih);
  // Symmetrize against rounding, then Ψ = S^{1/2} (symmetric, so Ψ⁻ᵀ = S^{−1/2}).
  const sym = s.add(s.transpose()).mul(0.5);
  const psi = fromMl(symmetricFunction(sym, (l) => Math.sqrt(l) * rescale));
  const psiInvT = fromMl(symmetricFunction(sym, (l) => 1 / (Math.sqrt(l) * rescale)));
  const xt = matmulTransB(x, psi); // rows Ψ x_i (Ψ symmetric)
  const yt = matmulTransB(y, psiInvT);
  const rho = meanPairSquaredNorm(xt, yt);
  if (!Number.isFinite(rho)) throw new ValueError("queries, keys", "data with finite second moments", String(rho));
  return { kind, a: oprfParameter(rho, x.cols), psi, psiInverseTranspose: psiInvT, rho };
}

/** x' = Ψx (side "query") or Ψ⁻ᵀy (side "key") for DERF; x itself otherwise. */
export function transformForFeatures(params: ExponentialFeatureParameters, x: Matrix, side: "query" | "key"): Matrix {
  const t = side === "query" ? params.psi : params.psiInverseTranspose;
  return t === null ? x : matmulTransB(x, t);
}

/**
 * E[f(ω,x)² f(ω,y)²] per frequency of the GERF with parameter A on (already transformed) x, y,
 * in log form (module comment): returns its natural log. +∞ for A ≥ ⅛.
 */
export function gerfLogSecondMoment(a: number, x: ArrayLike<number>, y: ArrayLike<number>): number {
  if (!(a < 0.125)) return Number.POSITIVE_INFINITY;
  const d = x.length;
  let s2 = 0;
  let x2 = 0;
  let y2 = 0;
  for (let t = 0; t < d; t++) {
    s2 += (x[t] + y[t]) ** 2;
    x2 += x[t] ** 2;
    y2 += y[t] ** 2;
  }
  return d * Math.log(1 - 4 * a) - (d / 2) * Math.log(1 - 8 * a) + (2 * (1 - 4 * a) * s2) / (1 - 8 * a) - x2 - y2;
}

/**
 * Closed-form variance of the m-frequency i.i.d. estimator of exp(xᵀy) with these parameters, for
 * the pair (x, y) in the kernel's scaled coordinates (before Ψ).
 */
export function exponentialFeatureVariance(
  params: ExponentialFeatureParameters,
  x: Float64Array,
  y: Float64Array,
  numFrequencies: number,
): number {
  const d = x.length;
  const one = (v: Float64Array) => new Matrix(1, d, v);
  const xt = transformForFeatures(params, one(x), "query").data;
  const yt = transformForFeatures(params, one(y), "key").data;
  let dot = 0;
  for (let t = 0; t < d; t++) dot += x[t] * y[t];
  return (Math.exp(gerfLogSecondMoment(params.a, xt, yt)) - Math.exp(2 * dot)) / numFrequencies;
}

/**
 * GERF features of the rows of (transformed) x with frequencies Ω (m × d), stabilized like the
 * other maps (features/maps.ts): φ(x_i) = f[i,:]·exp(logScale[i]) with
 * log φ_l = A‖ω_l‖² + √(1−4A) ω_lᵀx − ½‖x‖² + (d/4) log(1−4A) − ½ log m.
 */
export function evaluateExponentialFeatures(
  x: Matrix,
  omega: Matrix,
  a: number,
  shift: "row" | "global" | "none",
): { features: Matrix; logScale: Float64Array } {
  const n = x.rows;
  const d = x.cols;
  const m = omega.rows;
  const b = Math.sqrt(1 - 4 * a);
  const u = matmulTransB(x, omega).data; // n × m
  const w2 = new Float64Array(m);
  for (let l = 0; l < m; l++) {
    let s = 0;
    for (let t = 0; t < d; t++) s += omega.data[l * d + t] ** 2;
    w2[l] = a * s;
  }
  const base = (d / 4) * Math.log(1 - 4 * a) - 0.5 * Math.log(m);
  const expo = new Float64Array(n * m);
  const rowMax = new Float64Array(n).fill(Number.NEGATIVE_INFINITY);
  for (let i = 0; i < n; i++) {
    let x2 = 0;
    for (let t = 0; t < d; t++) x2 += x.data[i * d + t] ** 2;
    for (let l = 0; l < m; l++) {
      const e = w2[l] + b * u[i * m + l] - 0.5 * x2 + base;
      expo[i * m + l] = e;
      if (e > rowMax[i]) rowMax[i] = e;
    }
  }
  const logScale = new Float64Array(n);
  if (shift === "row") logScale.set(rowMax);
  else if (shift === "global") {
    let g = Number.NEGATIVE_INFINITY;
    for (let i = 0; i < n; i++) g = Math.max(g, rowMax[i]);
    logScale.fill(g);
  }
  const out = new Matrix(n, m);
  for (let i = 0; i < n; i++) for (let l = 0; l < m; l++) out.data[i * m + l] = Math.exp(expo[i * m + l] - logScale[i]);
  // Exponents out of float64 (‖x‖² or A‖ω‖² overflowing) leave ∞ − ∞ = NaN: reported, never returned.
  for (let q = 0; q < out.data.length; q++) {
    if (!Number.isFinite(out.data[q]) || (shift !== "none" && !Number.isFinite(logScale[Math.floor(q / m)]))) {
      throw new NumericalError(
        "x",
        "inputs whose exponential-feature exponents fit in float64",
        `${out.data[q]} at feature [${Math.floor(q / m)}, ${q % m}] (log scale ${logScale[Math.floor(q / m)]})`,
      );
    }
  }
  return { features: out, logScale };
}
