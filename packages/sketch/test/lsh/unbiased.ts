// Per-entry unbiasedness check shared by the LSH-sketch suites: the mean of T seeded estimates lies
// within z·σ̂/√T of the reference entrywise (Bonferroni over `comparisons`). Entries the sketch gets
// exactly (a row whose visible keys all lie on the exact support) vary only by rounding; a slack of
// 1e-12·(1 + |ref|) keeps their σ̂ ≈ 1e-17 from turning rounding into a "deviation".
import type { Matrix } from "@randattn/core";
import { MomentAccumulator, bonferroniZ } from "../helpers/stats.js";

export function worstStandardizedDeviation(
  run: (t: number) => Matrix,
  ref: Matrix,
  trials: number,
  comparisons: number,
): { worst: number; z: number } {
  const acc = new MomentAccumulator(ref.data.length);
  for (let t = 0; t < trials; t++) acc.add(run(t).data);
  const m = acc.mean();
  const v = acc.variance();
  let worst = 0;
  for (let q = 0; q < ref.data.length; q++) {
    const se = Math.sqrt(v[q] / trials);
    const dev = Math.abs(m[q] - ref.data[q]);
    const slack = 1e-12 * (1 + Math.abs(ref.data[q]));
    worst = Math.max(worst, dev <= slack ? 0 : se === 0 ? Number.POSITIVE_INFINITY : (dev - slack) / se);
  }
  return { worst, z: bonferroniZ(1e-3, comparisons) };
}
