/**
 * RunOptions.attentionOverride: absent or declining, the forward is bit for bit the exact one;
 * returning the literal softmax formula (computed here, independently of core's kernels) gives
 * the same logits to rounding; the hook sees every layer × query head with the tensors the
 * captures report; a misshapen return is a ShapeError naming layer and head.
 */
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import { Matrix, ShapeError } from "@randattn/core";
import type { AttentionOverrideHead } from "@randattn/core";
import { loadPretrained } from "@randattn/core/node";
import { relError } from "./helpers.js";

const root = (m: string) => fileURLToPath(new URL(`../../../../models/${m}`, import.meta.url));

/** softmax(scale·QKᵀ + causal mask with offset)·V, row by row from the definition. */
function literalAttention(h: AttentionOverrideHead): Matrix {
  const { queries: q, keys: k, values: v } = h;
  const out = new Matrix(q.rows, v.cols);
  for (let i = 0; i < q.rows; i++) {
    const visible = h.offset + i + 1;
    const s: number[] = [];
    for (let j = 0; j < visible; j++) {
      let dot = 0;
      for (let c = 0; c < q.cols; c++) dot += q.get(i, c) * k.get(j, c);
      s.push(h.scale * dot);
    }
    const m = Math.max(...s);
    const e = s.map((x) => Math.exp(x - m));
    const z = e.reduce((a, b) => a + b, 0);
    for (let j = 0; j < visible; j++) for (let c = 0; c < v.cols; c++) out.data[i * v.cols + c] += (e[j] / z) * v.get(j, c);
  }
  return out;
}

describe.each(["llama-gqa-fortunes", "deepseek-mla-fortunes"])("attentionOverride on %s", (name) => {
  const model = loadPretrained(root(name));
  const ids = model.tokenizer!.encode("What is the meaning of life? Forty-two, said the computer.");

  it("declining heads leaves the logits bit for bit; the literal formula matches to rounding", () => {
    const exact = model.forward(ids);
    const seen: string[] = [];
    const declined = model.forward(ids, {
      attentionOverride: (h) => {
        seen.push(`${h.layer}.${h.head}`);
        return undefined;
      },
    });
    expect(Array.from(declined.logits.data)).toEqual(Array.from(exact.logits.data));
    expect(seen).toEqual(Array.from({ length: 16 }, (_, i) => `${i >> 2}.${i & 3}`));
    const literal = model.forward(ids, { attentionOverride: literalAttention });
    expect(relError(literal.logits.data, exact.logits.data)).toBeLessThan(1e-12);
  });

  it("hands the hook the captured post-RoPE queries, keys and values", () => {
    const cap = model.forward(ids, { capture: { layers: [3], tensors: ["q", "k", "v"] } }).layers[0];
    const group = cap.q!.length / cap.k!.length;
    model.forward(ids, {
      attentionOverride: (h) => {
        if (h.layer !== 3) return undefined;
        expect(Array.from(h.queries.data)).toEqual(Array.from(cap.q![h.head].data));
        expect(Array.from(h.keys.data)).toEqual(Array.from(cap.k![Math.floor(h.head / group)].data));
        expect(Array.from(h.values.data)).toEqual(Array.from(cap.v![Math.floor(h.head / group)].data));
        expect(h.offset).toBe(0);
        expect(h.scale).toBeCloseTo(h.queries.cols ** -0.5, 15);
        return undefined;
      },
    });
  });

  it("a cached step passes the offset, and a misshapen return is a ShapeError", () => {
    const state = model.createState();
    model.step(state, ids.slice(0, 5));
    const offsets = new Set<number>();
    model.step(state, ids.slice(5, 7), {
      attentionOverride: (h) => {
        offsets.add(h.offset);
        expect(h.keys.rows).toBe(7);
        return literalAttention(h);
      },
    });
    expect([...offsets]).toEqual([5]);
    expect(() => model.forward(ids, { attentionOverride: (h) => new Matrix(h.queries.rows, h.values.cols + 1) })).toThrow(ShapeError);
    expect(() => model.forward(ids, { attentionOverride: (h) => new Matrix(h.queries.rows, h.values.cols + 1) })).toThrow(
      /layer 0, head 0/,
    );
  });
});
