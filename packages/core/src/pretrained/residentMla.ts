/**
 * The DeepSeek (MLA + MoE) prefill with every activation resident in a kernel arena of the model's
 * own — pretrained/resident.ts' design on the same skeleton (residentCommon.ts `ResidentModel`;
 * weights packed once into the arena, activations chained product to product in place,
 * RMSNorm/SwiGLU/residual/finiteness as the WASM passes of kernels/watModel.ts) for MLA layers
 * with decoupled RoPE and dense or MoE SwiGLU FFNs (issue 14: the per-sublayer path of model.ts
 * spent more time copying activations into and out of the shared kernel memory, converting
 * float64 ↔ float32 around each float32 product and assembling each head's K_h = [L W_LK^h | k_R],
 * V_h = L W_LV^h than in the products).
 *
 * Per MLA layer: norm → the joined query-up product (every head's [q_nope | q_rope]) → RoPE on the
 * rope columns of every head (`rope_pairs_f64`, on the float64 block: interleaved pairing, from a
 * (cos, sin) table kept across steps) → the latent and rotary-key products → the latent norm → the
 * exact latent cache (which owns L and k_R; `appendFinite` after one WASM finiteness pass per
 * block) — or, for a forward that keeps no state (StepArgs.caches null), nothing: L and k_R stay in
 * the arena → [L W_LK^h]_h | [L W_LV^h]_h over all rows → per head, K_h's and V_h's panels packed
 * straight from that block and k_R (`pack_key_panels` / `pack_value_panels`; float32's range
 * decision from maxima found while packing and `max_abs_block` of Q_h), the fused driver's
 * prefix-mask steps (`attendHead`, resident.ts) → W_O → residual → norm → FFN. A MoE layer routes
 * every token once (router logits x W_gᵀ in the arena, moe.ts `routeLogits`, float64 as before),
 * gathers each expert's rows in the arena (`gather_rows`), runs its gate/up product, SwiGLU and down
 * product there and scatter-adds the weighted rows (`scatter_add_rows`); then the shared expert.
 * (issue 14, pass "mla128": these were JavaScript loops, ≈ 10 % of an N = 128 float32 prefill.)
 *
 * Bits: the same operations in the same order as model.ts' path (mlaStep, moeForward, gluForward):
 * the same kernels over the same panels, float32 rounding exactly where the copies into float32
 * kernel memory rounded, so the logits are unchanged bit for bit (tested against the per-sublayer
 * path, float64 and float32). The joined down product [W_L | W_KR] runs as its two halves (each
 * entry the same sum). An expert with too few rows for the WebAssembly kernels keeps gluForward.
 *
 * Applies to prefill-sized steps of a model whose layers are all such MLA layers (q_lora_rank null,
 * RMSNorms, weights of one GEMM block each), on exact latent caches or none (a forward), without
 * captures, an attention override or `mlaForm: "absorbed"`. Everything else keeps model.ts' path.
 */
import { attentionCachedKeys } from "../attention/attend.js";
import type { AttentionPrecisionOption } from "../attention/options.js";
import { LatentCache } from "../cache/latent-cache.js";
import type { KernelArena } from "../kernels/arena.js";
import { type Kernels, kernelBackendFor, packOperandF64, packableOperand } from "../kernels/gemm.js";
import { attentionMaximaInFloat32Range } from "../kernels/range32.js";
import { useFusedSoftmax } from "../kernels/softmaxWasm.js";
import { F32_NR, F64_NR } from "../kernels/wat.js";
import { Matrix } from "../matrix.js";
import { type NormParams, rmsNorm } from "../norm.js";
import { assertFinite } from "../validate.js";
import type { MlaLayerAttention, MoeFfn, PretrainedWeights } from "./build.js";
import { type JoinedGlu, columnSlice, gluForward } from "./fused.js";
import { groupByExpert, route, routeLogits, scatterAddWeighted } from "./moe.js";
import { type AttentionRegions, QUERY_BLOCK, arenaSoftmaxPlan, attendHead, zeroKeyPadding } from "./resident.js";
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
  gluInArena,
  normChecked,
  RopeTables,
  residentBackendOk,
  roundUp,
} from "./residentCommon.js";

/** The joined MLA projections of model.ts (`JoinedMla`), as far as this path reads them. */
interface JoinedMlaLike {
  /** [W_DKV | W_KR]: not used here, placed for the decoding steps' one-row products. */
  readonly down: Matrix;
  readonly queryUp: Matrix;
  readonly keyValueUp: Matrix;
  readonly queryDownIdentity: boolean;
}

/** The joined projections of one layer (model.ts' `JoinedLayer`), as far as this path reads them. */
export interface JoinedMlaLayer {
  readonly mla?: JoinedMlaLike;
  readonly ffn?: JoinedGlu;
  readonly experts?: readonly (JoinedGlu | undefined)[];
  readonly shared?: JoinedGlu;
}

interface PlacedLayer {
  readonly inputGain: number;
  readonly postGain: number;
  readonly latentGain: number;
  readonly queryUp: Placed;
  readonly latentDown: Placed;
  readonly keyRope: Placed;
  readonly keyValueUp: Placed;
  readonly output: Placed;
  /** Dense FFN, or the routed experts and the shared one. */
  readonly ffn?: PlacedGlu;
  readonly experts?: PlacedGlu[];
  readonly shared?: PlacedGlu;
  /** The router W_g (E×d) as the operand of x W_gᵀ, always float64 (the router runs in float64). */
  readonly router?: Placed;
}

/** The static shape of an eligible layer. */
interface LayerPlan {
  readonly a: MlaLayerAttention;
  readonly inputNorm: NormParams & { kind: "rms" };
  readonly postNorm: NormParams & { kind: "rms" };
  readonly latentNorm: NormParams & { kind: "rms" };
  readonly j: JoinedMlaLike;
  readonly ffn?: JoinedGlu;
  readonly moe?: { readonly ffn: MoeFfn; readonly experts: JoinedGlu[]; readonly shared?: JoinedGlu };
  readonly H: number;
  readonly nope: number;
  readonly dR: number;
  readonly dL: number;
  readonly dV: number;
}

/** A SwiGLU FFN this path runs (gluForward's fast branch: silu, no biases — DeepSeek has none). */
function swigluOk(f: JoinedGlu | undefined): f is JoinedGlu {
  return (
    f !== undefined && f.activation === "silu" && f.weights.b1 === undefined && f.weights.c === undefined && f.weights.b2 === undefined
  );
}

/**
 * The resident MLA prefill of one model (module doc); `plan` returns undefined for a model it does
 * not apply to. Weights are placed at the first step of each precision.
 */
export class ResidentMlaPrefill extends ResidentModel<PlacedLayer> {
  private readonly layers: LayerPlan[];
  /** The last RoPE table, (cos, sin) per pair (residentCommon.ts `RopeTables`). */
  private readonly ropeTables = new RopeTables();

  private constructor(weights: PretrainedWeights, layers: LayerPlan[]) {
    super(weights, (arena, place, glu) =>
      layers.map((l) => {
        const w = l.a.weights;
        // [W_DKV | W_KR] joined: the prefill multiplies by the two parts, a decoded token's one-row
        // product (model.ts mlaProjectJoined) by the joined matrix — placed for it (residentGemv.ts).
        place(l.j.down, false);
        return {
          inputGain: arena.place(l.inputNorm.gain),
          postGain: arena.place(l.postNorm.gain),
          latentGain: arena.place(l.latentNorm.gain),
          queryUp: place(l.j.queryUp, false) as Placed,
          latentDown: place(w.latentDown, false) as Placed,
          keyRope: place(w.keyRope as Matrix, false) as Placed,
          keyValueUp: place(l.j.keyValueUp, false) as Placed,
          output: place(w.output, false) as Placed,
          ffn: l.ffn ? glu(l.ffn) : undefined,
          experts: l.moe?.experts.map(glu),
          shared: l.moe?.shared ? glu(l.moe.shared) : undefined,
          router: l.moe ? placeRouter(arena, l.moe.ffn.gate) : undefined,
        };
      }),
    );
    this.layers = layers;
  }

  /** The plan for a model, or undefined when some layer is not of the eligible kind (module doc). */
  static plan(weights: PretrainedWeights, joined: readonly JoinedMlaLayer[]): ResidentMlaPrefill | undefined {
    const layers: LayerPlan[] = [];
    for (const [l, layer] of weights.layers.entries()) {
      const a = layer.attention;
      const j = joined[l];
      if (a.kind !== "mla" || !j.mla || !j.mla.queryDownIdentity) return undefined;
      const w = a.weights;
      if (!w.keyRope || !w.queryRope || !w.latentNorm) return undefined;
      if (layer.inputNorm.kind !== "rms" || layer.postNorm.kind !== "rms") return undefined;
      const f = layer.ffn;
      let moe: LayerPlan["moe"];
      if (f.kind === "dense") {
        if (!swigluOk(j.ffn)) return undefined;
      } else {
        const experts = j.experts ?? [];
        if (experts.length !== f.experts.length || !experts.every(swigluOk)) return undefined;
        if (f.shared && !swigluOk(j.shared)) return undefined;
        moe = { ffn: f, experts: experts as JoinedGlu[], shared: f.shared ? j.shared : undefined };
      }
      const plan: LayerPlan = {
        a,
        inputNorm: layer.inputNorm as LayerPlan["inputNorm"],
        postNorm: layer.postNorm as LayerPlan["postNorm"],
        latentNorm: w.latentNorm,
        j: j.mla,
        ffn: f.kind === "dense" ? j.ffn : undefined,
        moe,
        H: w.queryUp.length,
        nope: w.queryUp[0].cols,
        dR: w.keyRope.cols,
        dL: w.latentDown.cols,
        dV: w.valueUp[0].cols,
      };
      if (plan.j.queryUp.cols !== plan.H * (plan.nope + plan.dR) || w.keyUp[0].cols !== plan.nope) return undefined;
      const glus = [plan.ffn, ...(moe?.experts ?? []), moe?.shared].filter((g): g is JoinedGlu => g !== undefined);
      for (const m of [
        plan.j.queryUp,
        w.latentDown,
        w.keyRope,
        plan.j.keyValueUp,
        w.output,
        ...glus.flatMap((g) => [g.gateUp, g.weights.w2]),
      ]) {
        if (!packableOperand(m.rows, m.cols)) return undefined;
      }
      layers.push(plan);
    }
    return layers.length > 0 ? new ResidentMlaPrefill(weights, layers) : undefined;
  }

  /**
   * A forward without a state keeps each layer's latent and rotary keys in the arena (StepArgs.caches
   * null): nothing is appended, the heads read them there.
   */
  override readonly cacheFree = true;

  /** Whether a step of t tokens runs here (the products on the WebAssembly kernels, exact latent caches or none). */
  applies(t: number, p0: number, caches: readonly unknown[] | null, precision: AttentionPrecisionOption | undefined): boolean {
    if (!residentBackendOk(precision)) return false;
    const n = p0 + t;
    for (const [l, p] of this.layers.entries()) {
      if (caches !== null && (!(caches[l] instanceof LatentCache) || (caches[l] as LatentCache).length !== p0)) return false;
      const w = p.a.weights;
      const g = p.ffn ?? p.moe?.shared;
      for (const [m, rows] of [
        [p.j.queryUp, t],
        [w.latentDown, t],
        [w.keyRope as Matrix, t],
        [p.j.keyValueUp, n],
        [w.output, t],
        ...(g ? ([[g.gateUp, t] as const, [g.weights.w2, t] as const] as const) : []),
      ] as const) {
        if (kernelBackendFor(rows, m.rows, m.cols) !== "wasm") return false;
      }
      if (!useFusedSoftmax(t, n, p.nope + p.dR)) return false;
    }
    return true;
  }

  protected layersInArena(step: StepArgs<PlacedLayer>): LayersOut {
    const { x, caches, positions, p0, precision, prec, f32, placed } = step;
    const es = f32 ? 4 : 8;
    const { arena, layers, lmHead } = placed;
    const t = x.rows;
    const d = x.cols;
    const n = p0 + t;
    const t4 = roundUp(t, TILE_ROWS);
    const n4 = roundUp(n, TILE_ROWS);
    let wQ = 0;
    let wKV = 0;
    let wY = 0;
    let dL = 0;
    let dR = 0;
    let dQ = 0;
    let dV = 0;
    let dff = 0;
    for (const p of this.layers) {
      wQ = Math.max(wQ, p.j.queryUp.cols);
      wKV = Math.max(wKV, p.j.keyValueUp.cols);
      wY = Math.max(wY, p.H * p.dV);
      dL = Math.max(dL, p.dL);
      dR = Math.max(dR, p.dR);
      dQ = Math.max(dQ, p.nope + p.dR);
      dV = Math.max(dV, p.dV);
      for (const g of [p.ffn, ...(p.moe?.experts ?? []), p.moe?.shared]) if (g) dff = Math.max(dff, g.dHidden);
    }
    const nOut = lmHead ? lmHead.n : 0;
    let topK = 0;
    let nExperts = 0;
    for (const p of this.layers) {
      if (p.moe) topK = Math.max(topK, p.moe.ffn.topK);
      if (p.moe) nExperts = Math.max(nExperts, p.moe.ffn.experts.length);
    }
    const [X, XN, XN64, Q, Q32, LAT, LAT64, LATN, KR, KR64, LALL, KV, HEADS, HEADS32, AO, AO32, GU, HID, GATH, EOUT, FOUT, ...rest] =
      arena.frame([
        t4 * d * 8,
        t4 * d * es,
        f32 ? t4 * d * 8 : 0,
        t4 * wQ * 8,
        f32 ? t4 * wQ * 4 : 0,
        t4 * dL * es,
        f32 ? t4 * dL * 8 : 0,
        t4 * dL * 8,
        t4 * dR * es,
        f32 ? t4 * dR * 8 : 0,
        n4 * dL * es,
        n4 * wKV * es,
        t4 * wY * 8,
        f32 ? t4 * wY * 4 : 0,
        t4 * d * 8,
        f32 ? t4 * d * 4 : 0,
        t4 * 2 * dff * es,
        t4 * dff * es,
        t4 * d * es,
        t4 * d * es,
        t4 * d * 8,
        // The attention regions (attendHead: K_h and V_h panels, one query block's Q, S, Y, m, l), the logits.
        roundUp(n, 8) * dQ * 8,
        roundUp(dV, 8) * n * 8,
        QUERY_BLOCK * dQ * 8,
        QUERY_BLOCK * n * 8,
        QUERY_BLOCK * dV * 8,
        QUERY_BLOCK * 8,
        QUERY_BLOCK * 8,
        t4 * nOut * es,
        // k_R of every row (p0 > 0: the cache's, copied in), the step's RoPE table, a MoE layer's routing lists.
        p0 > 0 ? n4 * dR * 8 : 0,
        t4 * dR * 8,
        roundUp(t * topK, 2) * 4,
        t * topK * 8,
        t4 * nExperts * 8,
      ]);
    const [KP, VP, QB, SB, YB, MB, LB, LOGITS, RALL, TAB, IDX, WTS, RLOG] = rest;
    const R: AttentionRegions = { kp: KP, vp: VP, q: QB, s: SB, y: YB, m: MB, l: LB };
    const k = arena.k;
    const m64 = k.f64;
    const m32 = k.f32;
    const v64 = (addr: number, len: number) => m64.subarray(addr / 8, addr / 8 + len);
    const v32 = (addr: number, len: number) => m32.subarray(addr / 4, addr / 4 + len);
    const vp = (addr: number, len: number) => (f32 ? v32(addr, len) : v64(addr, len));
    const gemm = arenaGemm(k, f32);
    const gemm64 = f32 ? arenaGemm(k, false) : gemm;
    const is32 = f32 ? 1 : 0;
    const xs = v64(X, t * d);
    xs.set(x.data);
    const xn = vp(XN, t * d);
    // The rope table in the arena (the frame is laid out: nothing grows the memory until the step ends).
    const ropeTab = v64(TAB, t * dR);
    let ropeOf: unknown;
    for (const [l, p] of this.layers.entries()) {
      const w = layers[l];
      const a = p.a;
      // null: a forward that keeps no state (StepArgs.caches; p0 = 0): nothing is appended.
      const cache = caches === null ? undefined : (caches[l] as LatentCache);
      const { H, nope } = p;
      const dQh = nope + p.dR;
      // Input norm; mlaStep checks the normalized rows (assertFinite(xn, "x")).
      normChecked(k, X, XN, t, d, w.inputGain, p.inputNorm.epsilon, f32);
      // Every head's [q_nope | q_rope] (float64 in the arena: RoPE runs in float64 as before).
      const ldQ = p.j.queryUp.cols;
      const q = v64(Q, t * ldQ);
      gemmInto64(k, f32, XN, w.queryUp, Q, Q32, t, gemm);
      if (ropeOf !== a.rope) {
        ropeTab.set(this.ropeTables.get(a.rope, p.dR, "interleaved", positions));
        ropeOf = a.rope;
      }
      // Interleaved pairs over exactly the rope columns: every head's in one WebAssembly pass.
      const pairs = a.rope.pairing === "interleaved" && a.rope.dim === p.dR;
      if (pairs) k.rope_pairs_f64(Q + nope * 8, ldQ, t, H, dQh, p.dR, TAB);
      else for (let h = 0; h < H; h++) a.rope.rotateColumnsInPlace(q, t, ldQ, h * dQh + nope, positions);
      // L = Norm(X W_L), k_R = RoPE(X W_KR), both float64 (the latent cache's rows).
      gemm(XN, w.latentDown, LAT, t);
      gemm(XN, w.keyRope, KR, t);
      const lat = f32 ? v64(LAT64, t * p.dL) : v64(LAT, t * p.dL);
      if (f32) k.widen_f32(LAT, LAT64, t * p.dL);
      if (!k.all_finite(f32 ? LAT64 : LAT, t * p.dL, 0)) rmsNorm(new Matrix(t, p.dL, lat.slice()), p.latentNorm); // its NonFiniteError
      // (rms_rows_f64 answers whether every L it wrote is finite: the cache's check of L below.)
      const latFinite = k.rms_rows_f64(f32 ? LAT64 : LAT, LATN, t, p.dL, w.latentGain, p.latentNorm.epsilon, 0);
      const KRA = f32 ? KR64 : KR;
      const kr = v64(KRA, t * p.dR);
      if (f32) k.widen_f32(KR, KR64, t * p.dR);
      if (pairs) k.rope_pairs_f64(KRA, p.dR, t, 1, p.dR, p.dR, TAB);
      else a.rope.rotateColumnsInPlace(kr, t, p.dR, 0, positions);
      // The cache's checks (NonFiniteError naming latent / rotaryKeys) as one WebAssembly pass per
      // block; a block that fails takes `append` itself for its error (a throwaway cache when none).
      const latentRows = new Matrix(t, p.dL, v64(LATN, t * p.dL));
      const rotaryRows = new Matrix(t, p.dR, kr);
      if (!latFinite || !k.all_finite(KRA, t * p.dR, 0)) {
        (cache ?? new LatentCache({ latentDim: p.dL, ropeDim: p.dR })).append(latentRows, rotaryRows);
      }
      // The rows of every position, L and k_R: this step's (in the arena) when nothing precedes
      // them, else the cache's after the append (copied in).
      cache?.appendFinite(latentRows, rotaryRows);
      let latAddr = LATN;
      let rotAddr = KRA;
      if (p0 > 0) {
        const c = cache as LatentCache;
        v64(RALL, n * p.dR).set((c.rotaryKeys() as Matrix).data);
        rotAddr = RALL;
        latAddr = LALL;
        vp(LALL, n * p.dL).set(c.latent().data);
      } else if (f32) {
        // float32 products: L rounded, as the copy into float32 kernel memory rounded it.
        latAddr = LALL;
        k.narrow_f64(LATN, LALL, n * p.dL);
      }
      // [L W_LK^h]_h | [L W_LV^h]_h over every row.
      gemm(latAddr, w.keyValueUp, KV, n);
      const ldKV = p.j.keyValueUp.cols;
      if (!k.all_finite(KV, n * ldKV, is32)) {
        assertFinite(new Matrix(n, ldKV, Float64Array.from(vp(KV, n * ldKV))), "keys, values (latent · [W_LK | W_LV])");
      }
      const width = H * p.dV;
      const y = v64(HEADS, t * width);
      if (!attendMlaInArena(k, R, f32, Q, ldQ, t, n, p, KV, ldKV, rotAddr, a.scale, p0, precision, HEADS)) {
        attendMlaHeadsJs(q, ldQ, t, n, p, vp(KV, n * ldKV), ldKV, v64(rotAddr, n * p.dR), a.scale, p0, precision, y);
      }
      // W_O, then h = attn + x (model.ts: addInPlace(attn, x)).
      gemmFrom64(k, f32, HEADS, HEADS32, w.output, f32 ? AO32 : AO, t, gemm);
      k.add_rows_f64(f32 ? AO32 : AO, X, AO, t * d, is32);
      // Post norm (float64 for the router, rounded for the products), checked as layerStep does.
      if (p.moe && f32) {
        normChecked(k, AO, XN64, t, d, w.postGain, p.postNorm.epsilon, false);
        k.narrow_f64(XN64, XN, t * d);
      } else normChecked(k, AO, XN, t, d, w.postGain, p.postNorm.epsilon, f32);
      if (w.ffn) {
        // Dense SwiGLU FFN (gluForward's operations), then x = FFN + h (addInPlace(f, h)).
        gluInArena(k, w.ffn, XN, GU, HID, EOUT, t, f32, gemm);
        k.add_rows_f64(EOUT, AO, X, t * d, is32);
        continue;
      }
      // MoE: route (float64), each expert on its gathered rows, weighted scatter-add, then the shared expert.
      const moe = p.moe as NonNullable<LayerPlan["moe"]>;
      const hn = new Matrix(t, d, f32 ? v64(XN64, t * d) : (xn as Float64Array));
      // The router logits x W_gᵀ in the arena where route's product would run on the WebAssembly
      // kernels (the same kernel over the same panels: the same bits), else route's own product.
      const Eg = moe.ffn.experts.length;
      let routing: ReturnType<typeof route>;
      if (w.router && kernelBackendFor(t, d, Eg) === "wasm") {
        const XR = f32 ? XN64 : XN;
        gemm64(XR, w.router, RLOG, t);
        routing = routeLogits(moe.ffn, v64(RLOG, t * Eg), t);
      } else routing = route(moe.ffn, hn);
      const { rows, rowWeights, count } = groupByExpert(routing, Eg, moe.ffn.topK, t);
      // The routing lists in the arena for the gather and scatter-add passes.
      new Int32Array(m64.buffer, IDX, rows.length).set(rows);
      v64(WTS, rowWeights.length).set(rowWeights);
      const fo = v64(FOUT, t * d);
      fo.fill(0);
      const E_ = moe.experts.length;
      for (let e = 0; e < E_; e++) {
        const r0 = count[e];
        const te = count[e + 1] - r0;
        if (te === 0) continue;
        const pe = (w.experts as PlacedGlu[])[e];
        if (kernelBackendFor(te, pe.gateUp.k, pe.gateUp.n) === "wasm" && kernelBackendFor(te, pe.down.k, pe.down.n) === "wasm") {
          // The expert's rows of the normalized block gathered next to it (one pass within the arena),
          // its FFN there, its weighted rows added into the routed sum (scatterAddWeighted's operations).
          if ((d * es) % 16 === 0) k.gather_rows(XN, GATH, IDX + r0 * 4, te, d * es);
          else {
            const mem = f32 ? m32 : m64;
            const g0 = GATH / es;
            const x0 = XN / es;
            for (let r = 0; r < te; r++) mem.copyWithin(g0 + r * d, x0 + rows[r0 + r] * d, x0 + (rows[r0 + r] + 1) * d);
          }
          gluInArena(k, pe, GATH, GU, HID, EOUT, te, f32, gemm);
          k.scatter_add_rows(FOUT, EOUT, IDX + r0 * 4, WTS + r0 * 8, te, d, is32);
        } else {
          // Too few rows for the WebAssembly kernels: gluForward's own products (as moeForward).
          const g = new Matrix(te, d);
          for (let r = 0; r < te; r++) g.data.set(hn.data.subarray(rows[r0 + r] * d, (rows[r0 + r] + 1) * d), r * d);
          scatterAddWeighted(fo, gluForward(g, moe.experts[e], prec).data, rows, rowWeights, r0, te, d);
        }
      }
      if (w.shared) {
        gluInArena(k, w.shared, XN, GU, HID, EOUT, t, f32, gemm);
        // routed + shared (moeForward: out[i] += shared[i]; IEEE addition commutes exactly).
        k.add_rows_f64(EOUT, FOUT, FOUT, t * d, is32);
      }
      k.add_rows_f64(FOUT, AO, X, t * d, 0);
    }
    // The final norm (RMSNorm in the arena, into W_O's free region) and the LM head: ResidentModel.run.
    return { X, NORM: AO, XN, LOGITS };
  }
}

/**
 * The router W_g (E×d) packed as the float64 operand of x·W_gᵀ (matmulTransB's panels, as
 * residentCommon.ts places the LM head), or undefined when it does not fit one GEMM block.
 */
function placeRouter(arena: KernelArena, gate: Matrix): Placed | undefined {
  const panels = packOperandF64(gate.data, true, gate.cols, gate.rows)?.panels;
  return panels ? { addr: arena.place(panels), k: gate.cols, n: gate.rows } : undefined;
}

/**
 * Every head of an MLA layer inside the arena: per head, K_h = [L W_LK^h | k_R] packed by rows and
 * V_h = L W_LV^h by columns straight from the [L W_LK^h]_h | [L W_LV^h]_h block (byte address
 * `kvAddr`, row stride `ldKV`, float32 or float64 as the products ran) and the rotary keys of every
 * row (float64 at `rotAddr`) — the panels the fused driver packs from K_h and V_h (softmaxWasm.ts
 * packPanels), by the WebAssembly passes `pack_key_panels` / `pack_value_panels` — then the
 * driver's prefix-mask steps (`attendHead`). float32 per head exactly as the driver decides it
 * (`attentionInFloat32Range` of Q_h, K_h, V_h, here from maxima found while packing), with its
 * fallback to float64 on a non-finite normalizer or output. False (nothing usable written) where a
 * row needs attention's error path; the caller then takes `attendMlaHeadsJs`.
 */
function attendMlaInArena(
  k: Kernels,
  R: AttentionRegions,
  f32Products: boolean,
  qAddr: number,
  ldQ: number,
  t: number,
  n: number,
  p: LayerPlan,
  kvAddr: number,
  ldKV: number,
  rotAddr: number,
  scale: number,
  p0: number,
  precision: AttentionPrecisionOption | undefined,
  outAddr: number,
): boolean {
  const { H, nope, dR, dV } = p;
  const dQ = nope + dR;
  const plan = arenaSoftmaxPlan(scale, p0, precision, t, n, dQ);
  if (!plan) return false;
  const { scale: sc, limits } = plan;
  const width = H * dV;
  const src32 = f32Products ? 1 : 0;
  const esSrc = f32Products ? 4 : 8;
  // The rotary part of K_h's panels is every head's (k_R is shared): packed once per precision,
  // its max |x| with it.
  let ropePacked = 0;
  let ropeMax = 0;
  const packHead = (h: number, f32: boolean, withMaxima: boolean) => {
    const es = f32 ? 4 : 8;
    const NR = f32 ? F32_NR : F64_NR;
    const dst32 = f32 ? 1 : 0;
    if (ropePacked !== es) {
      zeroKeyPadding(f32 ? k.f32 : k.f64, R.kp / es, n, dQ, NR);
      ropeMax = k.pack_key_panels(rotAddr, dR, n, dR, 0, R.kp + nope * NR * es, dQ, NR, dst32, 1);
      ropePacked = es;
    }
    const mx = withMaxima ? 1 : 0;
    const km = k.pack_key_panels(kvAddr + h * nope * esSrc, ldKV, n, nope, src32, R.kp, dQ, NR, dst32, mx);
    const vm = k.pack_value_panels(kvAddr + (H * nope + h * dV) * esSrc, ldKV, n, dV, src32, R.vp, NR, dst32, mx);
    return { kMax: Math.max(km, ropeMax), vMax: vm };
  };
  for (let h = 0; h < H; h++) {
    const qh = qAddr + h * dQ * 8;
    let f32 = false;
    if (plan.float32) {
      // max|Q_h| in one WebAssembly pass (maxAbsOf of rows_max_f64's row maxima, as resident.ts).
      const qm = k.max_abs_block(qh, ldQ, t, dQ);
      // Pack in float32 first: the maxima decide whether the panels are used or repacked in float64.
      const { kMax, vMax } = packHead(h, true, true);
      f32 = attentionMaximaInFloat32Range(qm, kMax, vMax, n, dQ, sc);
    }
    for (;;) {
      if (!f32) packHead(h, false, false);
      if (attendHead(k, R, f32, qh, ldQ, t, n, dQ, dV, sc, limits, outAddr + h * dV * 8, width)) break;
      if (!f32) return false;
      f32 = false;
    }
  }
  return true;
}

/** The per-head calls of model.ts (attentionCachedKeys on K_h, V_h copies), which raise attention's errors. */
function attendMlaHeadsJs(
  q: Float64Array,
  ldQ: number,
  t: number,
  n: number,
  p: LayerPlan,
  kv: Float64Array | Float32Array,
  ldKV: number,
  rotary: Float64Array,
  scale: number,
  p0: number,
  precision: AttentionPrecisionOption | undefined,
  out: Float64Array,
): void {
  const { H, nope, dR, dV } = p;
  const dQ = nope + dR;
  const width = H * dV;
  const kv64 = Float64Array.from(kv);
  const options = { kernel: { kind: "softmax" as const, scale }, mask: { kind: "causal" as const, offset: p0 }, precision };
  for (let h = 0; h < H; h++) {
    const K = new Matrix(n, dQ);
    for (let i = 0; i < n; i++) {
      K.data.set(kv64.subarray(i * ldKV + h * nope, i * ldKV + (h + 1) * nope), i * dQ);
      K.data.set(rotary.subarray(i * dR, (i + 1) * dR), i * dQ + nope);
    }
    const V = columnSlice(kv64, n, ldKV, H * nope + h * dV, dV);
    const y = attentionCachedKeys(columnSlice(q, t, ldQ, h * dQ, dQ), K, V, options).data;
    for (let i = 0; i < t; i++) out.set(y.subarray(i * dV, (i + 1) * dV), i * width + h * dV);
  }
}
