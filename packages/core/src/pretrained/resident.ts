/**
 * The GQA prefill with every activation resident in a kernel arena of the model's own (issue 14:
 * at the shipped sizes — d = 64, heads of 16, 4 layers — a forward of N = 128 tokens was ≈ 40 % GEMM
 * and ≈ 60 % JavaScript between the products: copies of the activations and of the weight panels
 * into the shared kernel memory and of every product back out, float64 ↔ float32 conversions around
 * each float32 product, and the SiLU exp's own copies).
 *
 * Here a model's weights are packed ONCE into the GEMM's panels inside its arena
 * (`kernels/arena.ts`), and a step lays out one frame there: the residual stream, both norms'
 * outputs, the joined Q/K/V block, concat(Y_h), W_O's output, the gate/up block, the SwiGLU hidden
 * rows and the logits. Each product reads its A operand where the previous pass wrote it and writes
 * C where the next pass reads it (`gemm_f64_ra` / `gemm_f32_ra` on the arena's addresses); the
 * norms, RoPE (half pairing), residual adds, SwiGLU and the finiteness checks run as WebAssembly
 * SIMD passes over the same bytes (kernels/watModel.ts: the JavaScript loops cost ≈ 2.5–4 ns per
 * element, ≈ a third of the step); biases (Qwen2) stay JavaScript loops on the arena's views.
 * What still crosses: the new keys and values into the KV cache (which owns them), the key and
 * value panels of a step after earlier tokens (packed from the cache's matrices; a forward and a
 * prefill from an empty cache pack them from the arena, `attendInArena`), the final hidden rows and
 * the logits out.
 *
 * Bits: the same operations in the same order as the non-resident path of model.ts — the same
 * kernels over the same panels (each C[i, j] one sequential sum over p), `rmsNormRowsInto`'s and
 * `rotateColumnsInPlace`'s arithmetic, the kernel module's exp, and float32 rounding exactly where the copies
 * into float32 kernel memory rounded (a float32 view stores the rounded value) — so the logits
 * are unchanged bit for bit (checked against the non-resident path for both precisions in tests).
 *
 * The skeleton (weights placement, the step's tail: final norm + LM head) and the FFN block are
 * residentCommon.ts', shared with residentMla.ts (DeepSeek MLA + MoE).
 *
 * Applies to prefill-sized steps (the products on the WebAssembly kernels: t ≥ 4 rows) of a model
 * whose layers are all GQA with RMSNorm, an in-place RoPE (or none), a joined SiLU-gated FFN
 * without inner biases and weights of one GEMM block each (k ≤ 256, n ≤ 1024 — Llama, Qwen2,
 * Mistral at these sizes), on exact KV caches, without captures or an attention override. Every
 * other case, and a decoded token's few rows, keep model.ts' path.
 */
import { attentionCachedKeys } from "../attention/attend.js";
import { resolveAttention } from "../attention/options.js";
import type { AttentionPrecisionOption } from "../attention/options.js";
import { KVCache } from "../cache/kv-cache.js";
import { type Kernels, kernelBackendFor, packableOperand } from "../kernels/gemm.js";
import { attentionMaximaInFloat32Range, maxAbsOf } from "../kernels/range32.js";
import { F32_NR, F64_NR } from "../kernels/wat.js";
import {
  PREFIX_QUERY_BLOCK,
  fusedSoftmaxAttention,
  packPanels,
  prefixAttentionBlock,
  prefixQueryScale,
  prefixQueryBlock,
  useFusedSoftmax,
} from "../kernels/softmaxWasm.js";
import { Matrix } from "../matrix.js";
import type { NormParams } from "../norm.js";
import type { GqaLayerAttention, PretrainedWeights } from "./build.js";
import { type JoinedGlu, columnSlice } from "./fused.js";
import {
  type Placed,
  type PlacedGlu,
  type LayersOut,
  type StepArgs,
  ResidentModel,
  TILE_ROWS,
  arenaGemm,
  gemmFrom64,
  gemmInto64,
  ffnOutputError,
  gluInArena,
  normChecked,
  RopeTables,
  residentBackendOk,
  roundUp,
} from "./residentCommon.js";

/** A layer's products in one precision. */
interface PlacedLayer {
  /** Byte addresses of the two RMSNorm gains (float64). */
  readonly inputGain: number;
  readonly postGain: number;
  readonly qkv: Placed;
  readonly output: Placed;
  readonly ffn: PlacedGlu;
}

/** The static shape of an eligible layer. */
interface LayerPlan {
  readonly a: GqaLayerAttention;
  readonly inputNorm: NormParams & { kind: "rms" };
  readonly postNorm: NormParams & { kind: "rms" };
  readonly qkv: Matrix;
  readonly ffn: JoinedGlu;
  readonly H: number;
  readonly G: number;
  readonly dQ: number;
  readonly dK: number;
  readonly dV: number;
}

/**
 * The resident prefill of one model (see the module doc); `ResidentPrefill.plan` returns undefined
 * for a model it does not apply to. Weights are placed into the arena at the first step of each
 * precision (weights are immutable after the model's construction).
 */
export class ResidentPrefill extends ResidentModel<PlacedLayer> {
  private readonly layers: LayerPlan[];
  /** A forward without a state attends to each layer's keys and values in the arena (StepArgs.caches null). */
  override readonly cacheFree = true;

  private constructor(weights: PretrainedWeights, layers: LayerPlan[]) {
    super(weights, (arena, place, glu) =>
      layers.map((l) => ({
        inputGain: arena.place(l.inputNorm.gain),
        postGain: arena.place(l.postNorm.gain),
        qkv: place(l.qkv, false) as Placed,
        output: place(l.a.weights.output, false) as Placed,
        ffn: glu(l.ffn),
      })),
    );
    this.layers = layers;
  }

  /** The last step's cos | sin table (residentCommon.ts `RopeTables`). */
  private readonly ropeTables = new RopeTables();

  /** The plan for a model, or undefined when some layer is not of the eligible kind (module doc). */
  static plan(
    weights: PretrainedWeights,
    joined: readonly { readonly qkv?: Matrix; readonly ffn?: JoinedGlu }[],
  ): ResidentPrefill | undefined {
    const layers: LayerPlan[] = [];
    for (const [l, layer] of weights.layers.entries()) {
      const a = layer.attention;
      const j = joined[l];
      if (a.kind !== "gqa" || !j.qkv || !j.ffn) return undefined;
      if (layer.inputNorm.kind !== "rms" || layer.postNorm.kind !== "rms") return undefined;
      const f = j.ffn;
      if (f.activation !== "silu" || f.weights.b1 !== undefined || f.weights.c !== undefined) return undefined;
      const { queries, keys, values } = a.weights;
      const dQ = queries[0].cols;
      const dK = keys[0].cols;
      if (a.rope !== undefined && !(a.rope.dim === dQ && a.rope.dim === dK)) return undefined;
      if (queries.length % keys.length !== 0) return undefined;
      const plan: LayerPlan = {
        a,
        inputNorm: layer.inputNorm as LayerPlan["inputNorm"],
        postNorm: layer.postNorm as LayerPlan["postNorm"],
        qkv: j.qkv,
        ffn: f,
        H: queries.length,
        G: keys.length,
        dQ,
        dK,
        dV: values[0].cols,
      };
      // One GEMM block per product (packOperandF64's k ≤ KC, n ≤ NC), else the per-call blocking path.
      for (const w of [plan.qkv, a.weights.output, f.gateUp, f.weights.w2]) if (!packableOperand(w.rows, w.cols)) return undefined;
      layers.push(plan);
    }
    return layers.length > 0 ? new ResidentPrefill(weights, layers) : undefined;
  }

  /** Whether a step of t tokens runs here (the products on the WebAssembly kernels, exact caches or none). */
  applies(t: number, p0: number, caches: readonly unknown[] | null, precision: AttentionPrecisionOption | undefined): boolean {
    if (!residentBackendOk(precision)) return false;
    for (const [l, p] of this.layers.entries()) {
      if (caches !== null && !(caches[l] instanceof KVCache)) return false;
      // A sliding window past its length: model.ts' path raises the error.
      if (p.a.slidingWindow !== undefined && p0 + t > p.a.slidingWindow) return false;
      const w = p.a.weights;
      if (kernelBackendFor(t, p.qkv.rows, p.qkv.cols) !== "wasm") return false;
      if (kernelBackendFor(t, w.output.rows, w.output.cols) !== "wasm") return false;
      if (kernelBackendFor(t, p.ffn.gateUp.rows, p.ffn.gateUp.cols) !== "wasm") return false;
      if (kernelBackendFor(t, p.ffn.weights.w2.rows, p.ffn.weights.w2.cols) !== "wasm") return false;
    }
    return true;
  }

  protected layersInArena(step: StepArgs<PlacedLayer>): LayersOut {
    const { x, caches, positions, p0, precision, f32, placed } = step;
    const es = f32 ? 4 : 8;
    const { arena, layers, lmHead } = placed;
    const t = x.rows;
    const d = x.cols;
    const t4 = roundUp(t, TILE_ROWS);
    let nQKV = 0;
    let nHeads = 0;
    let dff = 0;
    let dQmax = 0;
    for (const p of this.layers) {
      dQmax = Math.max(dQmax, p.dQ);
      nQKV = Math.max(nQKV, p.qkv.cols);
      nHeads = Math.max(nHeads, p.H * p.dV);
      dff = Math.max(dff, p.ffn.dHidden);
    }
    const nOut = lmHead ? lmHead.n : 0;
    // The frame (byte sizes): float64 regions hold what model.ts keeps in float64 (residual stream,
    // Q/K/V after RoPE, Y_h, the exp); under float32 each product's A and C are float32 regions.
    const nKV = p0 + t;
    let dVmax = 0;
    for (const p of this.layers) dVmax = Math.max(dVmax, p.dV);
    const [X, XN, QKV, QKV32, HEADS, HEADS32, AO, AO32, GU, HID, F32, LOGITS, ROPE, KP, VP, QB, SB, YB, MB, LB, KVT] = arena.frame([
      t4 * d * 8,
      t4 * d * es,
      t4 * nQKV * 8,
      f32 ? t4 * nQKV * 4 : 0,
      t4 * nHeads * 8,
      f32 ? t4 * nHeads * 4 : 0,
      t4 * d * 8,
      f32 ? t4 * d * 4 : 0,
      t4 * 2 * dff * es,
      t4 * dff * es,
      f32 ? t4 * d * 4 : 0,
      t4 * nOut * es,
      t4 * dQmax * 8,
      // Arena attention (attendInArena): K_g and V_g panels, one query block's Q, S, Y, m, l.
      roundUp(nKV, 8) * dQmax * 8,
      roundUp(dVmax, 8) * nKV * 8,
      QUERY_BLOCK * dQmax * 8,
      QUERY_BLOCK * nKV * 8,
      QUERY_BLOCK * dVmax * 8,
      QUERY_BLOCK * 8,
      QUERY_BLOCK * 8,
      // The new keys and values, contiguous per KV head, for the cache's append.
      t * nQKV * 8,
    ]);
    const attn: AttentionRegions = { kp: KP, vp: VP, q: QB, s: SB, y: YB, m: MB, l: LB };
    const k = arena.k;
    const m64 = k.f64;
    const m32 = k.f32;
    const v64 = (addr: number, n: number) => m64.subarray(addr / 8, addr / 8 + n);
    const v32 = (addr: number, n: number) => m32.subarray(addr / 4, addr / 4 + n);
    const gemm = arenaGemm(k, f32);
    const xs = v64(X, t * d);
    xs.set(x.data);
    const ao = v64(AO, t * d);
    const is32 = f32 ? 1 : 0;
    let ropeOf: unknown;
    for (const [l, p] of this.layers.entries()) {
      const w = layers[l];
      const a = p.a;
      const { H, G, dQ, dK, dV } = p;
      // Input norm (model.ts: normRows, then gqaStep checks the normalized rows).
      normChecked(k, X, XN, t, d, w.inputGain, p.inputNorm.epsilon, f32);
      // Joined Q/K/V (float64 in the arena: biases and RoPE run in float64 as before).
      const ld = p.qkv.cols;
      const all = v64(QKV, t * ld);
      gemmInto64(k, f32, XN, w.qkv, QKV, QKV32, t, gemm);
      const kOff = H * dQ;
      const vOff = kOff + G * dK;
      for (let h = 0; h < H; h++) addBlockBias(all, t, ld, h * dQ, a.queryBias?.[h]);
      for (let g = 0; g < G; g++) addBlockBias(all, t, ld, kOff + g * dK, a.keyBias?.[g]);
      for (let g = 0; g < G; g++) addBlockBias(all, t, ld, vOff + g * dV, a.valueBias?.[g]);
      const rope = a.rope;
      if (rope && rope.pairing === "half" && dQ === dK && (dQ / 2) % 2 === 0) {
        // cos | sin of every row from the rope itself: rotating (1, 0) gives (1·c − 0·s, 1·s + 0·c) = (c, s).
        if (ropeOf !== rope) {
          v64(ROPE, t * dQ).set(this.ropeTables.get(rope, dQ, "half", positions));
          ropeOf = rope;
        }
        k.rope_half_f64(QKV, ld, t, H + G, dQ, ROPE);
      } else if (rope) {
        for (let h = 0; h < H; h++) rope.rotateColumnsInPlace(all, t, ld, h * dQ, positions);
        for (let g = 0; g < G; g++) rope.rotateColumnsInPlace(all, t, ld, kOff + g * dK, positions);
      }
      // K and V straight from the block when it is finite (one pass); else append's own checks and
      // errors. Without a state (caches null) the heads attend to these arena rows themselves: the
      // same values a cache would hold after its append (p0 = 0), so the same bits.
      let cache: KeysValues;
      let arenaSource: ArenaKeysValues | undefined;
      if (dK % 2 === 0 && dV % 2 === 0 && k.all_finite(QKV, t * ld, 0)) {
        // K_g and V_g contiguous (KVT) for the cache's append, or — a forward without a state — only
        // if the fallback heads ask for them (attendInArena packs its panels from the block itself).
        const copied = (g: number, v: boolean): Matrix => {
          const kt = KVT + g * t * (dK + dV) * 8;
          if (!v) {
            k.copy_cols_f64(QKV + (kOff + g * dK) * 8, ld, kt, t, dK);
            return new Matrix(t, dK, v64(kt, t * dK));
          }
          const vt = kt + t * dK * 8;
          k.copy_cols_f64(QKV + (vOff + g * dV) * 8, ld, vt, t, dV);
          return new Matrix(t, dV, v64(vt, t * dV));
        };
        // From an empty cache (p0 = 0) the heads' keys and values are exactly the block's rows.
        if (p0 === 0) arenaSource = { ld, keyAddr: (g) => QKV + (kOff + g * dK) * 8, valueAddr: (g) => QKV + (vOff + g * dV) * 8 };
        if (caches === null) cache = arenaKeysValues(t, copied);
        else {
          const keys = Array.from({ length: G }, (_, g) => copied(g, false));
          const values = Array.from({ length: G }, (_, g) => copied(g, true));
          (caches[l] as KVCache).appendFinite(keys, values);
          cache = caches[l] as KVCache;
        }
      } else {
        // A cache of the step's own for a forward without a state: its append raises the errors.
        const kv = caches === null ? new KVCache({ numKvHeads: G, keyDim: dK, valueDim: dV, initialCapacity: t }) : (caches[l] as KVCache);
        cache = kv;
        kv.append(
          Array.from({ length: G }, (_, g) => columnSlice(all, t, ld, kOff + g * dK, dK)),
          Array.from({ length: G }, (_, g) => columnSlice(all, t, ld, vOff + g * dV, dV)),
        );
      }
      const width = H * dV;
      const y = v64(HEADS, t * width);
      if (!attendInArena(k, attn, QKV, ld, t, H, G, dQ, dV, cache, a.scale, p0, precision, HEADS, arenaSource)) {
        attendAllHeadsInto(all, ld, t, H, G, dQ, dV, cache, a.scale, p0, precision, y);
      }
      // W_O, its bias, then h = attn + x (model.ts: addInPlace(attn, x)).
      gemmFrom64(k, f32, HEADS, HEADS32, w.output, f32 ? AO32 : AO, t, gemm);
      if (a.outputBias) {
        if (f32) ao.set(v32(AO32, t * d));
        addBlockBias(ao, t, d, 0, a.outputBias);
        k.add_rows_f64(AO, X, AO, t * d, 0);
      } else k.add_rows_f64(f32 ? AO32 : AO, X, AO, t * d, is32);
      // Post norm, checked; gate/up, SwiGLU, W₂ (fused.ts gluForward's operations, same order per
      // entry), its output checked as gluForward does (after b₂ when there is one), then x = FFN + h
      // (addInPlace(f, h)).
      normChecked(k, AO, XN, t, d, w.postGain, p.postNorm.epsilon, f32);
      const outAddr = f32 ? F32 : X;
      const b2 = p.ffn.weights.b2;
      gluInArena(k, w.ffn, XN, GU, HID, outAddr, t, f32, gemm, b2 === undefined);
      if (b2 === undefined) {
        k.add_rows_f64(outAddr, AO, X, t * d, is32);
        continue;
      }
      const out = f32 ? v32(F32, t * d) : xs;
      for (let i = 0; i < t * d; i++) {
        const f = out[i] + b2[i % d];
        if (!Number.isFinite(f)) throw ffnOutputError(f, i, d);
        xs[i] = f + ao[i];
      }
    }
    // The final norm (RMSNorm in the arena, into W_O's free region) and the LM head: ResidentModel.run.
    return { X, NORM: AO, XN, LOGITS };
  }
}

/** Query rows per block of the arena attention, at most (its regions' size): the fused driver's prefix-mask block (softmaxWasm.ts). */
export const QUERY_BLOCK = PREFIX_QUERY_BLOCK;

/** Byte addresses of the arena attention's regions (see `ResidentPrefill.run`). */
export interface AttentionRegions {
  readonly kp: number;
  readonly vp: number;
  readonly q: number;
  readonly s: number;
  readonly y: number;
  readonly m: number;
  readonly l: number;
}

/**
 * All H heads of a GQA layer inside the arena: `fusedSoftmaxAttention`'s materialized prefix-mask
 * computation (softmaxWasm.ts) step for step — scale·Q rows per `prefixQueryBlock(N_KV)`-row block, then the
 * driver's own block step (`prefixAttentionBlock`: S over keys [0, hi), hi the block's largest
 * limit rounded up to 16, the exp pass with per-row limits, A·V in 256-deep slices), Y·(1/l) — so
 * the same bits, but with K_g and V_g packed once per KV group instead of once per query head,
 * queries read from and Y written into the arena. With `src` (keys and values still in the joined
 * block: a forward, or a prefill from an empty cache) the panels and float32's maxima come from the
 * block by the WebAssembly passes (`pack_key_panels`, `pack_value_panels`, `max_abs_block`), else
 * from the cache's matrices (packPanels, maxAbsOf); the same values either way. float32 per head exactly as the driver decides it (`attentionInFloat32Range` on the
 * same arguments), with its fallback to float64 on a non-finite normalizer or output. Returns false
 * (nothing usable written) where the driver would not run or a row needs attention's error path;
 * the caller then takes `attendAllHeadsInto`.
 */
function attendInArena(
  k: Kernels,
  R: AttentionRegions,
  qkvAddr: number,
  ld: number,
  t: number,
  H: number,
  G: number,
  dQ: number,
  dV: number,
  cache: KeysValues,
  scale: number,
  p0: number,
  precision: AttentionPrecisionOption | undefined,
  outAddr: number,
  src?: ArenaKeysValues,
): boolean {
  const nKV = cache.length;
  if (nKV !== p0 + t || !useFusedSoftmax(t, nKV, dQ)) return false;
  const plan = arenaSoftmaxPlan(scale, p0, precision, t, nKV, dQ);
  if (!plan) return false;
  const { scale: sc, limits } = plan;
  const width = H * dV;
  const group = H / G;
  // Which group's panels, in which precision, the K/V regions hold (heads of a group are adjacent).
  let packedAs = "";
  // float32: attentionInFloat32Range's decision per head, from max|Q_h| (rows_max_f64 over the
  // head's columns) and max|K_g|, max|V_g| scanned once per group (the same maxima, so the same decision).
  let maxG = -1;
  let maxK = 0;
  let maxV = 0;
  for (let h = 0; h < H; h++) {
    const g = Math.floor(h / group);
    let f32 = false;
    if (plan.float32) {
      if (maxG !== g) {
        // The same maxima either way (max |x|, NaN if some x is): from the arena block or the cache.
        maxK = src ? k.max_abs_block(src.keyAddr(g), src.ld, nKV, dQ) : maxAbsOf(cache.keys(g).data, nKV * dQ);
        maxV = src ? k.max_abs_block(src.valueAddr(g), src.ld, nKV, dV) : maxAbsOf(cache.values(g).data, nKV * dV);
        maxG = g;
      }
      f32 = attentionMaximaInFloat32Range(k.max_abs_block(qkvAddr + h * dQ * 8, ld, t, dQ), maxK, maxV, nKV, dQ, sc);
    }
    for (;;) {
      const NR = f32 ? F32_NR : F64_NR;
      const mem = f32 ? k.f32 : k.f64;
      const es = f32 ? 4 : 8;
      if (packedAs !== `${g}:${es}`) {
        // K_g by rows (NR keys × d per panel) and V_g by columns (NR value columns × N_KV), zero-padded.
        if (src) {
          zeroKeyPadding(mem, R.kp / es, nKV, dQ, NR);
          k.pack_key_panels(src.keyAddr(g), src.ld, nKV, dQ, 0, R.kp, dQ, NR, f32 ? 1 : 0, 0);
          k.pack_value_panels(src.valueAddr(g), src.ld, nKV, dV, 0, R.vp, NR, f32 ? 1 : 0, 0);
        } else {
          packPanels(cache.keys(g).data, mem, R.kp / es, nKV, dQ, NR, true);
          packPanels(cache.values(g).data, mem, R.vp / es, nKV, dV, NR, false);
        }
        packedAs = `${g}:${es}`;
      }
      if (attendHead(k, R, f32, qkvAddr + h * dQ * 8, ld, t, nKV, dQ, dV, sc, limits, outAddr + h * dV * 8, width)) break;
      // float32's fallback (rows.ts float32Attention): the head again in float64; float64 failing → error path.
      if (!f32) return false;
      f32 = false;
    }
  }
  return true;
}

/**
 * The causal softmax attention of t queries after p0 cached tokens on nKV keys of width d, resolved
 * as attention's options resolve it (`resolveAttention`: the scale, float32 or not), with the prefix
 * limits `attendHead` masks by; undefined where the arena heads do not apply (no prefix limits, a
 * kernel other than softmax, an odd d: the arena's query scaling runs on pairs).
 */
export function arenaSoftmaxPlan(
  scale: number,
  p0: number,
  precision: AttentionPrecisionOption | undefined,
  t: number,
  nKV: number,
  d: number,
): ArenaSoftmaxPlan | undefined {
  if (d % 2 !== 0) return undefined;
  // Every layer of a step asks the same question (issue 14: resolving the options and compiling
  // the causal mask per layer was ≈ 1 % of a prefill): the last answer is kept. Its `limits` are
  // only read (attendHead), so sharing them is safe.
  const m = lastPlan;
  if (m && m.scale0 === scale && m.p0 === p0 && m.precision === precision && m.t === t && m.nKV === nKV && m.d === d) return m.plan;
  const r = resolveAttention({ kernel: { kind: "softmax", scale }, mask: { kind: "causal", offset: p0 }, precision }, t, nKV, d);
  const limits = r.mask?.prefixLimits?.();
  const plan = r.kernel.kind !== "softmax" || !limits ? undefined : { scale: r.kernel.scale, limits, float32: r.precision === "float32" };
  lastPlan = { scale0: scale, p0, precision, t, nKV, d, plan };
  return plan;
}

/** What `arenaSoftmaxPlan` returns: the resolved scale, each query row's key limit, float32 or not. */
export interface ArenaSoftmaxPlan {
  readonly scale: number;
  readonly limits: Int32Array;
  readonly float32: boolean;
}

let lastPlan:
  | {
      scale0: number;
      p0: number;
      precision: AttentionPrecisionOption | undefined;
      t: number;
      nKV: number;
      d: number;
      plan: ArenaSoftmaxPlan | undefined;
    }
  | undefined;

/**
 * One head in the arena (see `attendInArena`); false when a normalizer is not in (0, ∞) or, in
 * float32, an output is not finite (the driver's caller then redoes the head in float64).
 */
export function attendHead(
  k: Kernels,
  R: AttentionRegions,
  f32: boolean,
  qAddr: number,
  ldQ: number,
  nQ: number,
  nKV: number,
  d: number,
  dV: number,
  scale: number,
  limits: Int32Array,
  outAddr: number,
  ldOut: number,
): boolean {
  const es = f32 ? 4 : 8;
  const mem = f32 ? k.f32 : k.f64;
  const yOff = R.y / es;
  const qb = prefixQueryBlock(nKV);
  for (let i0 = 0; i0 < nQ; i0 += qb) {
    const rows = Math.min(qb, nQ - i0);
    k.scale_rows_f64(qAddr + i0 * ldQ * 8, ldQ, R.q, rows, d, prefixQueryScale(scale, f32), f32 ? 1 : 0);
    mem.fill(0, yOff, yOff + rows * dV);
    prefixAttentionBlock(k, f32, R.q, R.kp, R.vp, R.s, nKV, R.y, R.m, R.l, rows, limits, i0, nKV, d, dV);
    if (!k.rows_normalize_out(R.y, R.l, outAddr + i0 * ldOut * 8, ldOut, rows, dV, f32 ? 1 : 0)) return false;
  }
  return true;
}

/**
 * What the heads read of a layer's keys and values (an exact `KVCache` satisfies it): K_g and V_g
 * of every cached token, `length` rows each.
 */
export interface KeysValues {
  readonly length: number;
  keys(g: number): Matrix;
  values(g: number): Matrix;
}

/**
 * The step's own keys and values as `KeysValues` (a forward without a state: no cache), each K_g and
 * V_g copied out of the joined block by `copy(g, isValues)` at its first request (only the fallback
 * heads ask: attendInArena packs from the block, `ArenaKeysValues`).
 */
function arenaKeysValues(t: number, copy: (g: number, values: boolean) => Matrix): KeysValues {
  const keys: Matrix[] = [];
  const values: Matrix[] = [];
  return { length: t, keys: (g) => (keys[g] ??= copy(g, false)), values: (g) => (values[g] ??= copy(g, true)) };
}

/**
 * Zeros the padding keys of a last partial key panel (packPanels' layout: NR keys × d per panel from
 * element `off` of `mem`), which `pack_key_panels` leaves to its caller.
 */
export function zeroKeyPadding(mem: Float64Array | Float32Array, off: number, nKV: number, d: number, NR: number): void {
  const full = Math.floor(nKV / NR) * NR;
  if (full < nKV) mem.fill(0, off + full * d, off + (full + NR) * d);
}

/**
 * Where a forward's keys and values lie in the arena's joined Q/K/V block (float64): K_g's first
 * column at byte `keyAddr(g)`, V_g's at `valueAddr(g)`, rows `ld` entries apart — so the heads pack
 * their panels with `pack_key_panels` / `pack_value_panels` straight from there (issue 14: the
 * JavaScript packPanels and maxAbsOf of each group were ≈ 3 % of a float32 N = 128 prefill).
 */
export interface ArenaKeysValues {
  readonly ld: number;
  keyAddr(g: number): number;
  valueAddr(g: number): number;
}

/** b added to columns c0 … c0 + b.length − 1 of every row of a row-major block with `ld` columns. */
function addBlockBias(data: Float64Array, rows: number, ld: number, c0: number, b: Float64Array | undefined): void {
  if (!b) return;
  for (let i = 0; i < rows; i++) for (let j = 0; j < b.length; j++) data[i * ld + c0 + j] += b[j];
}

/**
 * All H heads of a GQA layer on the fused softmax driver, reading each head's queries in place from
 * the joined [Q_0 … | K … | V …] block (row stride `ld`) and writing Y_h into columns h·d_V … of
 * `out` (t × H·d_V) — the computation of `attentionCachedKeys` per head (same resolved options, the
 * same fused call, the same float32 → float64 fallback), so the same bits, without the per-head
 * query copies, output matrices, concatenation and option resolution. Returns false when the fused
 * path does not apply or a row needs attention's error path (a non-finite logit); `out` is then
 * unspecified and the caller runs the per-head calls, which raise the same errors as before.
 */
export function attendAllHeads(
  all: Float64Array,
  ld: number,
  t: number,
  H: number,
  G: number,
  dQ: number,
  dV: number,
  cache: KeysValues,
  scale: number,
  p0: number,
  precision: AttentionPrecisionOption | undefined,
  out: Float64Array,
): boolean {
  const nKV = cache.length;
  if (!useFusedSoftmax(t, nKV, dQ)) return false;
  const r = resolveAttention({ kernel: { kind: "softmax", scale }, mask: { kind: "causal", offset: p0 }, precision }, t, nKV, dQ);
  if (r.kernel.kind !== "softmax") return false;
  const width = H * dV;
  const group = H / G;
  for (let h = 0; h < H; h++) {
    const g = Math.floor(h / group);
    const spec = {
      queries: all.subarray(h * dQ),
      queryStride: ld,
      keys: cache.keys(g).data,
      values: cache.values(g).data,
      nQ: t,
      nKV,
      d: dQ,
      dV,
      scale: r.kernel.scale,
      mask: r.mask,
      out: out.subarray(h * dV),
      outStride: width,
    };
    let stats = r.precision === "float32" ? fusedSoftmaxAttention({ ...spec, precision: "float32" }) : null;
    // float32's fallback (rows.ts float32Attention): a non-finite Y or normalizer → float64.
    if (stats !== null && !(rowsFinite(stats.normalizer) && columnsFinite(out, t, width, h * dV, dV))) stats = null;
    if (stats === null) stats = fusedSoftmaxAttention(spec);
    if (stats === null || !rowsFinite(stats.normalizer)) return false;
  }
  return true;
}

/** {@link attendAllHeads}, else each head through `attentionCachedKeys` (which raises attention's errors). */
function attendAllHeadsInto(
  all: Float64Array,
  ld: number,
  t: number,
  H: number,
  G: number,
  dQ: number,
  dV: number,
  cache: KeysValues,
  scale: number,
  p0: number,
  precision: AttentionPrecisionOption | undefined,
  out: Float64Array,
): void {
  if (attendAllHeads(all, ld, t, H, G, dQ, dV, cache, scale, p0, precision, out)) return;
  const group = H / G;
  const width = H * dV;
  const options = { kernel: { kind: "softmax" as const, scale }, mask: { kind: "causal" as const, offset: p0 }, precision };
  for (let h = 0; h < H; h++) {
    const g = Math.floor(h / group);
    const y = attentionCachedKeys(columnSlice(all, t, ld, h * dQ, dQ), cache.keys(g), cache.values(g), options).data;
    for (let i = 0; i < t; i++) out.set(y.subarray(i * dV, (i + 1) * dV), i * width + h * dV);
  }
}

/** Every normalizer in (0, ∞) (no empty row, no overflowed logit). */
export function rowsFinite(l: Float64Array): boolean {
  for (let i = 0; i < l.length; i++) if (!(l[i] > 0 && l[i] < Number.POSITIVE_INFINITY)) return false;
  return true;
}

export function columnsFinite(x: Float64Array, rows: number, ld: number, c0: number, w: number): boolean {
  for (let i = 0; i < rows; i++) for (let j = 0; j < w; j++) if (!Number.isFinite(x[i * ld + c0 + j])) return false;
  return true;
}
