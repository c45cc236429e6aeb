/**
 * A decoded token's projections on the weights already resident in the model's kernel arena
 * (issue 14). A decoding step multiplies one row by every weight of the model; `project` (fused.ts)
 * ran those one-row products in JavaScript (linalg/matmul.ts' few-rows kernels), 25–48 % of a
 * step. The resident prefill (residentCommon.ts `ResidentWeights`) has placed the same weights in
 * its arena as packed panels; it registers each here, and `residentRowProduct` runs the one-row
 * product there with the `gemv_*` kernels (kernels/watGemv.ts), whose sums are those of the
 * JavaScript kernels in the same order — the same bits, so a decoded token's logits are unchanged.
 *
 * Only where `project` would take the scalar few-rows kernels (the "auto" backend, one row);
 * anything else (a weight never placed, a forced backend, a shape that does not match) answers
 * undefined and the caller keeps its JavaScript path. A weight matrix shared by two models' weights
 * points to the arena that placed it last (the same panels either way).
 */
import type { KernelArena } from "../kernels/arena.js";
import { getKernelBackend } from "../kernels/gemm.js";
import { F32_NR, F64_NR } from "../kernels/wat.js";
import type { Matrix } from "../matrix.js";

/** One weight in an arena: its panels' byte address, the product's depth k and width n. */
export interface ResidentOperand {
  readonly addr: number;
  readonly k: number;
  readonly n: number;
}

/** Where a one-row product runs: the arena, the operand, and the arena's x and c scratch (byte addresses). */
interface Entry {
  readonly arena: KernelArena;
  readonly op: ResidentOperand;
  readonly x: number;
  readonly c: number;
}

type Precision = "float64" | "float32";

/** Per precision and orientation (W, or Wᵀ stored as W): the placed weights. */
const registry = {
  float64: { plain: new WeakMap<Matrix, Entry>(), transposed: new WeakMap<Matrix, Entry>() },
  float32: { plain: new WeakMap<Matrix, Entry>(), transposed: new WeakMap<Matrix, Entry>() },
};

let enabled = true;
let runs = 0;

/**
 * Turns the resident one-row products on or off (tests compare the two paths bit for bit);
 * returns the previous setting. Internal.
 */
export function setResidentRowProducts(on: boolean): boolean {
  const was = enabled;
  enabled = on;
  return was;
}

/** One-row products run on resident panels so far in this thread (tests check the path ran). Internal. */
export function residentRowProductRuns(): number {
  return runs;
}

// The gemv kernels (watGemv.ts) read 32-byte panel rows: 4 float64 or 8 float32 columns.
if (F64_NR * 8 !== 32 || F32_NR * 4 !== 32) throw new Error("kernels/watGemv.ts assumes 32-byte panel rows (F64_NR = 4, F32_NR = 8)");

/** Panel width of the packed operands: 4 float64 or 8 float32 columns. */
const panelWidth = (precision: Precision) => (precision === "float32" ? F32_NR : F64_NR);

/**
 * The arena scratch a set of one-row products needs: x (the largest k float64s) and c (the largest
 * n rounded up to whole panels, float64).
 */
export function gemvScratchFloats(ops: readonly ResidentOperand[], precision: Precision): { x: number; c: number } {
  const nr = panelWidth(precision);
  let x = 1;
  let c = nr;
  for (const op of ops) {
    x = Math.max(x, op.k);
    c = Math.max(c, Math.ceil(op.n / nr) * nr);
  }
  return { x, c };
}

/**
 * Registers `w` (placed as the packed operand of C = A·W, or of C = A·Wᵀ when `transposed`) for
 * one-row products in `arena`, with `x` and `c` the byte addresses of a permanent scratch of
 * `gemvScratchFloats`' sizes.
 */
export function registerResidentOperand(
  w: Matrix,
  transposed: boolean,
  precision: Precision,
  arena: KernelArena,
  op: ResidentOperand,
  x: number,
  c: number,
): void {
  registry[precision][transposed ? "transposed" : "plain"].set(w, { arena, op, x, c });
}

/**
 * x W (or x Wᵀ when `transposed`) for ONE row x (k float64s) on the weight's resident panels, into
 * `out` (n float64s; a new array when omitted), with the bits of `matmulInto` (or
 * `matmulTransBInto`) on one row — under float32 of those on x and W rounded to float32, the
 * result rounded to float32 (fused.ts' few-rows float32 form). Undefined (nothing written) where
 * it does not apply.
 */
export function residentRowProduct(
  x: Float64Array,
  w: Matrix,
  transposed: boolean,
  precision: Precision,
  out?: Float64Array,
): Float64Array | undefined {
  if (!enabled || getKernelBackend() !== "auto") return undefined;
  const e = registry[precision][transposed ? "transposed" : "plain"].get(w);
  if (e === undefined) return undefined;
  const { k, n, addr } = e.op;
  if (x.length !== k || (out !== undefined && out.length !== n)) return undefined;
  const y = out ?? new Float64Array(n);
  const K = e.arena.k;
  const m = K.f64; // read per call: a prefill's frame may have grown the memory since
  const xo = e.x / 8;
  const f32 = precision === "float32";
  if (f32) for (let p = 0; p < k; p++) m[xo + p] = Math.fround(x[p]);
  else m.set(x, xo);
  const panels = Math.ceil(n / panelWidth(precision));
  if (f32) (transposed ? K.gemv_f32_seq : K.gemv_f32_g4)(e.x, addr, e.c, k, panels);
  else (transposed ? K.gemv_f64_seq : K.gemv_f64_g4)(e.x, addr, e.c, k, panels);
  runs++;
  const co = e.c / 8;
  if (f32) for (let j = 0; j < n; j++) y[j] = Math.fround(m[co + j]);
  else y.set(m.subarray(co, co + n));
  return y;
}
