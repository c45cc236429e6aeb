// Every exact kernel path of core, as a table, for the numerical-extremes tests: each path takes
// inputs at some scale and returns its output and the plain-loop reference of the same quantity.
import {
  KVCache,
  LatentCache,
  type Matrix,
  type MlaWeights,
  type MultiHeadWeights,
  attention,
  dotKernel,
  fastAttention,
  mergeMla,
  mergedMlaAttention,
  mlaAttention,
  mlaDecode,
  mlaToMultiHead,
  multiHeadAttention,
  multiHeadDecode,
  runAttention,
  sliceRows,
  streamingAttention,
} from "@randattn/core";
import { concatRowsRef, refAttention, refMultiHead } from "./reference.js";

/** A single-head path: (Q, K, V) → Y, with its reference. */
export interface HeadPath {
  name: string;
  run: (q: Matrix, k: Matrix, v: Matrix) => Matrix;
  ref: (q: Matrix, k: Matrix, v: Matrix) => Matrix;
}

// ReLU + ε: a dot kernel whose values grow with the logits (no max-shift possible).
const reluEps = (s: number): number => Math.max(s, 0) + 1e-3;
const causal = (q: Matrix, k: Matrix) => k.rows - q.rows;

export const HEAD_PATHS: HeadPath[] = [
  { name: "attention (materialized)", run: (q, k, v) => attention(q, k, v), ref: (q, k, v) => refAttention(q, k, v) },
  {
    name: "attention causal",
    run: (q, k, v) => attention(q, k, v, { mask: { kind: "causal" } }),
    ref: (q, k, v) => refAttention(q, k, v, { causalOffset: causal(q, k) }),
  },
  {
    name: "streamingAttention blockSize 1",
    run: (q, k, v) => streamingAttention(q, k, v, { blockSize: 1, queryBlockSize: 1 }),
    ref: (q, k, v) => refAttention(q, k, v),
  },
  {
    name: "streamingAttention causal blockSize 3",
    run: (q, k, v) => streamingAttention(q, k, v, { blockSize: 3, queryBlockSize: 2, mask: { kind: "causal" } }),
    ref: (q, k, v) => refAttention(q, k, v, { causalOffset: causal(q, k) }),
  },
  {
    name: "runAttention streaming (multiplicative mask)",
    run: (q, k, v) => runAttention(q, k, v, { algorithm: "streaming", mask: { kind: "causal" }, maskForm: "multiplicative" }),
    ref: (q, k, v) => refAttention(q, k, v, { causalOffset: causal(q, k) }),
  },
  {
    name: "dot kernel ReLU+ε (materialized)",
    run: (q, k, v) => attention(q, k, v, { kernel: dotKernel(reluEps) }),
    ref: (q, k, v) => refAttention(q, k, v, { kind: "dot", f: reluEps }),
  },
  {
    name: "dot kernel ReLU+ε (streaming)",
    run: (q, k, v) => streamingAttention(q, k, v, { kernel: dotKernel(reluEps), blockSize: 2 }),
    ref: (q, k, v) => refAttention(q, k, v, { kind: "dot", f: reluEps }),
  },
  { name: "fastAttention float64 materialized", run: (q, k, v) => fastAttention(q, k, v), ref: (q, k, v) => refAttention(q, k, v) },
  {
    name: "fastAttention float64 streaming causal",
    run: (q, k, v) => fastAttention(q, k, v, { mode: "streaming", blockSize: 2, mask: { kind: "causal" } }),
    ref: (q, k, v) => refAttention(q, k, v, { causalOffset: causal(q, k) }),
  },
];

/** A layer path: X → Y for a multi-head or MLA layer, with its reference. */
export interface LayerPath {
  name: string;
  kind: "mha" | "mla";
  run: (x: Matrix, w: MultiHeadWeights | MlaWeights) => Matrix;
  /** Reference on the equivalent multi-head weights (MLA: mlaToMultiHead). */
  ref: (x: Matrix, w: MultiHeadWeights | MlaWeights) => Matrix;
}

const mhaRef = (x: Matrix, w: MultiHeadWeights) => refMultiHead(x, x, w, { causalOffset: 0 });
const mlaRef = (x: Matrix, w: MlaWeights) => refMultiHead(x, x, mlaToMultiHead(w), { causalOffset: 0 });

/** Token-by-token decode of all rows of x (one row per step), stacked. */
function decodeAll(x: Matrix, step: (row: Matrix) => Matrix): Matrix {
  const rows: Matrix[] = [];
  for (let i = 0; i < x.rows; i++) rows.push(step(sliceRows(x, i, i + 1)));
  return concatRowsRef(rows);
}

export const LAYER_PATHS: LayerPath[] = [
  {
    name: "multiHeadAttention causal",
    kind: "mha",
    run: (x, w) => multiHeadAttention(x, x, w as MultiHeadWeights, { mask: { kind: "causal" } }),
    ref: (x, w) => mhaRef(x, w as MultiHeadWeights),
  },
  {
    name: "multiHeadAttention causal streaming",
    kind: "mha",
    run: (x, w) => multiHeadAttention(x, x, w as MultiHeadWeights, { mask: { kind: "causal" }, algorithm: "streaming", blockSize: 2 }),
    ref: (x, w) => mhaRef(x, w as MultiHeadWeights),
  },
  {
    name: "multiHeadDecode token by token",
    kind: "mha",
    run: (x, w) => {
      const mw = w as MultiHeadWeights;
      const cache = new KVCache({ numKvHeads: mw.keys.length, keyDim: mw.keys[0].cols, valueDim: mw.values[0].cols });
      return decodeAll(x, (row) => multiHeadDecode(row, mw, cache));
    },
    ref: (x, w) => mhaRef(x, w as MultiHeadWeights),
  },
  {
    name: "mlaAttention (unmerged) causal",
    kind: "mla",
    run: (x, w) => mlaAttention(x, x, w as MlaWeights, { mask: { kind: "causal" } }),
    ref: (x, w) => mlaRef(x, w as MlaWeights),
  },
  {
    name: "mergedMlaAttention causal",
    kind: "mla",
    run: (x, w) => mergedMlaAttention(x, x, mergeMla(w as MlaWeights), { mask: { kind: "causal" } }),
    ref: (x, w) => mlaRef(x, w as MlaWeights),
  },
  {
    name: "mergedMlaAttention causal streaming",
    kind: "mla",
    run: (x, w) => mergedMlaAttention(x, x, mergeMla(w as MlaWeights), { mask: { kind: "causal" }, algorithm: "streaming", blockSize: 2 }),
    ref: (x, w) => mlaRef(x, w as MlaWeights),
  },
  {
    name: "mlaDecode token by token",
    kind: "mla",
    run: (x, w) => {
      const merged = mergeMla(w as MlaWeights);
      const cache = new LatentCache({ latentDim: merged.latentDown.cols });
      return decodeAll(x, (row) => mlaDecode(row, merged, cache));
    },
    ref: (x, w) => mlaRef(x, w as MlaWeights),
  },
];
