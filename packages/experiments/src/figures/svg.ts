/**
 * Hand-written SVG line charts with a band per series (log or linear axes).
 *
 * Why not vega-lite → vega View.toSVG(): it works headless, but its text layout depends on a
 * canvas/font-metrics fallback and it pulls ~10 MB of code into every report; these charts need
 * only axes, ticks, lines, bands and a legend, and writing them by hand makes the SVG a pure
 * function of the data (coordinates printed with fixed decimals) — byte-identical everywhere,
 * reviewable in a diff, and testable.
 */

/** One point of a series: x, the central y (mean over trials) and the band [lo, hi]. */
export interface SeriesPoint {
  x: number;
  y: number;
  lo: number;
  hi: number;
}

/** A named series. */
export interface Series {
  name: string;
  points: SeriesPoint[];
  /** Palette index of its colour. @default its position in the list */
  colorIndex?: number;
  /** SVG stroke-dasharray: a dashed reference curve (drawn without band or markers). @default solid */
  dash?: string;
  /** Whether the series has its own legend entry. @default true */
  inLegend?: boolean;
}

/** A legend entry for a line style rather than a series (e.g. "dashed: DKM expectation"). */
export interface StyleLegend {
  label: string;
  dash: string;
}

/** Chart options. */
export interface ChartOptions {
  title: string;
  xLabel: string;
  yLabel: string;
  /** @default true */
  logX?: boolean;
  /** @default true */
  logY?: boolean;
  /** @default 640 */
  width?: number;
  /** @default 420 */
  height?: number;
  /** A note under the chart (e.g. what was omitted). */
  note?: string;
  /** Legend entries for line styles, after the series'. @default none */
  styles?: readonly StyleLegend[];
}

/** Okabe–Ito colour-blind-safe palette. */
export const PALETTE = ["#0072B2", "#D55E00", "#009E73", "#CC79A7", "#E69F00", "#56B4E9", "#F0E442", "#000000"];

function esc(s: string): string {
  return s.replace(/&/g, "&amp;").replace(/</g, "&lt;").replace(/>/g, "&gt;").replace(/"/g, "&quot;");
}

const f = (v: number) => v.toFixed(2);

function tickLabel(v: number, log: boolean): string {
  if (log) {
    const e = Math.round(Math.log10(v));
    if (Math.abs(v - 10 ** e) < 1e-9 * v) return e >= -2 && e <= 3 ? String(10 ** e) : `1e${e}`;
  }
  if (v === 0) return "0";
  const a = Math.abs(v);
  if (a >= 1e4 || a < 1e-2) return v.toExponential(1).replace("e+", "e");
  return String(Number(v.toPrecision(3)));
}

function ticks(lo: number, hi: number, log: boolean): number[] {
  if (log) {
    const a = Math.floor(Math.log10(lo));
    const b = Math.ceil(Math.log10(hi));
    const out: number[] = [];
    const stride = Math.max(1, Math.ceil((b - a) / 8));
    for (let e = a; e <= b; e += stride) out.push(10 ** e);
    return out;
  }
  const span = hi - lo || Math.abs(hi) || 1;
  const raw = span / 6;
  const mag = 10 ** Math.floor(Math.log10(raw));
  const step = [1, 2, 5, 10].map((m) => m * mag).find((s) => s >= raw) ?? 10 * mag;
  const out: number[] = [];
  for (let v = Math.ceil(lo / step) * step; v <= hi + 1e-9 * span; v += step) out.push(Number(v.toPrecision(12)));
  return out;
}

/**
 * Renders series as an SVG document (string). Points with non-finite values, or non-positive
 * values on a log axis, are dropped (and counted in the note).
 */
export function lineChartSvg(series: readonly Series[], options: ChartOptions): string {
  const logX = options.logX ?? true;
  const logY = options.logY ?? true;
  const W = options.width ?? 640;
  const H = options.height ?? 420;
  const m = { left: 72, right: 170, top: 40, bottom: 64 };
  let dropped = 0;
  const ok = (v: number, log: boolean) => Number.isFinite(v) && (!log || v > 0);
  const clean = series.map((s, i) => ({
    name: s.name,
    color: PALETTE[(s.colorIndex ?? i) % PALETTE.length],
    dash: s.dash,
    inLegend: s.inLegend ?? true,
    points: s.points
      .filter((p) => {
        const keep = ok(p.x, logX) && ok(p.y, logY);
        if (!keep) dropped++;
        return keep;
      })
      .map((p) => ({ ...p, lo: ok(p.lo, logY) ? p.lo : p.y, hi: ok(p.hi, logY) ? p.hi : p.y }))
      .sort((a, b) => a.x - b.x),
  }));
  const all = clean.flatMap((s) => s.points);
  const parts: string[] = [];
  parts.push(
    `<svg xmlns="http://www.w3.org/2000/svg" width="${W}" height="${H}" viewBox="0 0 ${W} ${H}" font-family="Helvetica, Arial, sans-serif" font-size="12">`,
  );
  parts.push(`<rect x="0" y="0" width="${W}" height="${H}" fill="#ffffff"/>`);
  parts.push(`<text x="${f(W / 2)}" y="22" text-anchor="middle" font-size="15">${esc(options.title)}</text>`);
  const pw = W - m.left - m.right;
  const ph = H - m.top - m.bottom;
  if (all.length === 0) {
    parts.push(`<text x="${f(m.left + pw / 2)}" y="${f(m.top + ph / 2)}" text-anchor="middle">no plottable points</text>`);
    parts.push("</svg>");
    return `${parts.join("\n")}\n`;
  }
  const tx = (v: number) => (logX ? Math.log10(v) : v);
  const ty = (v: number) => (logY ? Math.log10(v) : v);
  let xmin = Math.min(...all.map((p) => p.x));
  let xmax = Math.max(...all.map((p) => p.x));
  let ymin = Math.min(...all.map((p) => Math.min(p.lo, p.y)));
  let ymax = Math.max(...all.map((p) => Math.max(p.hi, p.y)));
  const xt = ticks(xmin, xmax, logX);
  const yt = ticks(ymin, ymax, logY);
  xmin = Math.min(xmin, xt[0]);
  xmax = Math.max(xmax, xt[xt.length - 1]);
  ymin = Math.min(ymin, yt[0]);
  ymax = Math.max(ymax, yt[yt.length - 1]);
  const X = (v: number) => m.left + ((tx(v) - tx(xmin)) / (tx(xmax) - tx(xmin) || 1)) * pw;
  const Y = (v: number) => m.top + ph - ((ty(v) - ty(ymin)) / (ty(ymax) - ty(ymin) || 1)) * ph;
  parts.push(`<g stroke="#dddddd" stroke-width="1">`);
  for (const v of xt) parts.push(`<line x1="${f(X(v))}" y1="${m.top}" x2="${f(X(v))}" y2="${m.top + ph}"/>`);
  for (const v of yt) parts.push(`<line x1="${m.left}" y1="${f(Y(v))}" x2="${m.left + pw}" y2="${f(Y(v))}"/>`);
  parts.push("</g>");
  parts.push(`<rect x="${m.left}" y="${m.top}" width="${pw}" height="${ph}" fill="none" stroke="#333333"/>`);
  parts.push(`<g text-anchor="middle">`);
  for (const v of xt) parts.push(`<text x="${f(X(v))}" y="${m.top + ph + 18}">${esc(tickLabel(v, logX))}</text>`);
  parts.push("</g>");
  parts.push(`<g text-anchor="end">`);
  for (const v of yt) parts.push(`<text x="${m.left - 6}" y="${f(Y(v) + 4)}">${esc(tickLabel(v, logY))}</text>`);
  parts.push("</g>");
  parts.push(`<text x="${f(m.left + pw / 2)}" y="${H - 28}" text-anchor="middle">${esc(options.xLabel)}${logX ? " (log)" : ""}</text>`);
  parts.push(
    `<text transform="translate(18 ${f(m.top + ph / 2)}) rotate(-90)" text-anchor="middle">${esc(options.yLabel)}${logY ? " (log)" : ""}</text>`,
  );
  let legendRow = 0;
  const legendY = () => m.top + 10 + legendRow++ * 18;
  for (const s of clean) {
    if (s.points.length === 0) continue;
    const color = s.color;
    const line = s.points.map((p) => `${f(X(p.x))},${f(Y(p.y))}`).join(" ");
    if (s.dash) {
      parts.push(`<polyline points="${line}" fill="none" stroke="${color}" stroke-width="1.5" stroke-dasharray="${s.dash}"/>`);
    } else {
      const upper = s.points.map((p) => `${f(X(p.x))},${f(Y(p.hi))}`);
      const lower = s.points.map((p) => `${f(X(p.x))},${f(Y(p.lo))}`).reverse();
      parts.push(`<polygon points="${[...upper, ...lower].join(" ")}" fill="${color}" fill-opacity="0.18" stroke="none"/>`);
      parts.push(`<polyline points="${line}" fill="none" stroke="${color}" stroke-width="2"/>`);
      for (const p of s.points) parts.push(`<circle cx="${f(X(p.x))}" cy="${f(Y(p.y))}" r="3" fill="${color}"/>`);
    }
    if (!s.inLegend) continue;
    const ly = legendY();
    const dash = s.dash ? ` stroke-dasharray="${s.dash}"` : "";
    parts.push(`<line x1="${m.left + pw + 12}" y1="${ly}" x2="${m.left + pw + 32}" y2="${ly}" stroke="${color}" stroke-width="2"${dash}/>`);
    parts.push(`<text x="${m.left + pw + 38}" y="${ly + 4}">${esc(s.name)}</text>`);
  }
  for (const st of options.styles ?? []) {
    const ly = legendY();
    parts.push(
      `<line x1="${m.left + pw + 12}" y1="${ly}" x2="${m.left + pw + 32}" y2="${ly}" stroke="#333333" stroke-width="1.5" stroke-dasharray="${st.dash}"/>`,
    );
    parts.push(`<text x="${m.left + pw + 38}" y="${ly + 4}">${esc(st.label)}</text>`);
  }
  const note = [options.note, dropped > 0 ? `${dropped} point(s) not plottable on these axes omitted` : ""].filter(Boolean).join("; ");
  if (note) parts.push(`<text x="${m.left}" y="${H - 8}" font-size="10" fill="#555555">${esc(note)}</text>`);
  parts.push("</svg>");
  return `${parts.join("\n")}\n`;
}
