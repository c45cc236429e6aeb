/**
 * What the two resident prefills (pretrained/resident.ts: GQA/Llama; pretrained/residentMla.ts:
 * DeepSeek MLA + MoE) share, written once (issue 14 review): the placement of a model's weights
 * into its kernel arena (once per precision), the products on arena addresses, the SwiGLU FFN
 * block, the final norm + LM head tail, and the normalized-rows check. The layers' attention parts
 * and the frames differ (joined Q/K/V vs latent products; different regions) and stay in each file.
 *
 * Bits: each piece is the code both files ran before, moved here unchanged (the same kernels on
 * the same addresses in the same order), so the logits are unchanged bit for bit.
 */
import type { AttentionPrecisionOption } from "../attention/options.js";
import { NumericalError } from "../errors.js";
import { KernelArena } from "../kernels/arena.js";
import { type Kernels, getKernelBackend, packOperandF32, packOperandF64, wasmSimdAvailable } from "../kernels/gemm.js";
import { Matrix } from "../matrix.js";
import { type NormParams, applyNorm, assertNormParams } from "../norm.js";
import { assertFinite } from "../validate.js";
import type { PretrainedWeights } from "./build.js";
import type { JoinedGlu, ProjectionPrecision } from "./fused.js";
import { gemvScratchFloats, registerResidentOperand } from "./residentGemv.js";

export const roundUp = (x: number, m: number) => Math.ceil(x / m) * m;
/** Row granularity of the frame: the kernels' register tile (the edge tile reads and writes whole tiles). */
export const TILE_ROWS = 4;

/** One weight's byte address in the arena and its product shape (C = A · W, A rows×k, W k×n). */
export interface Placed {
  readonly addr: number;
  readonly k: number;
  readonly n: number;
}

/** A SwiGLU FFN's two products in the arena. */
export interface PlacedGlu {
  readonly gateUp: Placed;
  readonly down: Placed;
  readonly glu: JoinedGlu;
}

/** A model's weights of one precision in its arena: per-layer placements `L`, the LM head, the final gain. */
export interface PlacedModel<L> {
  readonly layers: L[];
  /** The LM head (C = hidden · W_headᵀ), undefined when it does not fit one GEMM block. */
  readonly lmHead?: Placed;
  /** Byte address of the final RMSNorm's gain, undefined when the final norm is not a valid RMSNorm. */
  readonly finalGain?: number;
}

/** Places a weight W (k×n) as the packed operand of C = A·W, or of C = A·Wᵀ (W stored n×k) when `transposed`. */
export type Place = (w: Matrix, transposed: boolean) => Placed | undefined;

/**
 * A model's weights in its own kernel arena, placed at the first step of each precision (weights
 * are immutable after the model's construction); `placeLayers` lays out the per-layer weights.
 */
export class ResidentWeights<L> {
  private arena: KernelArena | undefined;
  private readonly placed = new Map<ProjectionPrecision, PlacedModel<L>>();
  private readonly weights: PretrainedWeights;
  private readonly placeLayers: (arena: KernelArena, place: Place, glu: (g: JoinedGlu) => PlacedGlu) => L[];

  constructor(weights: PretrainedWeights, placeLayers: (arena: KernelArena, place: Place, glu: (g: JoinedGlu) => PlacedGlu) => L[]) {
    this.weights = weights;
    this.placeLayers = placeLayers;
  }

  /** Whether the weights of `precision` are in the arena already. */
  has(precision: ProjectionPrecision): boolean {
    return this.placed.has(precision);
  }

  /** The weights of one precision in the arena (placed at its first use). */
  get(precision: ProjectionPrecision): PlacedModel<L> & { arena: KernelArena } {
    if (!this.arena) this.arena = new KernelArena();
    const arena = this.arena;
    let p = this.placed.get(precision);
    if (!p) {
      const placedNow: { w: Matrix; transposed: boolean; op: Placed }[] = [];
      const place: Place = (w, transposed) => {
        const [k, n] = transposed ? [w.cols, w.rows] : [w.rows, w.cols];
        const panels = (precision === "float32" ? packOperandF32(w.data, transposed, k, n) : packOperandF64(w.data, transposed, k, n))
          ?.panels;
        if (!panels) return undefined;
        const op = { addr: arena.place(panels), k, n };
        placedNow.push({ w, transposed, op });
        return op;
      };
      const glu = (g: JoinedGlu): PlacedGlu => ({
        gateUp: place(g.gateUp, false) as Placed,
        down: place(g.weights.w2, false) as Placed,
        glu: g,
      });
      const layers = this.placeLayers(arena, place, glu);
      const fin = this.weights.finalNorm;
      const d = this.weights.embed.cols;
      p = { layers, lmHead: place(this.weights.lmHead, true), finalGain: finalNormOk(fin, d) ? arena.place(fin.gain) : undefined };
      // A decoded token's one-row products run on these same panels (residentGemv.ts): a permanent
      // x and c scratch for them, then every placed weight registered.
      const sizes = gemvScratchFloats(
        placedNow.map((e) => e.op),
        precision,
      );
      const xAddr = arena.place(new Float64Array(sizes.x));
      const cAddr = arena.place(new Float64Array(sizes.c));
      for (const e of placedNow) registerResidentOperand(e.w, e.transposed, precision, arena, e.op, xAddr, cAddr);
      this.placed.set(precision, p);
    }
    return { arena, ...p };
  }
}

/** The frame regions a step's layers leave for the shared tail (byte addresses; see `ResidentModel.run`). */
export interface LayersOut {
  /** The residual stream after the last layer (t×d float64). */
  readonly X: number;
  /** A free t×d float64 region: the final norm's output. */
  readonly NORM: number;
  /** The products' t×d A region (float32 under float32): the LM head's input. */
  readonly XN: number;
  /** t × vocabulary in the products' precision: the logits. */
  readonly LOGITS: number;
}

/** One step's arguments as `ResidentModel.run` hands them to the layers. */
export interface StepArgs<L> {
  /** The embeddings (t×d). */
  readonly x: Matrix;
  /**
   * The state's per-layer caches, appended to; `null` (`NO_CACHE`): a forward from empty that keeps
   * no state (`PretrainedModel.forward`: its result holds no caches), so each layer's new keys and
   * values (or latent and rotary keys) stay in the arena for this one step only — the layers attend
   * to them there, p0 is 0, and nothing is copied into a cache (the bits are those of the cached step).
   */
  readonly caches: readonly unknown[] | null;
  /** The t tokens' positions. */
  readonly positions: Float64Array;
  /** Tokens already cached (0 when `caches` is null). */
  readonly p0: number;
  /** The attention precision option as given (the heads resolve it). */
  readonly precision: AttentionPrecisionOption | undefined;
  /** The products' precision. */
  readonly prec: ProjectionPrecision;
  readonly f32: boolean;
  /** The weights of `prec` in the model's arena. */
  readonly placed: PlacedModel<L> & { arena: KernelArena };
}

/**
 * A model's resident prefill (the shared skeleton of resident.ts and residentMla.ts): the weights
 * in the model's arena per precision, a step's layers (the subclass: `layersInArena`), then the
 * final norm and the LM head (`finalNormAndHead`).
 */
export abstract class ResidentModel<L> {
  protected readonly weights: PretrainedWeights;
  /** The weights in the model's arena, per precision. */
  protected readonly placed: ResidentWeights<L>;
  /** Steps run here so far (tests check that the resident path really ran). */
  steps = 0;
  /**
   * Whether `layersInArena` honours `caches: null` (StepArgs: a forward that keeps no state); a
   * model whose subclass does not keeps building empty caches for its forwards.
   */
  readonly cacheFree: boolean = false;

  protected constructor(
    weights: PretrainedWeights,
    placeLayers: (arena: KernelArena, place: Place, glu: (g: JoinedGlu) => PlacedGlu) => L[],
  ) {
    this.weights = weights;
    this.placed = new ResidentWeights(weights, placeLayers);
  }

  /**
   * Whether a step of t tokens after p0 cached ones runs here; `caches` null: a forward without a
   * state (p0 = 0, asked only when `cacheFree`).
   */
  abstract applies(t: number, p0: number, caches: readonly unknown[] | null, precision: AttentionPrecisionOption | undefined): boolean;

  /**
   * Places the weights of `prec` in the arena now, if not yet (a decoding step's one-row products
   * run on them: residentGemv.ts), where the resident backend is available.
   */
  placeForRowProducts(precision: AttentionPrecisionOption | undefined): void {
    const prec = precision === "float32" ? "float32" : "float64";
    if (!this.placed.has(prec) && residentBackendOk(precision)) this.placed.get(prec);
  }

  /** Every layer of a step of t = x.rows tokens in the arena (appending to the caches unless they are null). */
  protected abstract layersInArena(s: StepArgs<L>): LayersOut;

  /**
   * One step of t tokens from the embeddings `x` (t×d): every layer, the final norm and the LM head
   * (`projectLmHead` when the head does not fit one GEMM block). Appends to the caches (none when
   * `caches` is null: a forward without a state, see StepArgs).
   * @throws as model.ts' path: NonFiniteError naming `x` (or the latent), NumericalError for a
   *   non-finite FFN output, the caches' and attention's errors.
   */
  run(
    x: Matrix,
    caches: readonly unknown[] | null,
    positions: Float64Array,
    p0: number,
    precision: AttentionPrecisionOption | undefined,
    projectLmHead: (hidden: Matrix) => Matrix,
  ): { logits: Matrix; hidden: Matrix } {
    const prec: ProjectionPrecision = precision === "float32" ? "float32" : "float64";
    const f32 = prec === "float32";
    this.steps++;
    const placed = this.placed.get(prec);
    const r = this.layersInArena({ x, caches, positions, p0, precision, prec, f32, placed });
    // The arena's views as the frame left them (nothing grows the memory after it).
    const k = placed.arena.k;
    return finalNormAndHead(
      k,
      this.weights.finalNorm,
      placed,
      r.X,
      r.NORM,
      r.XN,
      r.LOGITS,
      x.rows,
      x.cols,
      f32,
      arenaGemm(k, f32),
      projectLmHead,
    );
  }
}

/** The precisions and backends a resident step needs (float64/float32 on the WebAssembly kernels). */
export function residentBackendOk(precision: AttentionPrecisionOption | undefined): boolean {
  if (precision !== undefined && precision !== "float64" && precision !== "float32") return false;
  return wasmSimdAvailable() && getKernelBackend() !== "scalar";
}

/** C = A · W on arena addresses (A rows×k at `a`, C rows×n at `c`), float32 or float64 as the step runs. */
export type ArenaGemm = (a: number, w: Placed, c: number, rows: number) => void;

export function arenaGemm(k: Kernels, f32: boolean): ArenaGemm {
  return (a, w, c, rows) =>
    f32 ? k.gemm_f32_ra(a, w.k, w.addr, w.k, c, w.n, rows, w.n, w.k, 0) : k.gemm_f64_ra(a, w.k, w.addr, w.k, c, w.n, rows, w.n, w.k, 0);
}

/**
 * C = A · W into float64 at `c64`: under float32 the product into `c32` (float32), then widened
 * into `c64` (exact); under float64 straight into `c64`.
 */
export function gemmInto64(k: Kernels, f32: boolean, a: number, w: Placed, c64: number, c32: number, rows: number, gemm: ArenaGemm): void {
  if (!f32) {
    gemm(a, w, c64, rows);
    return;
  }
  gemm(a, w, c32, rows);
  k.widen_f32(c32, c64, rows * w.n);
}

/**
 * C = A · W from the float64 A at `a64`: under float32 A rounded into `a32` first (as the copies
 * into float32 kernel memory rounded), the product then from there; C in the step's precision.
 */
export function gemmFrom64(k: Kernels, f32: boolean, a64: number, a32: number, w: Placed, c: number, rows: number, gemm: ArenaGemm): void {
  if (!f32) {
    gemm(a64, w, c, rows);
    return;
  }
  k.narrow_f64(a64, a32, rows * w.k);
  gemm(a32, w, c, rows);
}

/**
 * A SwiGLU FFN on `rows` rows at byte `xAddr` into `outAddr` (fused.ts gluForward's operations:
 * gate/up product into GU, silu(g)·u with the module's exp into HID, down product); when `check`,
 * the output is checked finite as gluForward does (its NumericalError). The caller checks instead
 * when it adds an output bias first.
 */
export function gluInArena(
  k: Kernels,
  g: PlacedGlu,
  xAddr: number,
  GU: number,
  HID: number,
  outAddr: number,
  rows: number,
  f32: boolean,
  gemm: ArenaGemm,
  check = true,
): void {
  const is32 = f32 ? 1 : 0;
  gemm(xAddr, g.gateUp, GU, rows);
  k.swiglu_f64(GU, HID, rows, g.glu.dHidden, is32);
  gemm(HID, g.down, outAddr, rows);
  if (!check) return;
  const d = g.down.n;
  if (k.all_finite(outAddr, rows * d, is32)) return;
  const o = f32 ? k.f32.subarray(outAddr / 4, outAddr / 4 + rows * d) : k.f64.subarray(outAddr / 8, outAddr / 8 + rows * d);
  for (let i = 0; i < o.length; i++) if (!Number.isFinite(o[i])) throw ffnOutputError(o[i], i, d);
}

/** gluForward's error for a non-finite FFN output at flat index i of a d-wide block. */
export function ffnOutputError(f: number, i: number, d: number): NumericalError {
  return new NumericalError("weights", "finite FFN weights and outputs (x was finite)", `output ${f} at [${Math.floor(i / d)}, ${i % d}]`);
}

/**
 * The final norm and the LM head of a resident step: the residual stream X (t×d float64) → RMSNorm
 * in the arena into the free float64 region `NORM` (float64, as returned) — a non-finite stream or
 * another norm takes applyNorm (its checks, its errors) — then the head from `XN` (the product
 * precision's A region) into `LOGITS`, or `projectLmHead` when the head is not placed.
 */
export function finalNormAndHead(
  k: Kernels,
  fin: NormParams,
  placed: PlacedModel<unknown>,
  X: number,
  NORM: number,
  XN: number,
  LOGITS: number,
  t: number,
  d: number,
  f32: boolean,
  gemm: ArenaGemm,
  projectLmHead: (hidden: Matrix) => Matrix,
): { logits: Matrix; hidden: Matrix } {
  const { finalGain, lmHead } = placed;
  const m64 = k.f64;
  const n = t * d;
  let hidden: Matrix;
  if (fin.kind === "rms" && finalGain !== undefined && k.all_finite(X, n, 0)) {
    // float64: the norm straight into the head's A region (XN), the returned rows copied from there;
    // float32: into NORM (float64, returned), then rounded into XN below (as the copy in rounded).
    const dst = f32 ? NORM : XN;
    k.rms_rows_f64(X, dst, t, d, finalGain, fin.epsilon, 0);
    hidden = new Matrix(t, d, m64.slice(dst / 8, dst / 8 + n));
    if (!lmHead) return { logits: projectLmHead(hidden), hidden };
    if (f32) k.narrow_f64(NORM, XN, n);
  } else {
    hidden = applyNorm(new Matrix(t, d, m64.slice(X / 8, X / 8 + n)), fin);
    if (!lmHead) return { logits: projectLmHead(hidden), hidden };
    if (f32) k.f32.subarray(XN / 4, XN / 4 + n).set(hidden.data);
    else m64.subarray(XN / 8, XN / 8 + n).set(hidden.data);
  }
  gemm(XN, lmHead, LOGITS, t);
  const nOut = lmHead.n;
  // The logits out into a fresh array the caller owns (the arena's bytes are the next step's): one
  // copy (float64) or one widening (float32). (Running the head in 32 KiB row blocks, each copied
  // out while in cache, measured no faster: stop 25.)
  const logits = new Matrix(
    t,
    nOut,
    f32 ? new Float64Array(k.f32.subarray(LOGITS / 4, LOGITS / 4 + t * nOut)) : m64.slice(LOGITS / 8, LOGITS / 8 + t * nOut),
  );
  guardHeapTop();
  return { logits, hidden };
}

/** How many recent steps' guards `guardHeapTop` keeps (64 × 256 bytes). */
const HEAP_GUARDS = 64;
const heapGuards: ArrayBuffer[] = [];
let heapGuardNext = 0;

/**
 * A small ArrayBuffer allocated right after a step's result buffers, the last `HEAP_GUARDS` kept
 * alive (issue 14; an allocator effect, measured on Node 20 / glibc): V8 frees dead typed-array
 * memory in batches (≈ 25 forwards' logits at once, a scavenge under external-memory pressure),
 * glibc's free() then finds more than M_TRIM_THRESHOLD free at the top of the heap and returns it
 * to the OS, so the next forwards' 1 MiB logits come back as fresh pages — 190–270 page faults
 * per cache-free Llama N = 128 forward (perf stat), 0.8–1.4 ms of system time. With a live guard
 * above each result buffer, a freed buffer is never the heap's top: malloc keeps it and hands it to
 * a later forward (60–80 faults per forward, system time ≈ ⅓; performance.md, fifth pass). Retains
 * ≤ 16 KiB; harmless where the allocator differs (browsers). Nothing reads the guards.
 */
function guardHeapTop(): void {
  heapGuards[heapGuardNext] = new ArrayBuffer(256);
  heapGuardNext = (heapGuardNext + 1) % HEAP_GUARDS;
}

/** A valid RMSNorm of width d (applyNorm's checks; the arena norm then needs none per call). */
export function finalNormOk(n: NormParams, d: number): n is NormParams & { kind: "rms" } {
  if (n.kind !== "rms") return false;
  try {
    assertNormParams(n, "finalNorm", d);
    return true;
  } catch {
    return false;
  }
}

/** model.ts' `assertFinite(xn, "x")` on a normalized block (float64 or float32 view): the same error. */
export function checkFinite(v: Float64Array | Float32Array, rows: number, cols: number): void {
  for (let i = 0; i < v.length; i++) {
    if (!Number.isFinite(v[i])) assertFinite(new Matrix(rows, cols, Float64Array.from(v)), "x");
  }
}

/**
 * An RMSNorm of the stream at `src` into `dst` (float32 rounded when `f32`), the normalized rows
 * then checked finite as the layer steps do (`assertFinite(xn, "x")`).
 */
export function normChecked(k: Kernels, src: number, dst: number, t: number, d: number, gain: number, epsilon: number, f32: boolean): void {
  const is32 = f32 ? 1 : 0;
  // The norm's pass also tells whether every value it wrote is finite (all_finite on dst, fused).
  if (!k.rms_rows_f64(src, dst, t, d, gain, epsilon, is32)) {
    checkFinite(f32 ? k.f32.subarray(dst / 4, dst / 4 + t * d) : k.f64.subarray(dst / 8, dst / 8 + t * d), t, d);
  }
}

/** What a kept RoPE table needs of a rope (position/rope.ts). */
export interface RotatesColumns {
  rotateColumnsInPlace(data: Float64Array, rows: number, ld: number, c0: number, positions: ArrayLike<number>): void;
}

/**
 * The (cos, sin) table of a step's positions, from the rope itself: rotating (1, 0) gives
 * (1·c − 0·s, 1·s + 0·c) = (c, s) exactly. `"half"`: per row cos | sin in halves of the width (the
 * GQA pairing); `"interleaved"`: (cos, sin) per pair (MLA's rotary columns). The last table is kept
 * (issue 14: a forward's positions are 0 … t − 1 each time, and the t·width/2 angles cost ≈ 0.5 % of
 * an N = 128 prefill); its first rows serve any step whose positions are a prefix of its own, since
 * each row depends only on its position.
 */
export class RopeTables {
  private kept:
    | { rope: RotatesColumns; width: number; layout: "half" | "interleaved"; positions: Float64Array; tab: Float64Array }
    | undefined;

  /** The t × width table of `positions` (a view of the kept one: read it, do not write it). */
  get(rope: RotatesColumns, width: number, layout: "half" | "interleaved", positions: Float64Array): Float64Array {
    const t = positions.length;
    const c = this.kept;
    if (c && c.rope === rope && c.width === width && c.layout === layout && c.positions.length >= t) {
      let same = true;
      for (let i = 0; i < t && same; i++) same = c.positions[i] === positions[i];
      if (same) return c.tab.subarray(0, t * width);
    }
    const tab = new Float64Array(t * width);
    if (layout === "half") for (let i = 0; i < t; i++) tab.fill(1, i * width, i * width + width / 2);
    else for (let i = 0; i < t * width; i += 2) tab[i] = 1;
    rope.rotateColumnsInPlace(tab, t, width, 0, positions);
    this.kept = { rope, width, layout, positions: positions.slice(), tab };
    return tab;
  }
}
