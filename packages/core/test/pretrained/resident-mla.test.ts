/**
 * DeepSeek's prefill paths of issue 14: the resident MLA + MoE prefill (pretrained/residentMla.ts)
 * and the per-sublayer path's all-heads MLA pass (model.ts mlaAttendAllHeads) give the logits of
 * the per-head path bit for bit — forced here by a declining attentionOverride, which takes
 * model.ts' per-head calls — in float64 and under the float32 option, for prefills of odd length,
 * a second multi-token step on a filled cache, a short step whose experts get too few rows for the
 * WebAssembly kernels, and a decoded token; and moeForward's routing (top-k by selection, per-expert
 * index lists, scatter-add) against the literal sort-and-gather form it replaced, ties included.
 */
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import { Matrix, PretrainedModel, feedForward, moeForward, selectRows, withKernelBackend } from "@randattn/core";
import type { MoeFfn } from "@randattn/core";
import { loadPretrained } from "@randattn/core/node";
import seedrandom from "seedrandom";
import { errorMessage, fixtureDir } from "./helpers.js";

const shipped = fileURLToPath(new URL("../../../../models/deepseek-mla-fortunes", import.meta.url));
const declined = { attentionOverride: () => undefined };
/** The first index where a and b differ in bits (Object.is: NaN equals NaN, −0 ≠ +0), or −1. */
function firstDifference(a: Float64Array, b: Float64Array): number {
  if (a.length !== b.length) return Math.min(a.length, b.length);
  for (let i = 0; i < a.length; i++) if (!Object.is(a[i], b[i])) return i;
  return -1;
}
type WithResident = { resident?: { steps: number; constructor: { name: string } } };

describe.each([
  ["deepseek-mla-fortunes (shipped)", shipped, "auto", true],
  // Tiny fixtures: the "wasm" backend puts every product on the WebAssembly kernels, so the resident
  // path runs (group-limited routing over several experts; YaRN's mscale).
  ["deepseek-moe-bf16", fixtureDir("deepseek-moe-bf16"), "wasm", true],
  ["deepseek-yarn", fixtureDir("deepseek-yarn"), "wasm", true],
  // q_lora_rank set: not resident; model.ts' all-heads pass of the fused driver runs instead.
  ["deepseek-dense-qlora", fixtureDir("deepseek-dense-qlora"), "wasm", false],
] as const)("DeepSeek prefill of %s", (_, dir, backend, isResident) => {
  const model = loadPretrained(dir);
  const V = model.vocabSize;
  const ids = Array.from({ length: 50 }, (_, i) => (i * 37 + 11) % V);
  const resident = (model as unknown as WithResident).resident;

  it("takes the resident MLA path where it applies", () => {
    expect(resident?.constructor.name).toBe(isResident ? "ResidentMlaPrefill" : undefined);
  });

  it.each(["float64", "float32"] as const)(
    "equals the per-head path bit for bit (%s): prefill, a 6-token step, a 5-token step, a decoded token",
    (precision) =>
      withKernelBackend(backend, () => {
        const before = resident?.steps ?? 0;
        const a = model.createState();
        const b = model.createState();
        for (const chunk of [ids.slice(0, 37), ids.slice(37, 43), ids.slice(43, 48), ids.slice(48, 49)]) {
          const fast = model.step(a, chunk, { precision, mlaForm: "unmerged" });
          const ref = model.step(b, chunk, { precision, mlaForm: "unmerged", ...declined });
          expect(firstDifference(fast.logits.data, ref.logits.data)).toBe(-1);
          expect(firstDifference(fast.hidden.data, ref.hidden.data)).toBe(-1);
        }
        // The three multi-token steps ran resident; the decoded token (1 row) too under "wasm" (every
        // product on the WebAssembly kernels), else it took model.ts' path.
        expect(resident?.steps ?? 0).toBe(before + (isResident ? (backend === "wasm" ? 4 : 3) : 0));
      }),
  );

  it.each(["float64", "float32"] as const)(
    "a forward without a state (no latent caches: L and k_R stay in the arena) has the cached step's bits (%s)",
    (precision) =>
      withKernelBackend(backend, () => {
        if (isResident) expect((resident as { cacheFree?: boolean }).cacheFree).toBe(true);
        const before = resident?.steps ?? 0;
        const fwd = model.forward(ids, { precision });
        expect(resident?.steps ?? 0).toBe(before + (isResident ? 1 : 0));
        const cached = model.step(model.createState(), ids, { precision });
        const ref = model.forward(ids, { precision, mlaForm: "unmerged", ...declined });
        for (const r of [cached, ref]) {
          expect(firstDifference(fwd.logits.data, r.logits.data)).toBe(-1);
          expect(firstDifference(fwd.hidden.data, r.hidden.data)).toBe(-1);
        }
      }),
  );
});

describe("resident MLA forward without a state on bad rotary keys", () => {
  it("raises the cached step's error (k_R overflowing to ±∞) and the per-sublayer path's", () => {
    const base = loadPretrained(shipped);
    const layers = base.weights.layers.map((l, i) => {
      if (i !== 2 || l.attention.kind !== "mla") return l;
      const w = l.attention.weights;
      const keyRope = w.keyRope as Matrix;
      const big = new Matrix(
        keyRope.rows,
        keyRope.cols,
        keyRope.data.map((v) => v * 1e308),
      );
      return { ...l, attention: { ...l.attention, weights: { ...w, keyRope: big } } };
    });
    const model = new PretrainedModel(base.config, { ...base.weights, layers });
    const ids = Array.from({ length: 24 }, (_, i) => (i * 29 + 3) % model.vocabSize);
    const resident = (model as unknown as WithResident).resident;
    const fwd = errorMessage(() => model.forward(ids));
    expect(resident?.steps).toBe(1);
    expect(fwd).toMatch(/^NonFiniteError: rotaryKeys/);
    expect(fwd).toBe(errorMessage(() => model.step(model.createState(), ids)));
    expect(fwd).toBe(errorMessage(() => model.forward(ids, { mlaForm: "unmerged", ...declined })));
  });
});

describe("resident MLA prefill outside float32's safe range", () => {
  it("takes float32 attention's float64 fallback per head, as the fused driver does (same bits)", () => {
    const base = loadPretrained(shipped);
    // Layer 1, head 2: W_UQ and W_QR scaled by 2⁶⁴ (max|Q_h| leaves [2⁻⁶⁰, 2⁶⁰]); layer 2, head 0:
    // W_UV scaled (max|V_h| does): float32 attention computes those heads in float64, the others in float32.
    const scaled = (m: Matrix) =>
      new Matrix(
        m.rows,
        m.cols,
        m.data.map((v) => v * 2 ** 64),
      );
    const layers = base.weights.layers.map((l, i) => {
      if (l.attention.kind !== "mla" || (i !== 1 && i !== 2)) return l;
      const w = l.attention.weights;
      const weights =
        i === 1
          ? {
              ...w,
              queryUp: w.queryUp.map((q, h) => (h === 2 ? scaled(q) : q)),
              queryRope: w.queryRope?.map((q, h) => (h === 2 ? scaled(q) : q)),
            }
          : { ...w, valueUp: w.valueUp.map((v, h) => (h === 0 ? scaled(v) : v)) };
      return { ...l, attention: { ...l.attention, weights } };
    });
    const model = new PretrainedModel(base.config, { ...base.weights, layers });
    const ids = Array.from({ length: 40 }, (_, i) => (i * 53 + 5) % model.vocabSize);
    const resident = (model as unknown as WithResident).resident;
    const fast = model.forward(ids, { precision: "float32" });
    const ref = model.forward(ids, { precision: "float32", ...declined });
    expect(resident?.steps).toBe(1);
    expect(firstDifference(fast.logits.data, ref.logits.data)).toBe(-1);
    // …and differs from the unscaled model's (the scaled heads changed the computation).
    expect(firstDifference(fast.logits.data, base.forward(ids, { precision: "float32" }).logits.data)).toBeGreaterThanOrEqual(0);
  });
});

/** The MoE block as it was before issue 14's pass: a full sort per token and a gather per expert. */
function literalMoe(ffn: MoeFfn, x: Matrix): Matrix {
  const E = ffn.experts.length;
  const topK = (s: ArrayLike<number>, k: number) =>
    Array.from({ length: s.length }, (_, i) => i)
      .sort((i, j) => s[j] - s[i] || i - j)
      .slice(0, k);
  const logits = new Matrix(x.rows, E);
  for (let i = 0; i < x.rows; i++) {
    for (let e = 0; e < E; e++) {
      let s = 0;
      for (let p = 0; p < x.cols; p++) s += x.get(i, p) * ffn.gate.get(e, p);
      logits.data[i * E + e] = s;
    }
  }
  const perGroup = E / ffn.numGroups;
  const chosen: number[][] = [];
  const weights: number[][] = [];
  for (let i = 0; i < x.rows; i++) {
    const row = logits.rowView(i);
    const max = Math.max(...row);
    const p = Float64Array.from(row, (v) => Math.exp(v - max));
    const z = p.reduce((s, v) => s + v, 0);
    for (let e = 0; e < E; e++) p[e] /= z;
    let scores: Float64Array = p;
    if (ffn.method === "group_limited_greedy") {
      const groupMax = Float64Array.from({ length: ffn.numGroups }, (_, g) => Math.max(...p.subarray(g * perGroup, (g + 1) * perGroup)));
      const keep = new Set(topK(groupMax, ffn.topkGroups));
      scores = p.map((v, e) => (keep.has(Math.floor(e / perGroup)) ? v : 0));
    }
    const idx = topK(scores, ffn.topK);
    let ws = idx.map((e) => scores[e]);
    if (ffn.topK > 1 && ffn.normalizeTopK) {
      const s = ws.reduce((a, b) => a + b, 0) + 1e-20;
      ws = ws.map((v) => v / s);
    } else ws = ws.map((v) => v * ffn.routedScaling);
    chosen.push(idx);
    weights.push(ws);
  }
  const out = new Matrix(x.rows, x.cols);
  for (let e = 0; e < E; e++) {
    const rows: number[] = [];
    const ws: number[] = [];
    for (let i = 0; i < x.rows; i++) {
      const k = chosen[i].indexOf(e);
      if (k >= 0) {
        rows.push(i);
        ws.push(weights[i][k]);
      }
    }
    if (rows.length === 0) continue;
    const y = feedForward(selectRows(x, rows), ffn.experts[e]);
    for (let r = 0; r < rows.length; r++) for (let j = 0; j < x.cols; j++) out.data[rows[r] * x.cols + j] += ws[r] * y.get(r, j);
  }
  if (ffn.shared) {
    const s = feedForward(x, ffn.shared);
    for (let i = 0; i < out.data.length; i++) out.data[i] += s.data[i];
  }
  return out;
}

describe("moeForward", () => {
  const model = loadPretrained(shipped);
  const moe = model.weights.layers.find((l) => l.ffn.kind === "moe")?.ffn as MoeFfn;
  const rng = seedrandom("moe");
  const d = moe.gate.cols;
  const x = new Matrix(
    40,
    d,
    Float64Array.from({ length: 40 * d }, () => rng() - 0.5),
  );
  // Experts 1 and 2 with the same router row: every token ties them, and the lower index must win.
  const gate = moe.gate.clone();
  gate.data.copyWithin(2 * d, d, 2 * d);
  const variants: [string, MoeFfn][] = [
    ["greedy, as shipped", moe],
    ["greedy with tied experts", { ...moe, gate }],
    [
      "group-limited (2 groups, keep 1), renormalized",
      { ...moe, method: "group_limited_greedy", numGroups: 2, topkGroups: 1, normalizeTopK: true },
    ],
    ["top-3, tied, scaled", { ...moe, gate, topK: 3, routedScaling: 1.5 }],
  ];
  it.each(variants)("%s: the literal sort-and-gather form bit for bit, and the router capture", (_, ffn) => {
    const cap = { layer: 0 } as Parameters<typeof moeForward>[2] & object;
    const y = moeForward(ffn, x, cap, new Set(["router"]));
    expect(firstDifference(y.data, literalMoe(ffn, x).data)).toBe(-1);
    expect(cap.router?.experts.length).toBe(40);
    for (const row of cap.router?.experts ?? []) expect(new Set(row).size).toBe(ffn.topK);
    if (ffn.gate === gate) for (const row of cap.router?.experts ?? []) expect(row.indexOf(2) < 0 || row.indexOf(1) >= 0).toBe(true);
  });
});
