/**
 * Hand-written SVG charts: one or more panels (facets) of lines with a band per point, vertical
 * reference lines, point labels, and one legend for the figure (log or linear axes).
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
  /** Text drawn next to the point (e.g. `s = 64`). @default none */
  label?: string;
}

/** A named series. */
export interface Series {
  name: string;
  points: SeriesPoint[];
  /** Style index (colour and dash pattern, see `seriesStyle`). @default its position in the list */
  colorIndex?: number;
  /** SVG stroke-dasharray of a reference curve (drawn thin, without band or markers). @default none */
  dash?: string;
  /** Whether the series has its own legend entry. @default true */
  inLegend?: boolean;
}

/** A vertical reference line (e.g. the cost of the exact method, whose zero error is off a log axis). */
export interface VerticalLine {
  x: number;
  label: string;
  /** Style index, as a series'. */
  colorIndex: number;
}

/** One panel of a figure. */
export interface Panel {
  /** Panel heading (the facet's values), "" for a single panel. */
  title: string;
  series: Series[];
  verticals?: VerticalLine[];
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
  /** Width of one panel. @default 640 for one panel, 420 for several */
  width?: number;
  /** Height of one panel. @default 420 for one panel, 330 for several */
  height?: number;
  /** A note under the chart (what the line and band are). */
  note?: string;
  /** Legend entries for line styles, after the series'. @default none */
  styles?: readonly StyleLegend[];
  /** Panels per row. @default min(3, panels) */
  columns?: number;
}

/** Okabe–Ito colour-blind-safe palette. */
export const PALETTE = ["#0072B2", "#D55E00", "#009E73", "#CC79A7", "#E69F00", "#56B4E9", "#000000", "#999933"];
/** Dash patterns of main series beyond the palette: series i gets colour i mod 8 and dash ⌊i/8⌋ mod 4. */
export const SERIES_DASHES = ["", "7 3", "2 2", "9 3 2 3"] as const;

/** Colour and dash of style index `i`: 32 distinct styles before any repeats. */
export function seriesStyle(i: number): { color: string; dash: string } {
  return { color: PALETTE[i % PALETTE.length], dash: SERIES_DASHES[Math.floor(i / PALETTE.length) % SERIES_DASHES.length] };
}

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

/** Renders a single-panel chart (see `panelsSvg`). */
export function lineChartSvg(series: readonly Series[], options: ChartOptions, verticals: readonly VerticalLine[] = []): string {
  return panelsSvg([{ title: "", series: [...series], verticals: [...verticals] }], options);
}

/** Width reserved per legend character (px at font-size 12; Arial's widest lowercase average ≈ 6.7). */
const LEGEND_CHAR_PX = 7;
/** Width reserved per point-label character (px at font-size 9). */
const LABEL_CHAR_PX = 5;

/**
 * Renders panels as one SVG document (string), sharing axis ranges (so panels compare) and one
 * legend. Points with non-finite values, or non-positive values on a log axis, are dropped (and
 * counted in the note).
 */
export function panelsSvg(panels: readonly Panel[], options: ChartOptions): string {
  const logX = options.logX ?? true;
  const logY = options.logY ?? true;
  const many = panels.length > 1;
  const PW = options.width ?? (many ? 420 : 640);
  const PH = options.height ?? (many ? 330 : 420);
  const cols = Math.max(1, Math.min(options.columns ?? 3, panels.length));
  const rows = Math.ceil(panels.length / cols);
  const m = { left: 70, right: 14, top: many ? 30 : 14, bottom: 46 };
  const headH = 34;
  let dropped = 0;
  const ok = (v: number, log: boolean) => Number.isFinite(v) && (!log || v > 0);
  const clean = panels.map((p) => ({
    title: p.title,
    verticals: (p.verticals ?? []).filter((v) => ok(v.x, logX)),
    series: p.series.map((s, i) => ({
      ...s,
      style: s.colorIndex ?? i,
      inLegend: s.inLegend ?? true,
      points: s.points
        .filter((pt) => {
          const keep = ok(pt.x, logX) && ok(pt.y, logY);
          if (!keep) dropped++;
          return keep;
        })
        // A band reaching zero or below on a log axis is clipped at the bottom of the axis (NaN
        // marks it until the range is known), not cut off at the mean.
        .map((pt) => ({ ...pt, lo: ok(pt.lo, logY) ? pt.lo : Number.NaN, hi: ok(pt.hi, logY) ? pt.hi : pt.y }))
        .sort((a, b) => a.x - b.x),
    })),
  }));
  const all = clean.flatMap((p) => p.series.flatMap((s) => s.points));
  const allX = [...all.map((p) => p.x), ...clean.flatMap((p) => p.verticals.map((v) => v.x))];
  // Legend: every in-legend series name once, in first-appearance order, then verticals and styles.
  const legend: { label: string; style: number; dash?: string; vertical?: boolean }[] = [];
  const seen = new Set<string>();
  for (const p of clean) {
    for (const s of p.series)
      if (s.inLegend && s.points.length > 0 && !seen.has(`s:${s.name}`)) {
        seen.add(`s:${s.name}`);
        legend.push({ label: s.name, style: s.style });
      }
    for (const v of p.verticals)
      if (!seen.has(`v:${v.label}`)) {
        seen.add(`v:${v.label}`);
        legend.push({ label: v.label, style: v.colorIndex, vertical: true });
      }
  }
  // The legend column is as wide as its longest label (a fixed 210 px clipped labels past ≈ 24
  // characters, e.g. "latent-exact: y = 0 at this bits fraction"): 36 px of swatch and gap, then
  // LEGEND_CHAR_PX per character, an upper bound of Helvetica/Arial's mean advance at 12 px.
  const longest = Math.max(0, ...legend.map((e) => e.label.length), ...(options.styles ?? []).map((st) => st.label.length));
  const legendW = Math.max(210, 44 + Math.ceil(longest * LEGEND_CHAR_PX));
  const W = cols * PW + legendW;
  const legendH = 20 + (legend.length + (options.styles?.length ?? 0)) * 18;
  const H = headH + Math.max(rows * PH, legendH) + 22;
  const parts: string[] = [];
  parts.push(
    `<svg xmlns="http://www.w3.org/2000/svg" width="${W}" height="${H}" viewBox="0 0 ${W} ${H}" font-family="Helvetica, Arial, sans-serif" font-size="12">`,
  );
  parts.push(`<rect x="0" y="0" width="${W}" height="${H}" fill="#ffffff"/>`);
  parts.push(`<text x="${f((cols * PW) / 2)}" y="22" text-anchor="middle" font-size="15">${esc(options.title)}</text>`);
  if (all.length === 0 && allX.length === 0) {
    parts.push(`<text x="${f((cols * PW) / 2)}" y="${f(headH + PH / 2)}" text-anchor="middle">no plottable points</text>`);
    parts.push("</svg>");
    return `${parts.join("\n")}\n`;
  }
  const tx = (v: number) => (logX ? Math.log10(v) : v);
  const ty = (v: number) => (logY ? Math.log10(v) : v);
  let xmin = Math.min(...allX);
  let xmax = Math.max(...allX);
  let ymin = all.length ? Math.min(...all.map((p) => (Number.isNaN(p.lo) ? p.y : Math.min(p.lo, p.y)))) : 1;
  let ymax = all.length ? Math.max(...all.map((p) => Math.max(p.hi, p.y))) : 10;
  const xt = ticks(xmin, xmax, logX);
  const yt = ticks(ymin, ymax, logY);
  xmin = Math.min(xmin, xt[0]);
  xmax = Math.max(xmax, xt[xt.length - 1]);
  ymin = Math.min(ymin, yt[0]);
  ymax = Math.max(ymax, yt[yt.length - 1]);
  for (const p of all) if (Number.isNaN(p.lo)) p.lo = ymin;
  const pw = PW - m.left - m.right;
  const ph = PH - m.top - m.bottom;
  const labelPoints = all.length <= 60;
  let labelsOmitted = 0;
  clean.forEach((panel, k) => {
    const ox = (k % cols) * PW;
    const oy = headH + Math.floor(k / cols) * PH;
    const L = ox + m.left;
    const T = oy + m.top;
    const X = (v: number) => L + ((tx(v) - tx(xmin)) / (tx(xmax) - tx(xmin) || 1)) * pw;
    const Y = (v: number) => T + ph - ((ty(v) - ty(ymin)) / (ty(ymax) - ty(ymin) || 1)) * ph;
    if (panel.title)
      parts.push(`<text x="${f(L + pw / 2)}" y="${f(oy + 18)}" text-anchor="middle" font-size="13">${esc(panel.title)}</text>`);
    parts.push(`<g stroke="#dddddd" stroke-width="1">`);
    for (const v of xt) parts.push(`<line x1="${f(X(v))}" y1="${T}" x2="${f(X(v))}" y2="${T + ph}"/>`);
    for (const v of yt) parts.push(`<line x1="${L}" y1="${f(Y(v))}" x2="${L + pw}" y2="${f(Y(v))}"/>`);
    parts.push("</g>");
    parts.push(`<rect x="${L}" y="${T}" width="${pw}" height="${ph}" fill="none" stroke="#333333"/>`);
    parts.push(`<g text-anchor="middle">`);
    for (const v of xt) parts.push(`<text x="${f(X(v))}" y="${T + ph + 16}">${esc(tickLabel(v, logX))}</text>`);
    parts.push("</g>");
    parts.push(`<g text-anchor="end">`);
    for (const v of yt) parts.push(`<text x="${L - 6}" y="${f(Y(v) + 4)}">${esc(tickLabel(v, logY))}</text>`);
    parts.push("</g>");
    parts.push(
      `<text x="${f(L + pw / 2)}" y="${T + ph + 36}" text-anchor="middle">${esc(options.xLabel)}${logX ? " (log scale)" : ""}</text>`,
    );
    parts.push(
      `<text transform="translate(${ox + 16} ${f(T + ph / 2)}) rotate(-90)" text-anchor="middle">${esc(options.yLabel)}${logY ? " (log scale)" : ""}</text>`,
    );
    for (const v of panel.verticals) {
      const { color } = seriesStyle(v.colorIndex);
      parts.push(
        `<line x1="${f(X(v.x))}" y1="${T}" x2="${f(X(v.x))}" y2="${T + ph}" stroke="${color}" stroke-width="2" stroke-dasharray="1 3"/>`,
      );
    }
    const placed: { left: number; right: number; top: number; bottom: number }[] = [];
    for (const s of panel.series) {
      if (s.points.length === 0) continue;
      const { color, dash } = seriesStyle(s.style);
      const line = s.points.map((p) => `${f(X(p.x))},${f(Y(p.y))}`).join(" ");
      if (s.dash) {
        parts.push(
          `<polyline points="${line}" fill="none" stroke="${color}" stroke-width="1.2" stroke-opacity="0.8" stroke-dasharray="${s.dash}"/>`,
        );
        continue;
      }
      const upper = s.points.map((p) => `${f(X(p.x))},${f(Y(p.hi))}`);
      const lower = s.points.map((p) => `${f(X(p.x))},${f(Y(p.lo))}`).reverse();
      // A lone point has no area to fill: its band is an error bar.
      if (s.points.length === 1 && s.points[0].hi > s.points[0].lo) {
        const p = s.points[0];
        parts.push(
          `<line x1="${f(X(p.x))}" y1="${f(Y(p.lo))}" x2="${f(X(p.x))}" y2="${f(Y(p.hi))}" stroke="${color}" stroke-width="1.5" stroke-opacity="0.6"/>`,
        );
      } else if (s.points.some((p) => p.hi > p.lo))
        parts.push(`<polygon points="${[...upper, ...lower].join(" ")}" fill="${color}" fill-opacity="0.15" stroke="none"/>`);
      parts.push(`<polyline points="${line}" fill="none" stroke="${color}" stroke-width="2"${dash ? ` stroke-dasharray="${dash}"` : ""}/>`);
      for (const p of s.points) parts.push(`<circle cx="${f(X(p.x))}" cy="${f(Y(p.y))}" r="3" fill="${color}"/>`);
      if (labelPoints)
        for (const p of s.points) {
          if (!p.label) continue;
          // Placed where it overlaps no label drawn before it in this panel: above right of the
          // point, else below right, else above left; a label with no free place is left out and
          // counted in the note (overlapping labels were unreadable, e.g. kv-compression-real's).
          const w = LABEL_CHAR_PX * p.label.length;
          const px = X(p.x);
          const py = Y(p.y);
          const spot = [
            { x: px + 4, y: py - 5, left: px + 4 },
            { x: px + 4, y: py + 12, left: px + 4 },
            { x: px - 4, y: py - 5, left: px - 4 - w },
          ].find((c) => !placed.some((b) => c.left < b.right && b.left < c.left + w && c.y - 9 < b.bottom && b.top < c.y + 2));
          if (!spot) {
            labelsOmitted++;
            continue;
          }
          placed.push({ left: spot.left, right: spot.left + w, top: spot.y - 9, bottom: spot.y + 2 });
          const anchor = spot.left < spot.x ? ' text-anchor="end"' : "";
          parts.push(`<text x="${f(spot.x)}" y="${f(spot.y)}" font-size="9" fill="${color}"${anchor}>${esc(p.label)}</text>`);
        }
    }
  });
  const lx = cols * PW + 8;
  let row = 0;
  const ly = () => headH + m.top + 8 + row++ * 18;
  for (const e of legend) {
    const y = ly();
    const { color, dash } = seriesStyle(e.style);
    if (e.vertical)
      parts.push(
        `<line x1="${lx + 10}" y1="${y - 7}" x2="${lx + 10}" y2="${y + 7}" stroke="${color}" stroke-width="2" stroke-dasharray="1 3"/>`,
      );
    else
      parts.push(
        `<line x1="${lx}" y1="${y}" x2="${lx + 22}" y2="${y}" stroke="${color}" stroke-width="2"${dash ? ` stroke-dasharray="${dash}"` : ""}/>`,
      );
    parts.push(`<text x="${lx + 28}" y="${y + 4}">${esc(e.label)}</text>`);
  }
  for (const st of options.styles ?? []) {
    const y = ly();
    parts.push(`<line x1="${lx}" y1="${y}" x2="${lx + 22}" y2="${y}" stroke="#333333" stroke-width="1.2" stroke-dasharray="${st.dash}"/>`);
    parts.push(`<text x="${lx + 28}" y="${y + 4}">${esc(st.label)}</text>`);
  }
  const note = [
    options.note,
    dropped > 0 ? `${dropped} point(s) not plottable on these axes omitted` : "",
    labelsOmitted > 0 ? `${labelsOmitted} point label(s) left out where they would overlap others` : "",
  ]
    .filter(Boolean)
    .join("; ");
  if (note) parts.push(`<text x="8" y="${H - 8}" font-size="10" fill="#555555">${esc(note)}</text>`);
  parts.push("</svg>");
  return `${parts.join("\n")}\n`;
}
