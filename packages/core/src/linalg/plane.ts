/**
 * Recorded plane operations on the rows of a matrix — Givens rotations, swaps of adjacent rows,
 * sign flips — applied later in one pass, in the order recorded. Why: an SVD iteration of the JAMA
 * kind (sketch's lowrank/gkr.ts, Golub–Kahan–Reinsch) computes each rotation from the bidiagonal
 * alone and applies it to the singular vectors without ever reading them back, so the vectors'
 * share — most of the work for small matrices — can run afterwards as one WebAssembly call
 * (kernels/watPlane.ts: the same operations on f64x2 pairs, elementwise, so the same bits) instead of
 * thousands of short JavaScript loops between the scalar steps. Issue 14 measured the incremental
 * latent SVD's 49 × 49 cores (latent-online sweep).
 */
import { ensureKernelMemory, getKernelBackend, getKernels, wasmSimdAvailable } from "../kernels/gemm.js";
import { KERNEL_RESERVED_BYTES } from "../kernels/wat.js";

/** Float64s per recorded operation: kind, j, j2, n, c, s. */
const FIELDS = 6;

/**
 * Plane operations on the rows of one matrix (`target`, rows × width row-major; indices are rows, n
 * counts elements from a row's start). Deferred (the default where the SIMD kernel runs and rows
 * are at least 24 long): recorded, and applied in order by {@link PlaneOps.flush}. Immediate
 * otherwise: each applied as it comes, by the same loops — for short rows the kernel's per-operation
 * decoding and the copies cost more than they save (measured on 17 × 17: 0.8× deferred).
 */
export class PlaneOps {
  /** The recorded operations, FIELDS float64 each (kind 0 rotation, 1 swap, 2 sign flip; j, j2, n, c, s). */
  data: Float64Array;
  /** Number of operations recorded and not yet flushed. */
  count = 0;
  /** Whether operations are recorded (true) or applied at once. */
  readonly deferred: boolean;

  /** @param deferred record (true) or apply at once (false). @default rows of ≥ 24 and the SIMD kernel available */
  constructor(
    readonly target: Float64Array,
    readonly rows: number,
    readonly width: number,
    deferred = width >= PLANE_WASM_MIN_WIDTH && getKernelBackend() !== "scalar" && wasmSimdAvailable(),
  ) {
    this.deferred = deferred;
    this.data = new Float64Array(this.deferred ? FIELDS * 64 : FIELDS);
  }

  private slot(): number {
    if ((this.count + 1) * FIELDS > this.data.length) {
      const grown = new Float64Array(this.data.length * 2);
      grown.set(this.data);
      this.data = grown;
    }
    return FIELDS * this.count++;
  }

  private put(kind: number, j: number, j2: number, n: number, c: number, s: number): void {
    const o = this.slot();
    const d = this.data;
    d[o] = kind;
    d[o + 1] = j;
    d[o + 2] = j2;
    d[o + 3] = n;
    d[o + 4] = c;
    d[o + 5] = s;
  }

  /** Rows j and j2 over their first n elements: t = c·x_j + s·x_j2, x_j2 ← (−s)·x_j + c·x_j2, x_j ← t. */
  rotate(j: number, j2: number, n: number, c: number, s: number): void {
    if (this.deferred) this.put(0, j, j2, n, c, s);
    else rotateRows(this.target, this.width, j, j2, n, c, s);
  }

  /** Rows j and j + 1 exchanged (whole rows). */
  swap(j: number): void {
    if (this.deferred) this.put(1, j, j + 1, 0, 0, 0);
    else swapRows(this.target, this.width, j);
  }

  /** x_j ← −x_j over the first n elements of row j. */
  negate(j: number, n: number): void {
    if (this.deferred) this.put(2, j, j, n, 0, 0);
    else negateRow(this.target, this.width, j, n);
  }

  /** Applies the recorded operations to the target, in order, and forgets them. */
  flush(): void {
    applyPlaneOps(this.target, this.rows, this.width, this);
    this.count = 0;
  }
}

/** Below this many element updates the JavaScript loops run (the copies in and out cost more). */
const PLANE_WASM_MIN_WORK = 2048;
/** Rows shorter than this are rotated at once in JavaScript (see {@link PlaneOps}). */
const PLANE_WASM_MIN_WIDTH = 24;

/**
 * Applies `ops` in order to the rows × w row-major matrix `x` (in place). On core's SIMD kernel
 * `plane_ops_f64` (x copied into kernel memory and back) where SIMD is available and the backend is
 * not "scalar"; otherwise {@link applyPlaneOpsJs}. The same bits either way.
 */
export function applyPlaneOps(x: Float64Array, rows: number, w: number, ops: { data: Float64Array; count: number }): void {
  if (ops.count === 0) return;
  if (ops.count * w < PLANE_WASM_MIN_WORK || getKernelBackend() === "scalar" || !wasmSimdAvailable()) {
    applyPlaneOpsJs(x, w, ops);
    return;
  }
  const k = getKernels();
  const xo = KERNEL_RESERVED_BYTES / 8;
  const oo = xo + rows * w + ((rows * w) & 1);
  ensureKernelMemory(k, (oo + FIELDS * ops.count) * 8);
  const m = k.f64;
  m.set(x.subarray(0, rows * w), xo);
  m.set(ops.data.subarray(0, FIELDS * ops.count), oo);
  k.plane_ops_f64(xo * 8, w, oo * 8, ops.count);
  x.set(m.subarray(xo, xo + rows * w));
}

/** {@link applyPlaneOps} in JavaScript: the loops the SVD ran in place before (the reference). */
export function applyPlaneOpsJs(x: Float64Array, w: number, ops: { data: Float64Array; count: number }): void {
  const d = ops.data;
  for (let q = 0; q < ops.count; q++) {
    const o = FIELDS * q;
    const kind = d[o];
    if (kind === 0) rotateRows(x, w, d[o + 1], d[o + 2], d[o + 3], d[o + 4], d[o + 5]);
    else if (kind === 1) swapRows(x, w, d[o + 1]);
    else negateRow(x, w, d[o + 1], d[o + 3]);
  }
}

/** Rows j and j2 of x (w per row), first n elements: (x_j, x_j2) ← (cs·x_j + sn·x_j2, −sn·x_j + cs·x_j2). */
function rotateRows(x: Float64Array, w: number, j: number, j2: number, n: number, cs: number, sn: number): void {
  const a0 = j * w;
  const b0 = j2 * w;
  for (let i = 0; i < n; i++) {
    const t = cs * x[a0 + i] + sn * x[b0 + i];
    x[b0 + i] = -sn * x[a0 + i] + cs * x[b0 + i];
    x[a0 + i] = t;
  }
}

/** Rows j and j + 1 of x (w per row) exchanged. */
function swapRows(x: Float64Array, w: number, j: number): void {
  const a0 = j * w;
  const b0 = a0 + w;
  for (let i = 0; i < w; i++) {
    const t = x[b0 + i];
    x[b0 + i] = x[a0 + i];
    x[a0 + i] = t;
  }
}

/** x_j ← −x_j over the first n elements of row j (w per row). */
function negateRow(x: Float64Array, w: number, j: number, n: number): void {
  const a0 = j * w;
  for (let i = 0; i < n; i++) x[a0 + i] = -x[a0 + i];
}
