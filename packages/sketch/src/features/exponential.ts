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
 * DERF (dense-exponential RF, FAVOR# §4): f⁽ᵏ⁾(ω, x) = D·exp(ωᵀ𝐀ω + ωᵀ𝐁⁽ᵏ⁾x + xᵀ𝐂⁽ᵏ⁾x) with a symmetric
 * matrix 𝐀 (8𝐀 ≺ I), valid (unbiased for exp(xᵀy)) iff 𝐁⁽¹⁾ᵀ(I − 4𝐀)⁻¹𝐁⁽²⁾ = I,
 * 𝐂⁽ᵏ⁾ = −½𝐁⁽ᵏ⁾ᵀ(I − 4𝐀)⁻¹𝐁⁽ᵏ⁾ and D = det(I − 4𝐀)^{1/4} (the Gaussian integral
 * E exp(ωᵀ𝐏ω + ωᵀu) = det(I − 2𝐏)^{−½} exp(½uᵀ(I − 2𝐏)⁻¹u); {@link denseExponentialLogMoments} evaluates
 * the mean and second moment of that general form). Rotating ω (isotropic) diagonalizes 𝐀 = Q diag(a) Qᵀ
 * and writing 𝐁⁽ᵏ⁾ = Q(I − 4 diag(a))^{½}Tₖ turns the constraint into T₂ = T₁⁻ᵀ: every DERF is, in
 * distribution, the per-coordinate GERF
 *   f(ω, x) = Π_l (1−4a_l)^{¼} · exp(Σ_l a_l ω_l² + Σ_l √(1−4a_l) ω_l x'_l − ½‖x'‖²),  x' = T₁x, y' = T₁⁻ᵀy,
 * whose log second moment per frequency is (with s = x' + y')
 *   Σ_l [log(1−4a_l) − ½ log(1−8a_l) + 2(1−4a_l)s_l²/(1−8a_l)] − ‖x'‖² − ‖y'‖²   ({@link derfLogSecondMoment}).
 * The parameters below minimize its mean over all pairs (i, j) — FAVOR#'s objective, the mean of
 * log(Var + K²) — in closed form; the data enter only through M₁ = mean x xᵀ, M₂ = mean y yᵀ and the
 * means x̄, ȳ:
 * - `"aderf"` (asymmetric, FAVOR# Thm 4.2: scalar 𝐀 = A·I, 𝐁⁽¹⁾ ≠ 𝐁⁽²⁾): x' = Ψx, y' = Ψ⁻ᵀy. The mean log
 *   second moment is d log(1−4A) − (d/2) log(1−8A) + (γ − 1)(tr(S M₁) + tr(S⁻¹ M₂)) + 2γ x̄ᵀȳ + const,
 *   γ = 2(1−4A)/(1−8A) ≥ 1, S = ΨᵀΨ, so for every A it is minimized by the matrix geometric mean
 *   S = M₁⁻¹ # M₂ = M₁^{−½}(M₁^{½} M₂ M₁^{½})^{½} M₁^{−½} (then S M₁ S = M₂: both transformed second
 *   moments equal Σ = S^{½}M₁S^{½}, whose eigenvalues are the paper's Σ_ll), Ψ = S^{½}, and A = A*(ρ')
 *   with ρ' = mean ‖x'_i + y'_j‖² = 2 tr Σ + 2x̄ᵀȳ — OPRF on the transformed data. `"derf"` is the same
 *   map (its name before the symmetric form existed; kept so configs and results stay valid).
 * - `"saderf"` (simplified ADERF, FAVOR# §4.3): Ψ restricted to a diagonal, whose optimum is
 *   Ψ_ll = (mean_j y_{jl}² / mean_i x_{il}²)^{¼}, O((N_Q+N_KV)d); then A = A*(ρ') as above.
 * - `"sderf"` (symmetric, FAVOR# Thm 4.3: 𝐁⁽¹⁾ = 𝐁⁽²⁾ = 𝐁, matrix 𝐀): T₁ = T₂ must be orthogonal, so
 *   ‖x'‖ = ‖x‖ and the objective is Σ_l [log(1−4a_l) − ½ log(1−8a_l)] + 2 tr(V diag(g) Vᵀ M₃) + const,
 *   g_l = (1−4a_l)/(1−8a_l) (increasing in a_l), V = T₁ᵀ, M₃ = mean (x_i + y_j)(x_i + y_j)ᵀ =
 *   M₁ + M₂ + x̄ȳᵀ + ȳx̄ᵀ. By von Neumann's trace inequality V is M₃'s eigenvector matrix (T₁ = Q₃ᵀ), and
 *   the objective separates per eigenvalue λ_l into the one-dimensional OPRF problem:
 *   a_l = A*(λ_l; d = 1) = (1 − 2λ_l − √((2λ_l + 1)² + 8λ_l))/16 — the larger λ_l, the more negative a_l,
 *   which pairs the eigenvalues oppositely to g as the trace inequality requires, so this is the
 *   global minimum. 𝐀 = Q₃ diag(a) Q₃ᵀ, 𝐁 = Q₃ diag(√(1−4a)) Q₃ᵀ.
 * Nesting (each class contains the next, so the minimized objective is ordered): ADERF ⊇ SADERF ⊇
 * OPRF ⊇ FAVOR+, and SDERF ⊇ OPRF (a = A·1, Q₃ arbitrary); SDERF and ADERF are not nested.
 *
 * Provenance: the FAVOR# text itself could not be read through the project's search tool; the forms
 * and closed-form optima above are derived here from the definitions (and agree with a third-party
 * summary of the paper's Theorems 4.1–4.3 and §4.3), and every closed form is checked by Monte Carlo
 * in test/features/. M₁, M₂ (ADERF, SADERF) are divided by their mean diagonal and get a ridge of 1e-9
 * so that rank-deficient data still give an invertible Ψ (data whose second moments are 0 or overflow
 * fall back to Ψ = I, i.e. OPRF). The complex GERF branch is in features/complex-exponential.ts.
 */
import { EigenvalueDecomposition, Matrix as MlMatrix, determinant, inverse } from "ml-matrix";
import { Matrix, NumericalError, ValueError, matmulTransB } from "@randattn/core";
import { simdExp } from "@randattn/core/internal";

/**
 * The real exponential feature families of the random-feature driver (module comment): `"gerf"`
 * (A given), `"oprf"` (closed-form A), `"aderf"` / `"derf"` (the same asymmetric dense map),
 * `"saderf"` (diagonal Ψ), `"sderf"` (symmetric, matrix 𝐀).
 */
export type ExponentialFeatureKind = "gerf" | "oprf" | "derf" | "aderf" | "saderf" | "sderf";
/** All of them. */
export const EXPONENTIAL_FEATURE_KINDS: readonly ExponentialFeatureKind[] = ["gerf", "oprf", "derf", "aderf", "saderf", "sderf"];

/** Parameters of a GERF/OPRF/DERF map: f(ω, x) = D·exp(Σ_l a_l ω_l² + Σ_l √(1−4a_l) ω_l x'_l − ½‖x'‖²). */
export interface ExponentialFeatureParameters {
  kind: ExponentialFeatureKind;
  /** A (< ⅛ for finite variance); for `"sderf"` the mean of {@link aDiagonal} (informational). */
  a: number;
  /**
   * T₁ (d × d) applied to the (scaled) queries, x' = T₁x: Ψ for ADERF/SADERF, Q₃ᵀ for SDERF; null for
   * GERF/OPRF (identity).
   */
  psi: Matrix | null;
  /** T₂ = T₁⁻ᵀ applied to the keys, y' = T₂y (Ψ⁻ᵀ; Q₃ᵀ again for SDERF); null for GERF/OPRF. */
  psiInverseTranspose: Matrix | null;
  /** SDERF only: the per-coordinate a_l (eigen-frame of M₃), each ≤ 0; absent means a_l = `a` for all l. */
  aDiagonal?: Float64Array;
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
  const m = new Float64Array(d * d); // row-major, handed to ml-matrix once at the end
  let tr = 0;
  for (let a = 0; a < d; a++) {
    for (let b = a; b < d; b++) {
      let s = 0;
      for (let i = 0; i < x.rows; i++) s += x.data[i * d + a] * x.data[i * d + b];
      s /= x.rows;
      m[a * d + b] = s;
      m[b * d + a] = s;
    }
    tr += m[a * d + a];
  }
  const t = tr / d;
  if (!(t > 0) || !Number.isFinite(t) || !(t > 1e-290)) return null;
  for (let a = 0; a < d; a++) for (let b = 0; b < d; b++) m[a * d + b] = m[a * d + b] / t + (a === b ? 1e-9 : 0);
  return { m: MlMatrix.from1DArray(d, d, m), t };
}

/** f(M) for symmetric M through its eigendecomposition (eigenvalues clamped at 0 from rounding). */
function symmetricFunction(m: MlMatrix, f: (lambda: number) => number): MlMatrix {
  const e = new EigenvalueDecomposition(m, { assumeSymmetric: true });
  const d = m.rows;
  const vecs = e.eigenvectorMatrix.to1DArray(); // row-major: vecs[a·d + k] = eigenvector k's entry a
  const vals = e.realEigenvalues.map((l) => f(Math.max(l, 0)));
  const out = new Float64Array(d * d);
  for (let a = 0; a < d; a++)
    for (let b = a; b < d; b++) {
      let s = 0;
      for (let k = 0; k < d; k++) s += vecs[a * d + k] * vals[k] * vecs[b * d + k];
      out[a * d + b] = s;
      out[b * d + a] = s;
    }
  return MlMatrix.from1DArray(d, d, out);
}

function fromMl(m: MlMatrix): Matrix {
  return new Matrix(m.rows, m.columns, Float64Array.from(m.to1DArray()));
}

/**
 * Closed-form parameters of the family for scaled queries x (N_Q × d) and keys y (N_KV × d):
 * GERF takes A as given (`a`, default 0 = FAVOR+), the others compute everything (module comment).
 * @throws ValueError for A ≥ ¼ (no unbiased GERF) or non-finite statistics.
 */
export function exponentialFeatureParameters(kind: ExponentialFeatureKind, x: Matrix, y: Matrix, a?: number): ExponentialFeatureParameters {
  if (kind === "gerf") {
    const A = a ?? 0;
    if (typeof A !== "number" || !(A < 0.25) || !Number.isFinite(A)) throw new ValueError("options.gerfA", "a finite A < 1/4", String(A));
    return { kind, a: A, psi: null, psiInverseTranspose: null, rho: meanPairSquaredNorm(x, y) };
  }
  if (kind === "sderf") return sderfParameters(x, y);
  if (kind === "saderf") return saderfParameters(x, y);
  const dense = kind === "derf" || kind === "aderf";
  const n1 = dense ? normalizedSecondMoment(x) : null;
  const n2 = dense ? normalizedSecondMoment(y) : null;
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
  return withOprfA(kind, x, y, psi, psiInvT);
}

/** A = A*(ρ') of the transformed data x' = T₁x, y' = T₂y (ADERF, SADERF). */
function withOprfA(kind: ExponentialFeatureKind, x: Matrix, y: Matrix, psi: Matrix, psiInvT: Matrix): ExponentialFeatureParameters {
  const xt = matmulTransB(x, psi); // rows T₁ x_i
  const yt = matmulTransB(y, psiInvT);
  const rho = meanPairSquaredNorm(xt, yt);
  if (!Number.isFinite(rho)) throw new ValueError("queries, keys", "data with finite second moments", String(rho));
  return { kind, a: oprfParameter(rho, x.cols), psi, psiInverseTranspose: psiInvT, rho };
}

/** Per-coordinate mean squares of the rows of x. */
function meanSquares(x: Matrix): Float64Array {
  const d = x.cols;
  const out = new Float64Array(d);
  for (let i = 0; i < x.rows; i++) for (let t = 0; t < d; t++) out[t] += x.data[i * d + t] ** 2 / x.rows;
  return out;
}

/**
 * SADERF (module comment): Ψ_ll = (mean y_l² / mean x_l²)^{¼}, with the same trace normalization and
 * 1e-9 ridge as ADERF (so a coordinate that vanishes on one side gets a finite Ψ_ll); Ψ = I when a
 * side's second moment is 0 or overflows.
 */
function saderfParameters(x: Matrix, y: Matrix): ExponentialFeatureParameters {
  const d = x.cols;
  const s1 = meanSquares(x);
  const s2 = meanSquares(y);
  let t1 = 0;
  let t2 = 0;
  for (let t = 0; t < d; t++) {
    t1 += s1[t] / d;
    t2 += s2[t] / d;
  }
  const ok = (t: number) => t > 1e-290 && Number.isFinite(t);
  if (!ok(t1) || !ok(t2)) {
    const rho = meanPairSquaredNorm(x, y);
    if (!Number.isFinite(rho)) throw new ValueError("queries, keys", "data with finite second moments", String(rho));
    return { kind: "saderf", a: oprfParameter(rho, d), psi: null, psiInverseTranspose: null, rho };
  }
  const psi = new Matrix(d, d);
  const inv = new Matrix(d, d);
  const rescale = Math.sqrt(Math.sqrt(t2 / t1));
  for (let t = 0; t < d; t++) {
    const p = Math.sqrt(Math.sqrt((s2[t] / t2 + 1e-9) / (s1[t] / t1 + 1e-9))) * rescale;
    psi.data[t * d + t] = p;
    inv.data[t * d + t] = 1 / p;
  }
  return withOprfA("saderf", x, y, psi, inv);
}

/**
 * M₃ = mean_{ij} (x_i + y_j)(x_i + y_j)ᵀ = M₁ + M₂ + x̄ȳᵀ + ȳx̄ᵀ (d × d, O((N_Q + N_KV)d²)).
 * @throws ValueError when an entry is not finite.
 */
export function meanPairSecondMoment(x: Matrix, y: Matrix): Matrix {
  const d = x.cols;
  const out = new Matrix(d, d);
  const xm = new Float64Array(d);
  const ym = new Float64Array(d);
  for (const [z, zm] of [
    [x, xm],
    [y, ym],
  ] as const) {
    for (let i = 0; i < z.rows; i++) {
      const o = i * d;
      for (let a = 0; a < d; a++) {
        const va = z.data[o + a];
        zm[a] += va / z.rows;
        for (let b = a; b < d; b++) out.data[a * d + b] += (va * z.data[o + b]) / z.rows;
      }
    }
  }
  for (let a = 0; a < d; a++)
    for (let b = a; b < d; b++) {
      const v = out.data[a * d + b] + xm[a] * ym[b] + ym[a] * xm[b];
      if (!Number.isFinite(v)) throw new ValueError("queries, keys", "data with finite second moments", `M₃[${a}, ${b}] = ${v}`);
      out.data[a * d + b] = v;
      out.data[b * d + a] = v;
    }
  return out;
}

/** SDERF (module comment, FAVOR# Thm 4.3): T₁ = T₂ = Q₃ᵀ and a_l = A*(λ_l; d = 1) from M₃ = Q₃ΛQ₃ᵀ. */
function sderfParameters(x: Matrix, y: Matrix): ExponentialFeatureParameters {
  const d = x.cols;
  const m3 = meanPairSecondMoment(x, y);
  let maxAbs = 0;
  for (const v of m3.data) maxAbs = Math.max(maxAbs, Math.abs(v));
  if (!(maxAbs > 1e-290)) {
    // Every query and key is (numerically) 0: exp(xᵀy) = 1, and any frame is optimal (a_l = 0: FAVOR+).
    const eye = new Matrix(d, d);
    for (let t = 0; t < d; t++) eye.data[t * d + t] = 1;
    return { kind: "sderf", a: 0, psi: eye, psiInverseTranspose: eye, rho: 0, aDiagonal: new Float64Array(d) };
  }
  // Scaled by an exact power of two to max |entry| ≈ 1 before the eigendecomposition: ml-matrix's
  // tql2 fails on matrices of subnormal or huge entries (found by the bad-input fuzz suite).
  const scale = 2 ** -Math.round(Math.log2(maxAbs));
  const e = new EigenvalueDecomposition(
    new MlMatrix(Array.from({ length: d }, (_, r) => Array.from(m3.data.subarray(r * d, (r + 1) * d), (v) => v * scale))),
    { assumeSymmetric: true },
  );
  const vecs = e.eigenvectorMatrix.to1DArray(); // row-major: vecs[t·d + l] = eigenvector l's entry t
  const aDiagonal = new Float64Array(d);
  let rho = 0;
  let mean = 0;
  const q3t = new Matrix(d, d);
  for (let l = 0; l < d; l++) {
    // M₃ is a mean of outer products (PSD): a negative eigenvalue is rounding.
    const lambda = Math.max(0, e.realEigenvalues[l] / scale);
    rho += lambda;
    aDiagonal[l] = oprfParameter(lambda, 1);
    mean += aDiagonal[l] / d;
    for (let t = 0; t < d; t++) q3t.data[l * d + t] = vecs[t * d + l]; // row l = eigenvector l
  }
  return { kind: "sderf", a: mean, psi: q3t, psiInverseTranspose: q3t, rho, aDiagonal };
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
 * The per-coordinate form of {@link gerfLogSecondMoment} (module comment): log E[f(ω,x)² f(ω,y)²] for
 * the DERF with diagonal a_l on transformed x', y'. +∞ when some a_l ≥ ⅛.
 */
export function derfLogSecondMoment(a: ArrayLike<number>, x: ArrayLike<number>, y: ArrayLike<number>): number {
  let out = 0;
  for (let t = 0; t < x.length; t++) {
    const at = a[t];
    if (!(at < 0.125)) return Number.POSITIVE_INFINITY;
    out +=
      Math.log(1 - 4 * at) - 0.5 * Math.log(1 - 8 * at) + (2 * (1 - 4 * at) * (x[t] + y[t]) ** 2) / (1 - 8 * at) - x[t] ** 2 - y[t] ** 2;
  }
  return out;
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
  const logMoment = params.aDiagonal ? derfLogSecondMoment(params.aDiagonal, xt, yt) : gerfLogSecondMoment(params.a, xt, yt);
  return (Math.exp(logMoment) - Math.exp(2 * dot)) / numFrequencies;
}

/**
 * GERF features of the rows of (transformed) x with frequencies Ω (m × d), stabilized like the
 * other maps (features/maps.ts): φ(x_i) = f[i,:]·exp(logScale[i]) with
 * log φ_l = A‖ω_l‖² + √(1−4A) ω_lᵀx − ½‖x‖² + (d/4) log(1−4A) − ½ log m, or with a per-coordinate
 * `a` (SDERF): Σ_t a_t ω_lt² + Σ_t √(1−4a_t) ω_lt x_t − ½‖x‖² + ¼ Σ_t log(1−4a_t) − ½ log m.
 */
export function evaluateExponentialFeatures(
  x: Matrix,
  omega: Matrix,
  a: number | Float64Array,
  shift: "row" | "global" | "none",
): { features: Matrix; logScale: Float64Array } {
  if (typeof a !== "number") return evaluateDiagonal(x, omega, a, shift);
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
  // The exponents overwrite u (each depends on its own entry only); small helpers: see exponentRow.
  const rowMax = new Float64Array(n);
  for (let i = 0; i < n; i++) rowMax[i] = exponentRow(u, i * m, m, w2, b, squaredNorm(x.data, i * d, d), base);
  return finishFeatures(u, rowMax, n, m, shift);
}

/** {@link evaluateExponentialFeatures} with a per-coordinate a (kept apart so the scalar path's bits stay as they were). */
function evaluateDiagonal(
  x: Matrix,
  omega: Matrix,
  a: Float64Array,
  shift: "row" | "global" | "none",
): { features: Matrix; logScale: Float64Array } {
  const n = x.rows;
  const d = x.cols;
  const m = omega.rows;
  // x̂_t = √(1−4a_t)·x_t, so that u = x̂ Ωᵀ carries the per-coordinate B.
  const xb = new Matrix(n, d);
  let base = -0.5 * Math.log(m);
  const b = new Float64Array(d);
  for (let t = 0; t < d; t++) {
    b[t] = Math.sqrt(1 - 4 * a[t]);
    base += 0.25 * Math.log(1 - 4 * a[t]);
  }
  for (let i = 0; i < n; i++) for (let t = 0; t < d; t++) xb.data[i * d + t] = b[t] * x.data[i * d + t];
  const u = matmulTransB(xb, omega).data;
  const w2 = new Float64Array(m);
  for (let l = 0; l < m; l++) {
    let s = 0;
    for (let t = 0; t < d; t++) s += a[t] * omega.data[l * d + t] ** 2;
    w2[l] = s;
  }
  const rowMax = new Float64Array(n);
  for (let i = 0; i < n; i++) rowMax[i] = exponentRow(u, i * m, m, w2, 1, squaredNorm(x.data, i * d, d), base);
  return finishFeatures(u, rowMax, n, m, shift);
}

/**
 * Shifts and exponentiates the exponents (n × m) in place — `expo` becomes the features' storage —
 * with core's SIMD exp (≤ 1 ulp from Math.exp, ≈ 3× faster; issue 14: the exponential families had
 * kept Math.exp and a fresh n × m array). Exponents out of float64 (‖x‖² or A‖ω‖² overflowing)
 * leave ∞ − ∞ = NaN: reported as a NumericalError, never returned.
 */
export function finishFeatures(
  expo: Float64Array,
  rowMax: Float64Array,
  n: number,
  m: number,
  shift: "row" | "global" | "none",
): { features: Matrix; logScale: Float64Array } {
  const logScale = new Float64Array(n);
  if (shift === "row") logScale.set(rowMax);
  else if (shift === "global") {
    let g = Number.NEGATIVE_INFINITY;
    for (let i = 0; i < n; i++) g = Math.max(g, rowMax[i]);
    logScale.fill(g);
  }
  const data = expo.subarray(0, n * m);
  if (shift !== "none") for (let i = 0; i < n; i++) subtractFromRow(data, i * m, m, logScale[i]);
  simdExp(data, data);
  for (let i = 0; i < n; i++) {
    // The first failing feature in row order: a row whose log scale is not finite fails at its first.
    const bad = shift !== "none" && !Number.isFinite(logScale[i]) ? i * m : firstNonFinite(data, i * m, m);
    if (bad >= 0) {
      throw new NumericalError(
        "x",
        "inputs whose exponential-feature exponents fit in float64",
        `${data[bad]} at feature [${i}, ${bad - i * m}] (log scale ${logScale[i]})`,
      );
    }
  }
  return { features: new Matrix(n, m, data), logScale };
}

// Row loops in small functions of typed arrays: V8 optimizes them at once, where the same loops
// inline in a long function ran in baseline code while on-stack replacement recompiled it (issue 14).

/** Σ_t x_t² over x[o…o+d−1]. */
function squaredNorm(x: Float64Array, o: number, d: number): number {
  let x2 = 0;
  for (let t = 0; t < d; t++) x2 += x[o + t] ** 2;
  return x2;
}

/**
 * One row's exponents e_l = w2_l + b·u_l − ½‖x‖² + base written over u[o…o+m−1] (b = 1 for the
 * per-coordinate form, whose u already carries B); returns their maximum (−∞ for m = 0).
 */
function exponentRow(u: Float64Array, o: number, m: number, w2: Float64Array, b: number, x2: number, base: number): number {
  let mx = Number.NEGATIVE_INFINITY;
  for (let l = 0; l < m; l++) {
    const e = w2[l] + b * u[o + l] - 0.5 * x2 + base;
    u[o + l] = e;
    if (e > mx) mx = e;
  }
  return mx;
}

/** a[o…o+m−1] −= c. */
function subtractFromRow(a: Float64Array, o: number, m: number, c: number): void {
  for (let l = 0; l < m; l++) a[o + l] -= c;
}

/** The index of the first non-finite entry of a[o…o+m−1], or −1. */
function firstNonFinite(a: Float64Array, o: number, m: number): number {
  for (let l = 0; l < m; l++) if (!Number.isFinite(a[o + l])) return o + l;
  return -1;
}

/**
 * A DERF in the paper's dense parametrization (FAVOR# Thm 4.1): f⁽ᵏ⁾(ω, x) =
 * exp(logD + ωᵀ𝐀ω + ωᵀ𝐁⁽ᵏ⁾x + xᵀ𝐂⁽ᵏ⁾x).
 */
export interface DenseExponentialForm {
  a: Matrix;
  b1: Matrix;
  b2: Matrix;
  c1: Matrix;
  c2: Matrix;
  logD: number;
}

function toMl(m: Matrix): MlMatrix {
  return new MlMatrix(Array.from({ length: m.rows }, (_, r) => Array.from(m.data.subarray(r * m.cols, (r + 1) * m.cols))));
}

/**
 * The dense form of these parameters, written out as the paper states it: 𝐀 = A·I and 𝐁⁽ᵏ⁾ = √(1−4A)·Tₖ
 * for the scalar families; 𝐀 = Q₃ diag(a) Q₃ᵀ, 𝐁 = Q₃ diag(√(1−4a)) Q₃ᵀ for SDERF; then
 * 𝐂⁽ᵏ⁾ = −½𝐁⁽ᵏ⁾ᵀ(I − 4𝐀)⁻¹𝐁⁽ᵏ⁾ and log D = ¼ log det(I − 4𝐀) from the validity conditions (computed
 * with ml-matrix's inverse and determinant — an independent route to the per-coordinate form used
 * for the features, which the tests compare).
 */
export function denseExponentialForm(params: ExponentialFeatureParameters, dim: number): DenseExponentialForm {
  const eye = MlMatrix.eye(dim, dim);
  const t1 = params.psi ? toMl(params.psi) : eye;
  const t2 = params.psiInverseTranspose ? toMl(params.psiInverseTranspose) : eye;
  let a: MlMatrix;
  let b1: MlMatrix;
  let b2: MlMatrix;
  if (params.aDiagonal) {
    const al = Array.from(params.aDiagonal);
    a = t1.transpose().mmul(MlMatrix.diag(al)).mmul(t1);
    b1 = t1
      .transpose()
      .mmul(MlMatrix.diag(al.map((v) => Math.sqrt(1 - 4 * v))))
      .mmul(t1);
    b2 = b1;
  } else {
    // (ml-matrix's instance add/sub/mul work in place: the static forms copy.)
    a = MlMatrix.mul(eye, params.a);
    b1 = MlMatrix.mul(t1, Math.sqrt(1 - 4 * params.a));
    b2 = MlMatrix.mul(t2, Math.sqrt(1 - 4 * params.a));
  }
  const w = MlMatrix.sub(eye, MlMatrix.mul(a, 4));
  const wi = inverse(w);
  const c1 = MlMatrix.mul(b1.transpose().mmul(wi).mmul(b1), -0.5);
  const c2 = MlMatrix.mul(b2.transpose().mmul(wi).mmul(b2), -0.5);
  return { a: fromMl(a), b1: fromMl(b1), b2: fromMl(b2), c1: fromMl(c1), c2: fromMl(c2), logD: 0.25 * Math.log(determinant(w)) };
}

/**
 * log E[f⁽¹⁾f⁽²⁾] and log E[(f⁽¹⁾f⁽²⁾)²] of a dense DERF over ω ~ N(0, I), from the Gaussian integral
 * E exp(ωᵀ𝐏ω + ωᵀu) = det(I − 2𝐏)^{−½} exp(½uᵀ(I − 2𝐏)⁻¹u) with 𝐏 = 2𝐀, u = 𝐁⁽¹⁾x + 𝐁⁽²⁾y (mean) and
 * 𝐏 = 4𝐀, u = 2(𝐁⁽¹⁾x + 𝐁⁽²⁾y) (second moment; FAVOR# Thm 4.1's variance is that minus K²).
 * The second moment is +∞ unless 8𝐀 ≺ I.
 */
export function denseExponentialLogMoments(
  form: DenseExponentialForm,
  x: ArrayLike<number>,
  y: ArrayLike<number>,
): { logMean: number; logSecondMoment: number } {
  const d = x.length;
  const a = toMl(form.a);
  const xv = MlMatrix.columnVector(Array.from(x));
  const yv = MlMatrix.columnVector(Array.from(y));
  const u = MlMatrix.add(toMl(form.b1).mmul(xv), toMl(form.b2).mmul(yv));
  const quad = (m: MlMatrix, v: MlMatrix) => v.transpose().mmul(m).mmul(v).to1DArray()[0]; // the 1 × 1 vᵀMv
  const cx = quad(toMl(form.c1), xv);
  const cy = quad(toMl(form.c2), yv);
  const eye = MlMatrix.eye(d, d);
  const w4 = MlMatrix.sub(eye, MlMatrix.mul(a, 4));
  const w8 = MlMatrix.sub(eye, MlMatrix.mul(a, 8));
  const logMean = 2 * form.logD - 0.5 * Math.log(determinant(w4)) + 0.5 * quad(inverse(w4), u) + cx + cy;
  const minEig = Math.min(
    ...new EigenvalueDecomposition(MlMatrix.mul(MlMatrix.add(w8, w8.transpose()), 0.5), { assumeSymmetric: true }).realEigenvalues,
  );
  const logSecondMoment =
    minEig > 0 ? 4 * form.logD - 0.5 * Math.log(determinant(w8)) + 2 * quad(inverse(w8), u) + 2 * cx + 2 * cy : Number.POSITIVE_INFINITY;
  return { logMean, logSecondMoment };
}
