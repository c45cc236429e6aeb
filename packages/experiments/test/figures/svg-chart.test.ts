import { describe, expect, it } from "vitest";
import { latexTable, lineChartSvg, markdownTable, type Series } from "@randattn/experiments/internal";

const series: Series[] = [
  { name: "exact", points: [{ x: 100, y: 0, lo: 0, hi: 0 }] },
  {
    name: "rows<s>",
    points: [
      { x: 10, y: 0.5, lo: 0.4, hi: 0.6 },
      { x: 1000, y: 0.05, lo: 0.01, hi: 0.09 },
    ],
  },
];

describe("hand-written SVG charts", () => {
  it("are a pure function of the data (byte-identical on repeat)", () => {
    const a = lineChartSvg(series, { title: "t", xLabel: "flops", yLabel: "err" });
    expect(lineChartSvg(series, { title: "t", xLabel: "flops", yLabel: "err" })).toBe(a);
  });

  it("draw a band and a line per series, escape labels, and count points dropped on log axes", () => {
    const svg = lineChartSvg(series, { title: "a < b & c", xLabel: "flops", yLabel: "err" });
    expect(svg.startsWith('<svg xmlns="http://www.w3.org/2000/svg"')).toBe(true);
    expect(svg).toContain("a &lt; b &amp; c");
    expect(svg).toContain("rows&lt;s&gt;");
    expect(svg.match(/<polygon /g)).toHaveLength(1);
    expect(svg.match(/<polyline /g)).toHaveLength(1);
    expect(svg).toContain("1 point(s) not plottable on these axes omitted");
    expect(svg.trim().endsWith("</svg>")).toBe(true);
  });

  it("the legend column is wide enough for its longest label (no label clipped at the SVG edge)", () => {
    const width = (svg: string) => Number(/^<svg [^>]*width="(\d+)"/.exec(svg)?.[1]);
    const short = lineChartSvg(series, { title: "t", xLabel: "flops", yLabel: "err" });
    const long = "latent-exact: y = 0 at this bits fraction"; // 41 characters, clipped by the former 210 px
    const named = lineChartSvg([series[0], { ...series[1], name: long }], { title: "t", xLabel: "flops", yLabel: "err" });
    // Label starts 36 px into the column; at ≥ 6.7 px per character (Arial's mean advance, 12 px) it needs ≥ 36 + 6.7·41.
    const legendX = Number(/<text x="([\d.]+)" y="[\d.]+">latent-exact/.exec(named)?.[1]);
    expect(legendX + 6.7 * long.length).toBeLessThanOrEqual(width(named));
    expect(width(named)).toBeGreaterThan(width(short)); // short labels keep the former width
  });

  it("point labels never overlap: placed above right, below right, above left, else left out and counted", () => {
    const at = (name: string) => ({
      name,
      points: [
        { x: 10, y: 1, lo: 1, hi: 1, label: `${name} = 1` },
        { x: 1000, y: 0.1, lo: 0.1, hi: 0.1 },
      ],
    });
    const svg = lineChartSvg(["a", "b", "c", "d"].map(at), { title: "t", xLabel: "flops", yLabel: "err" });
    const labels = [...svg.matchAll(/<text x="([\d.]+)" y="([\d.]+)" font-size="9"[^>]*?( text-anchor="end")?>(\w) = 1</g)].map((m) => [
      m[4],
      Number(m[1]),
      Number(m[2]),
      m[3] !== undefined,
    ]);
    expect(labels.map((l) => l[0])).toEqual(["a", "b", "c"]); // d had no free place
    const [a, b, c] = labels as [string, number, number, boolean][];
    expect(b[1]).toBe(a[1]); // below right: same x, 17 px lower
    expect(b[2] - a[2]).toBeCloseTo(17, 6);
    expect(c[3] && !a[3] && a[1] - c[1]).toBeCloseTo(8, 6); // above left, right-aligned 4 px left of the point
    expect(svg).toContain("1 point label(s) left out where they would overlap others");
  });

  it("log ticks are powers of ten spanning the data", () => {
    const svg = lineChartSvg(series.slice(1), { title: "t", xLabel: "x", yLabel: "y" });
    for (const t of [">10<", ">100<", ">1000<"]) expect(svg).toContain(t);
  });

  it("tables: Markdown pipes and LaTeX specials are escaped", () => {
    const t = { header: ["method_label", "err"], rows: [["a|b", "1 ± 2"]], caption: "x_y" };
    expect(markdownTable(t)).toContain("| a\\|b | 1 ± 2 |");
    const tex = latexTable(t);
    expect(tex).toContain("method\\_label & err \\\\");
    expect(tex).toContain("1 $\\pm$ 2");
    expect(tex).toContain("\\caption{x\\_y}");
  });
});
