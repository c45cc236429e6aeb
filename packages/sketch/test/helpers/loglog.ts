/**
 * Least-squares slope of log y on log x with its standard error (ordinary regression, residual
 * variance on n − 2 degrees of freedom): the rate checks of the coreset / Nyström suites.
 */
export interface SlopeFit {
  slope: number;
  intercept: number;
  standardError: number;
}

export function logLogSlope(xs: readonly number[], ys: readonly number[]): SlopeFit {
  const n = xs.length;
  const lx = xs.map(Math.log);
  const ly = ys.map(Math.log);
  const mx = lx.reduce((a, b) => a + b, 0) / n;
  const my = ly.reduce((a, b) => a + b, 0) / n;
  let sxx = 0;
  let sxy = 0;
  for (let i = 0; i < n; i++) {
    sxx += (lx[i] - mx) ** 2;
    sxy += (lx[i] - mx) * (ly[i] - my);
  }
  const slope = sxy / sxx;
  const intercept = my - slope * mx;
  let rss = 0;
  for (let i = 0; i < n; i++) rss += (ly[i] - intercept - slope * lx[i]) ** 2;
  return { slope, intercept, standardError: Math.sqrt(rss / (n - 2) / sxx) };
}
