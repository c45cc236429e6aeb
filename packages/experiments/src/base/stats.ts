/**
 * Summary statistics: mean, sample standard deviation, median, and the two-sided 95% Student-t
 * confidence interval of the mean, mean ± t_{0.975, n−1}·s/√n. The t quantile is computed (regularized
 * incomplete beta by Lentz's continued fraction, inverted by bisection), not tabulated.
 */
import { assertInteger, assertNumber } from "@randattn/core/internal";

function logGamma(x: number): number {
  // Lanczos approximation (g = 7, n = 9), |error| < 1e-15 for x > 0.
  const c = [
    0.99999999999980993, 676.5203681218851, -1259.1392167224028, 771.32342877765313, -176.61502916214059, 12.507343278686905,
    -0.13857109526572012, 9.9843695780195716e-6, 1.5056327351493116e-7,
  ];
  if (x < 0.5) return Math.log(Math.PI / Math.sin(Math.PI * x)) - logGamma(1 - x);
  x -= 1;
  let a = c[0];
  const t = x + 7.5;
  for (let i = 1; i < 9; i++) a += c[i] / (x + i);
  return 0.5 * Math.log(2 * Math.PI) + (x + 0.5) * Math.log(t) - t + Math.log(a);
}

function betaContinuedFraction(a: number, b: number, x: number): number {
  const tiny = 1e-300;
  let c = 1;
  let d = 1 - ((a + b) * x) / (a + 1);
  if (Math.abs(d) < tiny) d = tiny;
  d = 1 / d;
  let h = d;
  for (let m = 1; m <= 300; m++) {
    const m2 = 2 * m;
    let aa = (m * (b - m) * x) / ((a + m2 - 1) * (a + m2));
    d = 1 + aa * d;
    if (Math.abs(d) < tiny) d = tiny;
    c = 1 + aa / c;
    if (Math.abs(c) < tiny) c = tiny;
    d = 1 / d;
    h *= d * c;
    aa = (-(a + m) * (a + b + m) * x) / ((a + m2) * (a + m2 + 1));
    d = 1 + aa * d;
    if (Math.abs(d) < tiny) d = tiny;
    c = 1 + aa / c;
    if (Math.abs(c) < tiny) c = tiny;
    d = 1 / d;
    const del = d * c;
    h *= del;
    if (Math.abs(del - 1) < 1e-16) break;
  }
  return h;
}

/** Regularized incomplete beta I_x(a, b). */
export function incompleteBeta(x: number, a: number, b: number): number {
  if (x <= 0) return 0;
  if (x >= 1) return 1;
  const front = Math.exp(logGamma(a + b) - logGamma(a) - logGamma(b) + a * Math.log(x) + b * Math.log(1 - x));
  return x < (a + 1) / (a + b + 2) ? (front * betaContinuedFraction(a, b, x)) / a : 1 - (front * betaContinuedFraction(b, a, 1 - x)) / b;
}

/** CDF of Student's t with `df` degrees of freedom. */
export function studentTCdf(t: number, df: number): number {
  const x = df / (df + t * t);
  const tail = 0.5 * incompleteBeta(x, df / 2, 0.5);
  return t >= 0 ? 1 - tail : tail;
}

/**
 * Quantile t_{p, df} of Student's t, for p in (0.5, 1).
 * @throws ValueError for p outside (0.5, 1) or df not an integer ≥ 1.
 */
export function studentTQuantile(p: number, df: number): number {
  assertNumber(p, "p", { min: 0.5, max: 1 });
  assertInteger(df, "df");
  let lo = 0;
  let hi = 1;
  while (studentTCdf(hi, df) < p) hi *= 2;
  for (let i = 0; i < 200 && hi - lo > 1e-14 * hi; i++) {
    const mid = 0.5 * (lo + hi);
    if (studentTCdf(mid, df) < p) lo = mid;
    else hi = mid;
  }
  return 0.5 * (lo + hi);
}

/**
 * t_{0.975, df} by degrees of freedom, as {@link studentTQuantile} computes it (a pure function of
 * df, so the same bits): a summary asks for it once per (metric, cell), ≈ 50 CDF evaluations each —
 * 13 ms of the quickstart's output writing for the two or three df its trial counts give.
 */
const T975 = new Map<number, number>();

function t975(df: number): number {
  let t = T975.get(df);
  if (t === undefined) {
    t = studentTQuantile(0.975, df);
    T975.set(df, t);
  }
  return t;
}

/** Summary of a sample. CI fields are null for n < 2. */
export interface SampleSummary {
  n: number;
  mean: number | null;
  std: number | null;
  median: number | null;
  ciLow: number | null;
  ciHigh: number | null;
  min: number | null;
  max: number | null;
}

/** Summarizes `values` (in the given order; the arithmetic is order-fixed, so deterministic). */
export function summarize(values: readonly number[]): SampleSummary {
  const n = values.length;
  if (n === 0) return { n, mean: null, std: null, median: null, ciLow: null, ciHigh: null, min: null, max: null };
  let sum = 0;
  for (const v of values) sum += v;
  const mean = sum / n;
  const sorted = [...values].sort((a, b) => a - b);
  const median = n % 2 === 1 ? sorted[(n - 1) / 2] : 0.5 * (sorted[n / 2 - 1] + sorted[n / 2]);
  if (n < 2) return { n, mean, std: null, median, ciLow: null, ciHigh: null, min: sorted[0], max: sorted[n - 1] };
  let ss = 0;
  for (const v of values) ss += (v - mean) * (v - mean);
  const std = Math.sqrt(ss / (n - 1));
  const half = t975(n - 1) * (std / Math.sqrt(n));
  return { n, mean, std, median, ciLow: mean - half, ciHigh: mean + half, min: sorted[0], max: sorted[n - 1] };
}
