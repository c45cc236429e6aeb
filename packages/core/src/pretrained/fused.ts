/**
 * Prefill fast path of the pretrained models (issue 14): the per-head and per-branch projection
 * weights of a layer joined side by side ONCE at model construction, so a layer step runs one GEMM
 * where it ran one per head (GQA: [W_Q^0 … W_Q^{H−1} | W_K^0 … | W_V^0 …], H + 2G products → 1;
 * SwiGLU: [W_gate | W_up], 2 → 1; MLA: [W_DKV | W_KR], [W_UQ^h | W_QR^h]_h, [W_UK^h]_h | [W_UV^h]_h).
 * At the shipped models' sizes (d = 64, heads of 16) each product is tiny and per-call packing and
 * dispatch, not arithmetic, dominated the prefill (profile in docs/performance.md).
 *
 * Bits: every entry of a joined product is the same dot product, summed over the shared index in
 * the same order, as in the separate products (both GEMM kernels of linalg/matmul.ts accumulate
 * each C[i, j] over p independently of j and of n), so the joined forms change no output bit.
 */
import { activationFunction } from "../layers/activations.js";
import { type FfnWeights, ffnActivation, isGatedFfn } from "../layers/ffn.js";
import { matmulInto, matmulTransB, matmulTransBInto } from "../linalg/matmul.js";
import {
  type PackedOperand,
  type PackedOperand32,
  gemmWasmPacked,
  gemmWasmPacked32,
  SMALL_M_ROWS,
  kernelBackendFor,
  packOperandF32,
  packOperandF64,
} from "../kernels/gemm.js";
import { matmul32Into, matmulTransB32 } from "../linalg/matmul32.js";
import { Matrix } from "../matrix.js";
import { NumericalError } from "../errors.js";
import { type NormParams, applyNorm, rmsNormRowsInto } from "../norm.js";
import { simdExp } from "../kernels/softmaxWasm.js";
import { residentRowProduct } from "./residentGemv.js";
import type { Activation } from "../layers/activations.js";

/** Columns of the matrices side by side (no checks: internal, shapes come from a built model). */
export function joinColumns(parts: readonly Matrix[]): Matrix {
  const rows = parts[0].rows;
  let cols = 0;
  for (const p of parts) cols += p.cols;
  const out = new Matrix(rows, cols);
  let c0 = 0;
  for (const p of parts) {
    for (let i = 0; i < rows; i++) out.data.set(p.data.subarray(i * p.cols, (i + 1) * p.cols), i * cols + c0);
    c0 += p.cols;
  }
  return out;
}

/** Columns c0 … c0 + w − 1 of a row-major block with `ld` columns, as a new t×w matrix. */
export function columnSlice(src: Float64Array, rows: number, ld: number, c0: number, w: number): Matrix {
  const out = new Matrix(rows, w);
  const o = out.data;
  for (let i = 0; i < rows; i++) o.set(src.subarray(i * ld + c0, i * ld + c0 + w), i * w);
  return out;
}

/**
 * Columns c0 … c0 + w − 1 of a ONE-row block, as a 1×w view of `src` (no copy): for readers done
 * with it before `src` changes. `rows` must be 1 (the signature is `columnSlice`'s).
 */
export function rowColumns(src: Float64Array, rows: number, _ld: number, c0: number, w: number): Matrix {
  return new Matrix(rows, w, src.subarray(c0, c0 + w));
}

/**
 * Weights packed once into the SIMD GEMM's panels (a model's weights are immutable after
 * construction), keyed by the weight matrix; `null` when the shape needs per-call blocking.
 */
const packed = new WeakMap<Matrix, PackedOperand | null>();
const packedTransposed = new WeakMap<Matrix, PackedOperand | null>();
function packedOf(w: Matrix, transposed: boolean): PackedOperand | undefined {
  const cache = transposed ? packedTransposed : packed;
  let p = cache.get(w);
  if (p === undefined) {
    p = (transposed ? packOperandF64(w.data, true, w.cols, w.rows) : packOperandF64(w.data, false, w.rows, w.cols)) ?? null;
    cache.set(w, p);
  }
  return p ?? undefined;
}

/** Float32 panels, keyed like `packed` (`null`: shape needs per-call blocking). */
const packed32 = new WeakMap<Matrix, PackedOperand32 | null>();
const packedTransposed32 = new WeakMap<Matrix, PackedOperand32 | null>();
function packedOf32(w: Matrix, transposed: boolean): PackedOperand32 | undefined {
  const cache = transposed ? packedTransposed32 : packed32;
  let p = cache.get(w);
  if (p === undefined) {
    p = (transposed ? packOperandF32(w.data, true, w.cols, w.rows) : packOperandF32(w.data, false, w.rows, w.cols)) ?? null;
    cache.set(w, p);
  }
  return p ?? undefined;
}

/** W's entries rounded to float32 (stored as float64), once per weight matrix. */
const rounded = new WeakMap<Matrix, Float64Array>();
function roundedOf(w: Matrix): Float64Array {
  let r = rounded.get(w);
  if (r === undefined) {
    r = rounded32(w.data);
    rounded.set(w, r);
  }
  return r;
}
function rounded32(x: Float64Array): Float64Array {
  const r = new Float64Array(x.length);
  for (let i = 0; i < x.length; i++) r[i] = Math.fround(x[i]);
  return r;
}
function roundInPlace(x: Float64Array): void {
  for (let i = 0; i < x.length; i++) x[i] = Math.fround(x[i]);
}

/**
 * Arithmetic of a model's projections (`RunOptions.precision`): `"float64"`, or `"float32"` — x and W
 * rounded to float32 and every product and sum in float32, as torch runs a float32 checkpoint.
 */
export type ProjectionPrecision = "float64" | "float32";

/**
 * X W into a new t×n matrix (or into `scratch(slot, …)` when a slot is named: a temporary that
 * must not outlive the step), `matmulInto`'s result bit for bit, without `matmul`'s per-call scans,
 * and on the SIMD path with W's panels packed once per model instead of once per product.
 * `precision: "float32"`: `matmul32`'s arithmetic (|error| ≤ (k + 4)·2⁻²⁴·(|X||W|) per entry), W's
 * float32 panels packed once; no range guard — a model's activations are normalized rows (RMSNorm /
 * LayerNorm outputs, GLU products of them) and its weights finite checkpoint tensors, far inside float32's range.
 */
export function project(x: Matrix, w: Matrix, slot?: ScratchSlot, precision: ProjectionPrecision = "float64"): Matrix {
  const out = slot === undefined ? new Matrix(x.rows, w.cols) : new Matrix(x.rows, w.cols, scratch(slot, x.rows * w.cols));
  const wasm = kernelBackendFor(x.rows, x.cols, w.cols) === "wasm";
  // One row (a decoded token) on W's panels resident in the model's arena: the scalar kernels' bits.
  if (x.rows === 1 && !wasm && residentRowProduct(x.data, w, false, precision, out.data) !== undefined) return out;
  if (precision === "float32") {
    const p32 = wasm ? packedOf32(w, false) : undefined;
    if (p32) gemmWasmPacked32(x.data, p32, out.data, x.rows);
    else if (x.rows < SMALL_M_ROWS) {
      // A decoded token's few rows: the scalar few-rows kernel on float32-rounded x and W (W rounded
      // once per model), C rounded to float32 — matmul32's scalar form ("at least as accurate"),
      // without repacking or re-rounding all of W per token as matmul32Into would.
      matmulInto(rounded32(x.data), roundedOf(w), out.data, x.rows, x.cols, w.cols, false);
      roundInPlace(out.data);
    } else matmul32Into(x.data, w.data, out.data, x.rows, x.cols, w.cols, false);
    return out;
  }
  const p = wasm ? packedOf(w, false) : undefined;
  if (p) gemmWasmPacked(x.data, p, out.data, x.rows, false);
  else matmulInto(x.data, w.data, out.data, x.rows, x.cols, w.cols, false);
  return out;
}

/** The temporaries of a layer step that are never live at the same time as another of their slot. */
export type ScratchSlot =
  | "qkv"
  | "mlaQueries"
  | "mlaDown"
  | "mlaKeyValueUp"
  | "mlaKeys"
  | "mlaValues"
  | "moeRows"
  | "moeExpert"
  | "gluBoth"
  | "gluHidden"
  | "heads"
  | "normIn"
  | "normPost"
  | "attnOut"
  | "ffnOut";
const scratchPool = new Map<ScratchSlot, Float64Array>();
/**
 * A reused buffer of `length` floats for a step's temporary (not zeroed: every user overwrites it
 * whole). Per thread (module state), synchronous use only; large typed arrays are allocated outside
 * V8's heap and zero-filled, which cost ≈ 6 % of a prefill plus GC when made afresh per product.
 */
export function scratch(slot: ScratchSlot, length: number): Float64Array {
  let b = scratchPool.get(slot);
  if (b === undefined || b.length < length) {
    b = new Float64Array(Math.max(length, 2 * (b?.length ?? 0)));
    scratchPool.set(slot, b);
  }
  return b.subarray(0, length);
}

/**
 * X Wᵀ for W stored n×d (the LM head, logits = h Wᵀ): `matmulTransB`'s bits, W packed once.
 * Only for a W used transposed everywhere (the packing is keyed by the matrix).
 */
export function projectTransposed(x: Matrix, w: Matrix, precision: ProjectionPrecision = "float64"): Matrix {
  const wasm = kernelBackendFor(x.rows, x.cols, w.rows) === "wasm";
  // One row on Wᵀ's panels resident in the model's arena (the LM head): the scalar kernels' bits.
  const row = x.rows === 1 && !wasm ? residentRowProduct(x.data, w, true, precision) : undefined;
  if (row !== undefined) return new Matrix(1, w.rows, row);
  if (precision === "float32") {
    const p32 = wasm ? packedOf32(w, true) : undefined;
    if (!p32 && x.rows < SMALL_M_ROWS) {
      const few = new Matrix(x.rows, w.rows);
      matmulTransBInto(rounded32(x.data), roundedOf(w), few.data, x.rows, x.cols, w.rows);
      roundInPlace(few.data);
      return few;
    }
    if (!p32) return matmulTransB32(x, w);
    const out = new Matrix(x.rows, w.rows);
    gemmWasmPacked32(x.data, p32, out.data, x.rows);
    return out;
  }
  const p = wasm ? packedOf(w, true) : undefined;
  if (!p) return matmulTransB(x, w);
  const out = new Matrix(x.rows, w.rows);
  gemmWasmPacked(x.data, p, out.data, x.rows, false);
  return out;
}

/** A GLU FFN with its gate and linear branches joined: x [W₁ | V] in one product. */
export interface JoinedGlu {
  /** d × 2·d_ff: W₁ in columns 0 … d_ff − 1, V in d_ff … 2·d_ff − 1. */
  readonly gateUp: Matrix;
  readonly dHidden: number;
  readonly activation: Activation;
  readonly weights: FfnWeights;
}

/** The joined form of a GLU FFN, or undefined for the plain kinds (they keep `feedForward`). */
export function joinGlu(weights: FfnWeights): JoinedGlu | undefined {
  if (!isGatedFfn(weights.kind) || weights.v === undefined) return undefined;
  return { gateUp: joinColumns([weights.w1, weights.v]), dHidden: weights.w1.cols, activation: ffnActivation(weights.kind), weights };
}

/**
 * (f(x W₁ + b₁) ⊙ (x V + c)) W₂ + b₂ — `feedForward`'s GLU branch with the two input products
 * joined and the activation and gating in one pass. Per entry the same operations in the same
 * order as `feedForward` (f(g + b₁), then · (u + c)), so the same bits. The weights were checked
 * when the model was built and x is finite (the layer's norm of a finite residual stream), so only
 * the output is scanned, as `feedForward` does, to name non-finite weights or an overflow.
 * @throws NumericalError when the output is not finite.
 */
export function gluForward(x: Matrix, f: JoinedGlu, precision: ProjectionPrecision = "float64", outSlot?: ScratchSlot): Matrix {
  const t = x.rows;
  const dff = f.dHidden;
  const both = project(x, f.gateUp, "gluBoth", precision).data;
  const hidden = new Matrix(t, dff, scratch("gluHidden", t * dff));
  const h = hidden.data;
  const { b1, c } = f.weights;
  if (f.activation === "silu" && b1 === undefined && c === undefined) {
    // SwiGLU (Llama, DeepSeek): silu(g) · u with silu(g) = g / (1 + e^{−g}), as layers/activations.ts,
    // but e^{−g} for all t·d_ff entries in one pass of the SIMD exp (≤ 1 ulp from Math.exp, which
    // cost ≈ 10 % of a prefill called per entry); −g → ±∞ gives g/∞ = −0 or g/1, as Math.exp does.
    for (let i = 0; i < t; i++) {
      const r = i * 2 * dff;
      const o = i * dff;
      for (let j = 0; j < dff; j++) h[o + j] = -both[r + j];
    }
    simdExp(h, h);
    for (let i = 0; i < t; i++) {
      const r = i * 2 * dff;
      const o = i * dff;
      for (let j = 0; j < dff; j++) h[o + j] = (both[r + j] / (1 + h[o + j])) * both[r + dff + j];
    }
  } else {
    const act = activationFunction(f.activation);
    for (let i = 0; i < t; i++) {
      const r = i * 2 * dff;
      const o = i * dff;
      for (let j = 0; j < dff; j++) {
        const g = act(b1 === undefined ? both[r + j] : both[r + j] + b1[j]);
        h[o + j] = g * (c === undefined ? both[r + dff + j] : both[r + dff + j] + c[j]);
      }
    }
  }
  const out = project(hidden, f.weights.w2, outSlot, precision);
  const o = out.data;
  const b2 = f.weights.b2;
  const cols = out.cols;
  if (b2 !== undefined) for (let i = 0; i < o.length; i++) o[i] += b2[i % cols];
  for (let i = 0; i < o.length; i++) {
    if (!Number.isFinite(o[i])) {
      throw new NumericalError(
        "weights",
        "finite FFN weights and outputs (x was finite)",
        `output ${o[i]} at [${Math.floor(i / cols)}, ${i % cols}]`,
      );
    }
  }
  return out;
}

/**
 * The layer norms of a built model: `rmsNorm`'s loop (same bits) without its per-call checks of the
 * params (checked once at construction) and of x (the step checks the normalized rows once per
 * sublayer); LayerNorm (GPT-2) keeps `applyNorm`.
 */
export function normRows(x: Matrix, params: NormParams, slot?: ScratchSlot): Matrix {
  if (params.kind !== "rms") return applyNorm(x, params);
  const { rows, cols } = x;
  const out = slot === undefined ? new Matrix(rows, cols) : new Matrix(rows, cols, scratch(slot, rows * cols));
  rmsNormRowsInto(x.data, out.data, rows, cols, params.gain, params.epsilon);
  return out;
}
