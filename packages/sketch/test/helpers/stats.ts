/**
 * Monte-Carlo helpers shared by the statistical tests of @randattn/sketch (random/, operators/,
 * sampling/, and the features/ and lowrank/ suites). Framework-agnostic: they return numbers and
 * verdicts, the test asserts on them. STABLE API — other suites import it; add, don't change.
 *
 * The recipe every statistical test follows:
 *   1. run T seeded trials, collect a per-trial statistic X_t (an estimate, a squared error…);
 *   2. compare the sample mean with the value theory gives, within z·σ̂/√T where σ̂ is the sample
 *      standard deviation (or the known σ when theory gives it) and z a normal quantile with a
 *      Bonferroni correction when several comparisons are made at once (`bonferroniZ`).
 * With fixed seeds the verdict is deterministic; the tolerance is still one a wrong expectation
 * (a missing factor, a biased weight) would exceed, because it shrinks as 1/√T.
 */

/** Arithmetic mean. */
export function mean(xs: ArrayLike<number>): number {
  let s = 0;
  for (let i = 0; i < xs.length; i++) s += xs[i];
  return s / xs.length;
}

/** Unbiased sample variance (divides by T − 1); 0 for a single sample. */
export function sampleVariance(xs: ArrayLike<number>): number {
  const n = xs.length;
  if (n < 2) return 0;
  const m = mean(xs);
  let s = 0;
  for (let i = 0; i < n; i++) s += (xs[i] - m) ** 2;
  return s / (n - 1);
}

/** Standard error of the mean σ̂/√T. */
export function standardError(xs: ArrayLike<number>): number {
  return Math.sqrt(sampleVariance(xs) / xs.length);
}

/**
 * Inverse standard normal CDF Φ⁻¹(p), 0 < p < 1 (Acklam's rational approximation, relative error
 * < 1.2e-9 — far below what a Monte-Carlo tolerance needs).
 */
export function normalQuantile(p: number): number {
  if (!(p > 0 && p < 1)) throw new RangeError(`normalQuantile: p must be in (0, 1), got ${p}`);
  const a = [-39.69683028665376, 220.9460984245205, -275.9285104469687, 138.357751867269, -30.66479806614716, 2.506628277459239];
  const b = [-54.47609879822406, 161.5858368580409, -155.6989798598866, 66.80131188771972, -13.28068155288572];
  const c = [-0.007784894002430293, -0.3223964580411365, -2.400758277161838, -2.549732539343734, 4.374664141464968, 2.938163982698783];
  const d = [0.007784695709041462, 0.3224671290700398, 2.445134137142996, 3.754408661907416];
  const lo = 0.02425;
  if (p < lo) {
    const q = Math.sqrt(-2 * Math.log(p));
    return (((((c[0] * q + c[1]) * q + c[2]) * q + c[3]) * q + c[4]) * q + c[5]) / ((((d[0] * q + d[1]) * q + d[2]) * q + d[3]) * q + 1);
  }
  if (p > 1 - lo) return -normalQuantile(1 - p);
  const q = p - 0.5;
  const r = q * q;
  return (
    ((((((a[0] * r + a[1]) * r + a[2]) * r + a[3]) * r + a[4]) * r + a[5]) * q) /
    (((((b[0] * r + b[1]) * r + b[2]) * r + b[3]) * r + b[4]) * r + 1)
  );
}

/** Two-sided z for a family of `comparisons` tests at overall level `alpha` (Bonferroni): Φ⁻¹(1 − α/(2m)). */
export function bonferroniZ(alpha: number, comparisons = 1): number {
  return normalQuantile(1 - alpha / (2 * comparisons));
}

/** Verdict of {@link checkMean}. */
export interface MeanCheck {
  /** Sample mean of the trials. */
  mean: number;
  /** Value theory predicts. */
  expected: number;
  /** Standard error used (known σ/√T, or the sample σ̂/√T). */
  standardError: number;
  /** z used. */
  z: number;
  /** z·standardError: the accepted |mean − expected|. */
  halfWidth: number;
  /** |mean − expected| ≤ halfWidth. */
  ok: boolean;
}

/** Options of {@link checkMean}. */
export interface MeanCheckOptions {
  /** Overall false-alarm probability of the family. @default 1e-3 */
  alpha?: number;
  /** Number of comparisons in the family (Bonferroni). @default 1 */
  comparisons?: number;
  /** Known per-trial standard deviation; when absent the sample standard deviation is used. */
  knownStd?: number;
}

/** Is the mean of `samples` within a z·SE confidence bound of `expected`? */
export function checkMean(samples: ArrayLike<number>, expected: number, options: MeanCheckOptions = {}): MeanCheck {
  const z = bonferroniZ(options.alpha ?? 1e-3, options.comparisons ?? 1);
  const se = options.knownStd !== undefined ? options.knownStd / Math.sqrt(samples.length) : standardError(samples);
  const m = mean(samples);
  const halfWidth = z * se;
  return { mean: m, expected, standardError: se, z, halfWidth, ok: Math.abs(m - expected) <= halfWidth };
}

/** Element-wise running mean and variance of equal-length vectors (Welford), e.g. of sketched matrices. */
export class MomentAccumulator {
  readonly length: number;
  count = 0;
  private readonly m: Float64Array;
  private readonly s: Float64Array;

  constructor(length: number) {
    this.length = length;
    this.m = new Float64Array(length);
    this.s = new Float64Array(length);
  }

  add(x: ArrayLike<number>): void {
    if (x.length !== this.length) throw new RangeError(`MomentAccumulator: expected length ${this.length}, got ${x.length}`);
    this.count++;
    for (let i = 0; i < this.length; i++) {
      const delta = x[i] - this.m[i];
      this.m[i] += delta / this.count;
      this.s[i] += delta * (x[i] - this.m[i]);
    }
  }

  /** Element-wise sample means. */
  mean(): Float64Array {
    return this.m.slice();
  }

  /** Element-wise unbiased sample variances. */
  variance(): Float64Array {
    const out = new Float64Array(this.length);
    if (this.count > 1) for (let i = 0; i < this.length; i++) out[i] = this.s[i] / (this.count - 1);
    return out;
  }
}

/** Pearson's χ² statistic Σ (O_j − E_j)²/E_j for counts against probabilities (E_j = n·p_j; cells with p_j = 0 must be empty). */
export function chiSquareStatistic(counts: ArrayLike<number>, probabilities: ArrayLike<number>): number {
  let n = 0;
  for (let j = 0; j < counts.length; j++) n += counts[j];
  let x = 0;
  for (let j = 0; j < counts.length; j++) {
    const e = n * probabilities[j];
    if (e === 0) {
      if (counts[j] !== 0) return Number.POSITIVE_INFINITY;
      continue;
    }
    x += (counts[j] - e) ** 2 / e;
  }
  return x;
}

/** Upper quantile of χ²_df at level alpha (Wilson–Hilferty cube-root approximation; accurate to ~1% for df ≥ 3). */
export function chiSquareQuantile(alpha: number, df: number): number {
  const z = normalQuantile(1 - alpha);
  const h = 2 / (9 * df);
  return df * (1 - h + z * Math.sqrt(h)) ** 3;
}

/** Histogram of integer draws in [0, n). */
export function counts(draws: ArrayLike<number>, n: number): Float64Array {
  const out = new Float64Array(n);
  for (let i = 0; i < draws.length; i++) out[draws[i]]++;
  return out;
}
