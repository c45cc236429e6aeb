/**
 * A Hugging Face causal LM run on the core's exact pieces: embeddings, LayerNorm/RMSNorm, RoPE,
 * GQA heads through X·W_h + `attention` (the same kernels as `multiHeadAttention`), MLA
 * through core/latent's `mlaQueries`/`mlaKeysValues` (the pieces of `mlaAttention`), the GLU FFN,
 * and the KV / latent caches. A full forward is one cached step over all tokens from an empty cache,
 * so decoding token by token and the full forward share every line.
 */
import { attentionCachedKeys, attentionWeights } from "../attention/attend.js";
import type { AttentionPrecisionOption } from "../attention/options.js";
import { runAttention } from "../attention/projection.js";
import { resolveAttention } from "../attention/options.js";
import { type FusedSoftmaxSpec, fusedSoftmaxAttention, useFusedSoftmax } from "../kernels/softmaxWasm.js";
import { SMALL_M_ROWS } from "../kernels/gemm.js";
import { attentionMaximaInFloat32Range } from "../kernels/range32.js";
import type { PretrainedConfig } from "../checkpoint/config.js";
import { KVCache } from "../cache/kv-cache.js";
import { LatentCache } from "../cache/latent-cache.js";
import {
  type DecodeCache,
  type DecodeCacheFactory,
  type LatentCacheFactory,
  type LatentDecodeCache,
  rotationSignature,
} from "../cache/contract.js";
import { ShapeError, ValueError } from "../errors.js";
import { assertFfnWeights, feedForward } from "../layers/ffn.js";
import { applyNorm, assertNormParams, rmsNorm } from "../norm.js";
import { mlaKeyLatent, mlaKeysValues, mlaQueries, mlaQueryLatent, mlaRotaryKey } from "../latent/unmerged.js";
import { matmul, matmulInto, matmulTransB, matmulTransBInto } from "../linalg/matmul.js";
import { Matrix } from "../matrix.js";
import { addInPlace, concatCols, sliceCols, sliceRows } from "../linalg/ops.js";
import { RowBuffer } from "../cache/buffer.js";
import { greedyToken } from "../model/head.js";
import { assertFinite, assertInteger, assertShape, describe } from "../validate.js";
import type { TensorStore } from "../checkpoint/store.js";
import type { Tokenizer } from "../tokens/tokenizer.js";
import { buildPretrainedWeights } from "./build.js";
import { type RouterCapture, moeForward } from "./moe.js";
import {
  type JoinedGlu,
  type ProjectionPrecision,
  columnSlice,
  gluForward,
  joinColumns,
  joinGlu,
  normRows,
  project,
  rowColumns,
  projectTransposed,
  scratch,
} from "./fused.js";
import type { DecoderLayerWeights, GqaLayerAttention, MlaLayerAttention, PretrainedWeights } from "./build.js";
import { ResidentPrefill, attendAllHeads, columnsFinite, rowsFinite } from "./resident.js";
import { ResidentMlaPrefill } from "./residentMla.js";
import type { ResidentModel } from "./residentCommon.js";

export { moeForward, type RouterCapture };

/** Tensors a forward pass can capture per layer. */
export type CaptureTensor = "hidden" | "qPre" | "q" | "kPre" | "k" | "v" | "weights" | "latent" | "rotaryKey" | "router";
/** Every capturable tensor. */
export const CAPTURE_TENSORS: readonly CaptureTensor[] = [
  "hidden",
  "qPre",
  "q",
  "kPre",
  "k",
  "v",
  "weights",
  "latent",
  "rotaryKey",
  "router",
];

/** Which layers and tensors to keep. */
export interface CaptureRequest {
  /** Layer indices (0-based). @default every layer */
  layers?: readonly number[];
  /** Tensors. @default every tensor the architecture has */
  tensors?: readonly CaptureTensor[];
}

/**
 * Captured tensors of one layer (per-head lists are indexed by head). For GQA `k`, `kPre`, `v`
 * hold the G KV heads and `q`, `qPre`, `weights` the H query heads; for MLA every list has H
 * entries, `k`/`q` are [nope | rope] wide, `latent` is L (after kv_a_layernorm) and `rotaryKey`
 * the rotated shared k_R. Keys, values, weights and latents span every cached token.
 */
export interface LayerCapture {
  readonly layer: number;
  /** The layer's input (residual stream), t×d — HF's `hidden_states[layer]`. */
  hidden?: Matrix;
  qPre?: Matrix[];
  q?: Matrix[];
  kPre?: Matrix[];
  k?: Matrix[];
  v?: Matrix[];
  /** Attention weights P_h = softmax(scale·Q_h K_hᵀ + causal mask), t×N per query head. */
  weights?: Matrix[];
  latent?: Matrix;
  rotaryKey?: Matrix;
  router?: RouterCapture;
}

/** Options of a forward pass or decoding step. */
export interface RunOptions {
  /** Tensors to keep. @default undefined (none) */
  capture?: CaptureRequest;
  /**
   * Arithmetic of the model's products, like torch running the checkpoint in that dtype.
   * `"float64"`: every product in float64 (the 1e-12 torch-fixture path). `"float32"`: Y = Z⁻¹AV in
   * every head on the f32x4 kernels (core `AttentionOptions.precision`: QKᵀ and AV in float32, max,
   * exp and Z in float64) AND the joined projections — Q/K/V, MLA down/up, W_O, the GLU FFNs
   * (dense, routed and shared experts) and the LM head — as float32 GEMMs (inputs rounded to
   * float32, products and sums in float32, |error| ≤ (k + 4)·2⁻²⁴·(|X||W|) per entry). Embeddings,
   * norms, RoPE, SiLU, the residual stream, the MoE router and the absorbed MLA decode products stay
   * float64. Logits then differ from float64 by ≈ 1e-6 relative (tested).
   * @default "float64"
   */
  precision?: AttentionPrecisionOption;
  /**
   * How MLA layers attend (§4.2). `"unmerged"`: K_h = L W_LK^h and V_h = L W_LV^h formed for every
   * cached token, as the checkpoint's own code does. `"absorbed"`: W_LK^h folded into the query
   * (q̃_h = q_h (W_LK^h)ᵀ, d_L wide) and W_LV^h applied after attending to L, so each step costs
   * O(N·(d_L + d_R)) per head instead of O(N·d_L·(d_head + d_V)) — the inference form the latent
   * cache exists for; equal up to rounding. Captures need `"unmerged"` (per-head K, V).
   * @default "unmerged"
   */
  mlaForm?: MlaForm;
  /**
   * Replaces exact attention in chosen heads (an evaluation hook: e.g. a randomized sketch during
   * prefill). Called once per layer and query head with that head's post-RoPE queries, the cached
   * keys and values it attends to (MLA: the unmerged K_h, V_h) and the causal offset; a returned
   * matrix (t × d_V) is used instead of softmax(scale·QKᵀ + mask)V, `undefined` keeps the exact
   * head. MLA layers attend unmerged while an override is set. Absent, every head is exact (the
   * forward is unchanged bit for bit).
   * @default undefined
   */
  attentionOverride?: AttentionOverride;
}

/** What {@link RunOptions.attentionOverride} receives for one head. */
export interface AttentionOverrideHead {
  readonly layer: number;
  /** Query head index h. */
  readonly head: number;
  /** t × d_QK post-RoPE queries of the new tokens. */
  readonly queries: Matrix;
  /** N × d_QK keys of every cached token (post-RoPE), the head's KV group for GQA. */
  readonly keys: Matrix;
  /** N × d_V values of every cached token. */
  readonly values: Matrix;
  /** The softmax scale of the layer (1/√d_head, or DeepSeek's (d_nope + d_rope)^−½). */
  readonly scale: number;
  /** Causal offset: query i sees keys 0 … offset + i (= tokens cached before this step). */
  readonly offset: number;
}

/** Returns a head's attention output in place of the exact one, or `undefined` to keep it exact. */
export type AttentionOverride = (head: AttentionOverrideHead) => Matrix | undefined;

/** The two MLA evaluation orders of {@link RunOptions.mlaForm}. */
export type MlaForm = "unmerged" | "absorbed";

/** Output of {@link PretrainedModel.forward} / `step`. */
export interface ForwardResult {
  /** t×vocab logits of the new tokens. */
  readonly logits: Matrix;
  /** Final hidden states (after the last norm), t×d — HF's `hidden_states[num_layers]`. */
  readonly hidden: Matrix;
  /** Captures of the requested layers, in layer order. */
  readonly layers: LayerCapture[];
}

/** A decoding state: the caches of every layer and the next position. */
export interface DecodeState {
  /** Tokens seen so far (= the next token's position). */
  position: number;
  readonly caches: (KVCache | LatentCache | DecodeCache | LatentDecodeCache)[];
}

/**
 * Which caches {@link PretrainedModel.createState} builds. A factory's cache replaces the exact
 * one of every layer of its kind: any `DecodeCache` (issue 12: `kvCacheFactory` of
 * `@randattn/sketch`, e.g. a sliding window or KIVI) for GQA layers — the step's queries attend
 * through the cache's own `step` — and any `LatentDecodeCache` for MLA layers.
 */
export interface StateOptions {
  /** Per-layer cache of GQA/MHA layers. @default exact `KVCache` */
  cacheFactory?: DecodeCacheFactory;
  /** Per-layer latent cache of MLA layers. @default exact `LatentCache` */
  latentCacheFactory?: LatentCacheFactory;
}

/** Options of {@link PretrainedModel.generate}. */
export interface GenerateOptions {
  /** Tokens to add (greedy argmax). */
  maxNewTokens: number;
  /** Stop after emitting this id. @default undefined (never stop early) */
  eosTokenId?: number;
  /**
   * `true`: prefill then one cached step per token; `false`: a full forward over the whole
   * sequence for every token (the reference the cached path must equal). @default true
   */
  useCache?: boolean;
  precision?: AttentionPrecisionOption;
  /** MLA form of the cached decoding steps (the prefill runs unmerged). @default "absorbed" */
  mlaForm?: MlaForm;
  /** Compressed caches to decode with (cached decoding only). @default exact caches */
  caches?: StateOptions;
}

/**
 * The projections' arithmetic for a run: float32 under `precision: "float32"` (RunOptions), else
 * float64. An invalid precision is left to the attention call, which names `options.precision`.
 */
function projectionPrecision(options: RunOptions): ProjectionPrecision {
  return options.precision === "float32" ? "float32" : "float64";
}

/** b added to columns c0 … c0 + b.length − 1 of every row of a row-major block with `ld` columns. */
function addBlockBias(data: Float64Array, rows: number, ld: number, c0: number, b: Float64Array | undefined): void {
  if (!b) return;
  for (let i = 0; i < rows; i++) for (let j = 0; j < b.length; j++) data[i * ld + c0 + j] += b[j];
}

function addBias(m: Matrix, b: Float64Array | undefined): Matrix {
  if (!b) return m;
  const d = m.data;
  for (let i = 0; i < m.rows; i++) for (let j = 0; j < m.cols; j++) d[i * m.cols + j] += b[j];
  return m;
}

/** A layer's projections joined once at construction (fused.ts): one GEMM where there were many. */
interface JoinedLayer {
  /** GQA: [W_Q^0 … W_Q^{H−1} | W_K^0 … W_K^{G−1} | W_V^0 … W_V^{G−1}], d × (H·d_QK + G·(d_QK + d_V)). */
  readonly qkv?: Matrix;
  /** Dense GLU FFN joined, or undefined (plain kinds keep `feedForward`). */
  readonly ffn?: JoinedGlu;
  /** MoE: each routed expert's and the shared expert's joined GLU (undefined entries: plain kinds). */
  readonly experts?: (JoinedGlu | undefined)[];
  readonly shared?: JoinedGlu;
  /** MLA with decoupled RoPE: the joined down, query-up and key/value-up projections. */
  readonly mla?: JoinedMla;
}

/** An MLA layer's projections joined (fused.ts); only built when the layer has the rotary part. */
interface JoinedMla {
  /** [W_L | W_KR], d × (d_L + d_R). */
  readonly down: Matrix;
  /** [W_LQQ^0 | W_QR^0 | W_LQQ^1 | W_QR^1 | …], d_LQ × H·(d_head + d_R): each head's queries [nope | rope]. */
  readonly queryUp: Matrix;
  /** [W_LK^0 … W_LK^{H−1} | W_LV^0 … W_LV^{H−1}], d_L × H·(d_head + d_V). */
  readonly keyValueUp: Matrix;
  /** W_LQ is the identity (q_lora_rank null): L_Q = X exactly, so its product is skipped. */
  readonly queryDownIdentity: boolean;
}

function isIdentity(m: Matrix): boolean {
  if (m.rows !== m.cols) return false;
  for (let i = 0; i < m.rows; i++) for (let j = 0; j < m.cols; j++) if (m.data[i * m.cols + j] !== (i === j ? 1 : 0)) return false;
  return true;
}

function joinMla(w: MlaLayerAttention["weights"]): JoinedMla | undefined {
  if (!w.keyRope || !w.queryRope) return undefined;
  const qr = w.queryRope;
  return {
    down: joinColumns([w.latentDown, w.keyRope]),
    queryUp: joinColumns(w.queryUp.flatMap((u, h) => [u, qr[h]])),
    keyValueUp: joinColumns([...w.keyUp, ...w.valueUp]),
    queryDownIdentity: !w.queryNorm && isIdentity(w.queryDown),
  };
}

/**
 * A loaded causal LM. `forward(ids)` runs the whole sequence; `createState` + `step` decode with
 * the caches; `generate` is greedy decoding.
 */
export class PretrainedModel {
  readonly config: PretrainedConfig;
  readonly weights: PretrainedWeights;
  /** The checkpoint's tokenizer.json, when it has one. */
  readonly tokenizer?: Tokenizer;
  /** Per layer, the joined projections of the prefill fast path (built once here). */
  private readonly joined: JoinedLayer[];
  /** The resident prefill (pretrained/resident.ts), when every layer is of its kind. */
  private readonly resident: ResidentModel<unknown> | undefined;
  /** The resident steps' embeddings (see `embed`), grown as needed. */
  private embedScratch: Float64Array | undefined;

  constructor(config: PretrainedConfig, weights: PretrainedWeights, tokenizer?: Tokenizer) {
    this.config = config;
    this.weights = weights;
    this.tokenizer = tokenizer;
    // The GQA projections are checked once here (shape and finiteness), not on every step
    // (`gqaStep` projects through the joined `qkv` built below); a checkpoint's tensors were already checked when read. (Mutating weights
    // after construction is unsupported.)
    for (const [l, layer] of weights.layers.entries()) {
      const a = layer.attention;
      if (a.kind !== "gqa") continue;
      for (const [name, ws] of [
        ["queries", a.weights.queries],
        ["keys", a.weights.keys],
        ["values", a.weights.values],
      ] as const) {
        for (const [h, w] of ws.entries()) {
          const label = `weights.layers[${l}].attention.weights.${name}[${h}]`;
          assertShape(w, label, config.hiddenSize, undefined, `rows = hidden_size = ${config.hiddenSize}`);
          assertFinite(w, label);
        }
      }
    }
    this.joined = weights.layers.map((layer, l) => {
      const a = layer.attention;
      // normRows skips applyNorm's per-call parameter checks: they run once here.
      assertNormParams(layer.inputNorm, `weights.layers[${l}].inputNorm`, config.hiddenSize);
      assertNormParams(layer.postNorm, `weights.layers[${l}].postNorm`, config.hiddenSize);
      // The joined FFN path skips feedForward's per-call weight checks, so they run once here.
      const f0 = layer.ffn;
      if (f0.kind === "dense") assertFfnWeights(f0.weights, `weights.layers[${l}].ffn.weights`, config.hiddenSize);
      else {
        for (const [e, w] of f0.experts.entries()) assertFfnWeights(w, `weights.layers[${l}].ffn.experts[${e}]`, config.hiddenSize);
        if (f0.shared) assertFfnWeights(f0.shared, `weights.layers[${l}].ffn.shared`, config.hiddenSize);
      }
      const qkv = a.kind === "gqa" ? joinColumns([...a.weights.queries, ...a.weights.keys, ...a.weights.values]) : undefined;
      const mla = a.kind === "mla" ? joinMla(a.weights) : undefined;
      const f = layer.ffn;
      if (f.kind === "dense") return { qkv, mla, ffn: joinGlu(f.weights) };
      return { qkv, mla, experts: f.experts.map(joinGlu), shared: f.shared ? joinGlu(f.shared) : undefined };
    });
    this.resident = ResidentPrefill.plan(weights, this.joined) ?? ResidentMlaPrefill.plan(weights, this.joined);
  }

  /**
   * Builds the model from a typed config and the checkpoint's tensors.
   * @throws FormatError naming the file, tensor and config field on a missing or misshapen tensor.
   */
  static fromStore(config: PretrainedConfig, store: TensorStore, tokenizer?: Tokenizer): PretrainedModel {
    return new PretrainedModel(config, buildPretrainedWeights(config, store), tokenizer);
  }

  get vocabSize(): number {
    return this.config.vocabSize;
  }

  get numLayers(): number {
    return this.config.numLayers;
  }

  /** Empty caches: a KVCache (G heads) per GQA layer, a LatentCache (d_L + d_R) per MLA layer. */
  createState(options: StateOptions = {}): DecodeState {
    return this.emptyState(options, undefined);
  }

  /** `createState`, the exact KV caches sized for `capacity` tokens when given (a forward knows its length). */
  private emptyState(options: StateOptions, capacity: number | undefined): DecodeState {
    const caches = this.weights.layers.map((layer, l) => {
      const a = layer.attention;
      if (a.kind === "mla") {
        const spec = { layer: l, latentDim: a.weights.latentDown.cols, ropeDim: a.weights.keyRope?.cols ?? 0 };
        return options.latentCacheFactory
          ? options.latentCacheFactory(spec)
          : new LatentCache({ latentDim: spec.latentDim, ropeDim: spec.ropeDim });
      }
      const spec = { layer: l, numKvHeads: a.weights.keys.length, keyDim: a.weights.keys[0].cols, valueDim: a.weights.values[0].cols };
      if (options.cacheFactory) return options.cacheFactory(spec);
      return new KVCache({ numKvHeads: spec.numKvHeads, keyDim: spec.keyDim, valueDim: spec.valueDim, initialCapacity: capacity });
    });
    return { position: 0, caches };
  }

  /** The whole sequence `ids` from an empty cache. */
  forward(ids: ArrayLike<number>, options: RunOptions = {}): ForwardResult {
    if (this.resident?.cacheFree) {
      // The result keeps no state, so a resident forward needs no caches at all (issue 14: building
      // and filling them was ≈ 3–4 % of a prefill): each layer's keys and values stay in the arena
      // for the one step (residentCommon.ts StepArgs.caches). The same checks, in step's order.
      const t = this.checkedIds(ids, 0);
      const capture = resolveCapture(options.capture, this.config.numLayers);
      if (this.residentApplies(t, 0, null, options, capture)) return this.residentStep(null, ids, 0, options);
    }
    // Caches sized for the whole sequence up front (no doubling copies); a bad `ids` is step's error.
    const n = ids !== null && typeof ids === "object" && Number.isInteger(ids.length) && ids.length > 0 ? ids.length : undefined;
    return this.step(this.emptyState({}, n), ids, options);
  }

  /**
   * The number of ids after checking them (step's ValueErrors: a non-id, a sequence past GPT-2's
   * n_positions), p0 tokens already seen.
   */
  private checkedIds(ids: ArrayLike<number>, p0: number): number {
    if (ids === null || typeof ids !== "object" || typeof ids.length !== "number" || ids.length === 0) {
      throw new ValueError("ids", "a non-empty array of token ids", describe(ids));
    }
    const V = this.config.vocabSize;
    for (let i = 0; i < ids.length; i++) {
      const id = ids[i];
      if (!Number.isInteger(id) || id < 0 || id >= V) {
        throw new ValueError(`ids[${i}]`, `a token id in [0, ${V}) (config.json vocab_size = ${V})`, String(id));
      }
    }
    const t = ids.length;
    const pos = this.weights.positions;
    if (pos && p0 + t > pos.rows) {
      throw new ValueError("ids", `at most n_positions = ${pos.rows} tokens in all (learned positions)`, `${p0 + t} tokens`);
    }
    return t;
  }

  /**
   * The t×d embeddings of `ids` at positions p0 … (token rows, plus learned positions when the model
   * has them); into a buffer reused from step to step when `reuse` (the resident step only copies
   * them into its arena, so they need no fresh 8·t·d bytes per forward — issue 14).
   */
  private embed(ids: ArrayLike<number>, p0: number, reuse = false): { x: Matrix; positions: Float64Array } {
    const w = this.weights;
    const t = ids.length;
    const d = this.config.hiddenSize;
    let x: Matrix;
    if (reuse) {
      if (!this.embedScratch || this.embedScratch.length < t * d) this.embedScratch = new Float64Array(t * d);
      x = new Matrix(t, d, this.embedScratch.subarray(0, t * d));
    } else x = new Matrix(t, d);
    // Plain loops: a `subarray` view per row cost more than the row's copy (≈ 2 % of a prefill).
    const xd = x.data;
    const e = w.embed.data;
    const pos = w.positions?.data;
    for (let i = 0; i < t; i++) {
      const o = i * d;
      const s = ids[i] * d;
      for (let j = 0; j < d; j++) xd[o + j] = e[s + j];
      if (pos) {
        const q = (p0 + i) * d;
        for (let j = 0; j < d; j++) xd[o + j] += pos[q + j];
      }
    }
    const positions = new Float64Array(t);
    for (let i = 0; i < t; i++) positions[i] = p0 + i;
    return { x, positions };
  }

  /** Whether a step runs resident (pretrained/resident.ts, residentMla.ts); `caches` null: a forward without a state. */
  private residentApplies(
    t: number,
    p0: number,
    caches: DecodeState["caches"] | null,
    options: RunOptions,
    capture: ResolvedCapture,
  ): boolean {
    return (
      this.resident !== undefined &&
      capture.layers.size === 0 &&
      !options.attentionOverride &&
      // MLA runs resident in its unmerged form only (an invalid form: mlaStep's error).
      (this.resident instanceof ResidentPrefill || (options.mlaForm ?? "unmerged") === "unmerged") &&
      this.resident.applies(t, p0, caches, options.precision)
    );
  }

  /** A prefill-sized step with activations resident in the model's kernel arena (same bits as layerStep's). */
  private residentStep(caches: DecodeState["caches"] | null, ids: ArrayLike<number>, p0: number, options: RunOptions): ForwardResult {
    const { x, positions } = this.embed(ids, p0, true);
    const prec = projectionPrecision(options);
    const lmHead = this.weights.lmHead;
    const r = (this.resident as ResidentModel<unknown>).run(x, caches, positions, p0, options.precision, (h) =>
      projectTransposed(h, lmHead, prec),
    );
    return { logits: r.logits, hidden: r.hidden, layers: [] };
  }

  /**
   * Appends `ids` to the state and returns their logits (positions state.position …).
   * @throws ValueError on an id outside [0, vocab_size) (naming it), a sequence past GPT-2's
   *   n_positions or a sliding window; the state is unchanged when the ids are rejected.
   */
  step(state: DecodeState, ids: ArrayLike<number>, options: RunOptions = {}): ForwardResult {
    const p0 = state.position;
    const t = this.checkedIds(ids, p0);
    const capture = resolveCapture(options.capture, this.config.numLayers);
    if (this.residentApplies(t, p0, state.caches, options, capture)) {
      const r = this.residentStep(state.caches, ids, p0, options);
      state.position = p0 + t;
      return r;
    }
    // A decoded token: its one-row products run on the weights resident in the arena (placed once).
    if (t === 1) this.resident?.placeForRowProducts(options.precision);
    const w = this.weights;
    const embedded = this.embed(ids, p0);
    const positions = embedded.positions;
    let x = embedded.x;
    const captures: LayerCapture[] = [];
    for (let l = 0; l < w.layers.length; l++) {
      const layer = w.layers[l];
      const cap: LayerCapture | undefined = capture.layers.has(l) ? { layer: l } : undefined;
      if (cap && capture.tensors.has("hidden")) cap.hidden = x.clone();
      x = this.layerStep(layer, this.joined[l], state.caches[l], x, positions, p0, options, cap, capture.tensors, l);
      if (cap) captures.push(cap);
    }
    state.position = p0 + t;
    const hidden = applyNorm(x, w.finalNorm);
    return { logits: projectTransposed(hidden, w.lmHead, projectionPrecision(options)), hidden, layers: captures };
  }

  private layerStep(
    layer: DecoderLayerWeights,
    joined: JoinedLayer,
    cache: KVCache | LatentCache | DecodeCache | LatentDecodeCache,
    x: Matrix,
    positions: Float64Array,
    p0: number,
    options: RunOptions,
    cap: LayerCapture | undefined,
    tensors: ReadonlySet<CaptureTensor>,
    layerIndex: number,
  ): Matrix {
    // Pre-norm residual blocks (Llama, GPT-2, DeepSeek): x + Attn(Norm(x)), then + FFN(Norm(·)).
    // The layer's activations in reused buffers (fused.ts scratch): Norm(x), Attn(·) + x, its norm
    // and FFN(·) + h, each dead before the next layer writes its slot — except while an
    // attentionOverride callback (which may run another forward) holds the layer's input: then fresh.
    const reuse = !options.attentionOverride;
    const xn = normRows(x, layer.inputNorm, reuse ? "normIn" : undefined);
    const a = layer.attention;
    const attn =
      a.kind === "mla"
        ? mlaStep(a, joined.mla, cache as LatentCache | LatentDecodeCache, xn, positions, p0, options, cap, tensors, layerIndex)
        : gqaStep(a, joined.qkv as Matrix, cache as KVCache | DecodeCache, xn, positions, p0, options, cap, tensors, layerIndex);
    const h = addInPlace(attn, x);
    const hn = normRows(h, layer.postNorm, reuse ? "normPost" : undefined);
    assertFinite(hn, "x");
    const f =
      layer.ffn.kind === "dense"
        ? joined.ffn
          ? gluForward(hn, joined.ffn, projectionPrecision(options), reuse ? "ffnOut" : undefined)
          : feedForward(hn, layer.ffn.weights)
        : moeForward(layer.ffn, hn, cap, tensors, joined, projectionPrecision(options), reuse ? "ffnOut" : undefined);
    return addInPlace(f, h);
  }

  /**
   * Greedy decoding: the prompt, then `maxNewTokens` argmax tokens (lowest id on ties).
   * @returns the new tokens only.
   */
  generate(prompt: ArrayLike<number>, options: GenerateOptions): number[] {
    assertInteger(options?.maxNewTokens, "options.maxNewTokens", 0);
    const out: number[] = [];
    if (options.maxNewTokens === 0) return out;
    const run = { precision: options.precision };
    if (options.useCache === false) {
      const seq = Array.from(prompt);
      for (let n = 0; n < options.maxNewTokens; n++) {
        const next = greedyToken(this.forward(seq, run).logits);
        out.push(next);
        seq.push(next);
        if (next === options.eosTokenId) break;
      }
      return out;
    }
    const state = this.createState(options.caches);
    let logits = this.step(state, prompt, run).logits;
    for (let n = 0; n < options.maxNewTokens; n++) {
      const next = greedyToken(logits);
      out.push(next);
      if (next === options.eosTokenId || n === options.maxNewTokens - 1) break;
      logits = this.step(state, [next], { ...run, mlaForm: options.mlaForm ?? "absorbed" }).logits;
    }
    return out;
  }
}

interface ResolvedCapture {
  readonly layers: ReadonlySet<number>;
  readonly tensors: ReadonlySet<CaptureTensor>;
}

function resolveCapture(c: CaptureRequest | undefined, numLayers: number): ResolvedCapture {
  if (c === undefined) return { layers: new Set(), tensors: new Set() };
  if (c === null || typeof c !== "object") throw new ValueError("options.capture", "{ layers?, tensors? }", describe(c));
  const layers = c.layers ?? Array.from({ length: numLayers }, (_, l) => l);
  for (const [i, l] of layers.entries()) assertInteger(l, `options.capture.layers[${i}]`, 0, numLayers - 1);
  const tensors = c.tensors ?? CAPTURE_TENSORS;
  for (const [i, name] of tensors.entries()) {
    if (!CAPTURE_TENSORS.includes(name)) {
      throw new ValueError(`options.capture.tensors[${i}]`, `one of ${CAPTURE_TENSORS.join(", ")}`, describe(name));
    }
  }
  return { layers: new Set(layers), tensors: new Set(tensors) };
}

/** An override's output must be one row per query and one column per value channel. */
function checkOverride(m: Matrix, rows: number, cols: number, layer: number, head: number): Matrix {
  if (!(m instanceof Matrix) || m.rows !== rows || m.cols !== cols) {
    throw new ShapeError(
      `options.attentionOverride (layer ${layer}, head ${head})`,
      `${rows}×${cols}`,
      m instanceof Matrix ? m.shape : describe(m),
    );
  }
  return m;
}

function gqaStep(
  a: GqaLayerAttention,
  qkv: Matrix,
  cache: KVCache | DecodeCache,
  xn: Matrix,
  positions: Float64Array,
  p0: number,
  options: RunOptions,
  cap: LayerCapture | undefined,
  tensors: ReadonlySet<CaptureTensor>,
  layer: number,
): Matrix {
  const { queries, keys, values, output } = a.weights;
  const G = keys.length;
  const H = queries.length;
  if (a.slidingWindow !== undefined && p0 + xn.rows > a.slidingWindow) {
    throw new ValueError("ids", `at most sliding_window = ${a.slidingWindow} tokens in all`, `${p0 + xn.rows} tokens`);
  }
  assertFinite(xn, "x");
  // One product for every head's Q, K and V (fused.ts), then each head's columns.
  const t = xn.rows;
  const dQ = queries[0].cols;
  const dK = keys[0].cols;
  const dV = values[0].cols;
  const prec = projectionPrecision(options);
  const all = project(xn, qkv, "qkv", prec).data;
  const ld = qkv.cols;
  const kOff = H * dQ;
  const vOff = kOff + G * dK;
  // Biases, then RoPE, in place on the joined block (the same operations per entry as on each
  // head's own matrix); pre-RoPE copies only when captured.
  for (let h = 0; h < H; h++) addBlockBias(all, t, ld, h * dQ, a.queryBias?.[h]);
  for (let g = 0; g < G; g++) addBlockBias(all, t, ld, kOff + g * dK, a.keyBias?.[g]);
  for (let g = 0; g < G; g++) addBlockBias(all, t, ld, vOff + g * dV, a.valueBias?.[g]);
  const qPreAll = cap ? queries.map((_, h) => columnSlice(all, t, ld, h * dQ, dQ)) : undefined;
  const kPre = cap ? keys.map((_, g) => columnSlice(all, t, ld, kOff + g * dK, dK)) : undefined;
  const rope = a.rope;
  const inPlace = rope !== undefined && rope.dim === dQ && rope.dim === dK;
  if (inPlace) {
    for (let h = 0; h < H; h++) rope.rotateColumnsInPlace(all, t, ld, h * dQ, positions);
    for (let g = 0; g < G; g++) rope.rotateColumnsInPlace(all, t, ld, kOff + g * dK, positions);
  }
  // rope.apply where in place does not fit: its shape check reports a RoPE dim ≠ head dim.
  const rotate = (m: Matrix) => (rope && !inPlace ? rope.apply(m, positions) : m);
  const fast = cache instanceof KVCache && !cap && !options.attentionOverride && (rope === undefined || inPlace);
  // One decoded token on the exact cache: each head's K, V and Q as views of the joined row — the
  // cache's append copies K and V, the heads read Q at once — instead of t×w copies (a fresh small
  // Float64Array costs ≈ 0.7 µs; these were ≈ 7 % of a Llama decoding step, issue 14).
  const slice = fast && t === 1 ? rowColumns : columnSlice;
  const kNew = keys.map((_, g) => rotate(slice(all, t, ld, kOff + g * dK, dK)));
  const vNew = values.map((_, g) => slice(all, t, ld, vOff + g * dV, dV));
  if (fast) {
    // Every head straight from the joined block into concat(Y_h): no per-head copies of Q or Y, the
    // options resolved once per layer, K and V checked once (by the cache's append).
    cache.append(kNew, vNew);
    const width = H * dV;
    const concat = new Matrix(t, width, scratch("heads", t * width));
    const y = attendAllHeads(all, ld, t, H, G, dQ, dV, cache, a.scale, p0, options.precision, concat.data)
      ? concat
      : concatCols(
          attendHeads(
            queries.map((_, h) => slice(all, t, ld, h * dQ, dQ)),
            G,
            cache,
            a.scale,
            p0,
            options,
          ),
        );
    // W_O's product into the layer's reused "attnOut" buffer (no override here: see layerStep).
    return addBias(project(y, output, "attnOut", prec), a.outputBias);
  }
  // Every head's queries copied out now: `all` is a scratch buffer, and an attentionOverride
  // callback may run another forward before the later heads.
  const qHeads = queries.map((_, h) => rotate(columnSlice(all, t, ld, h * dQ, dQ)));
  const queryAt = (h: number) => qHeads[h];
  if (!(cache instanceof KVCache)) {
    // A compressed cache (issue 12) attends through its own step: queries of every head at once.
    const qs = queries.map((_, h) => queryAt(h));
    const fill = { rotation: rotationSignature(a.rope), positions };
    const kernel = { kind: "softmax" as const, scale: a.scale };
    const { outputs } = cache.step({ queries: qs, keys: kNew, values: vNew, fill, attention: { kernel, precision: options.precision } });
    if (cap && tensors.has("q")) cap.q = qs;
    return addBias(matmul(concatCols(outputs), output), a.outputBias);
  }
  cache.append(kNew, vNew);
  const kAll = Array.from({ length: G }, (_, g) => cache.keys(g));
  const vAll = Array.from({ length: G }, (_, g) => cache.values(g));
  const attnOptions = { kernel: { kind: "softmax" as const, scale: a.scale }, mask: { kind: "causal" as const, offset: p0 } };
  const heads: Matrix[] = [];
  const qRot: Matrix[] = [];
  const weights: Matrix[] = [];
  const group = H / G;
  for (let h = 0; h < H; h++) {
    const q = queryAt(h);
    const g = Math.floor(h / group); // kvHeadFor(h, H, G): contiguous groups, as HF's repeat_kv
    const over = options.attentionOverride?.({ layer, head: h, queries: q, keys: kAll[g], values: vAll[g], scale: a.scale, offset: p0 });
    heads.push(
      over
        ? checkOverride(over, q.rows, vAll[g].cols, layer, h)
        : attentionCachedKeys(q, kAll[g], vAll[g], { ...attnOptions, precision: options.precision }),
    );
    if (cap) {
      qRot.push(q);
      if (tensors.has("weights")) weights.push(attentionWeights(q, kAll[g], attnOptions));
    }
  }
  if (cap) {
    if (tensors.has("qPre")) cap.qPre = qPreAll;
    if (tensors.has("q")) cap.q = qRot;
    if (tensors.has("kPre")) cap.kPre = p0 === 0 ? kPre : undefined;
    if (tensors.has("k")) cap.k = kAll.map((k) => k.clone());
    if (tensors.has("v")) cap.v = vAll.map((v) => v.clone());
    if (tensors.has("weights")) cap.weights = weights;
  }
  return addBias(project(concatCols(heads), output, undefined, prec), a.outputBias);
}

/** Y_h = attention(Q_h, K_g, V_g) per query head h (g = ⌊h/(H/G)⌋), the cached keys of an exact cache. */
function attendHeads(q: readonly Matrix[], G: number, cache: KVCache, scale: number, p0: number, options: RunOptions): Matrix[] {
  const group = q.length / G;
  const attnOptions = {
    kernel: { kind: "softmax" as const, scale },
    mask: { kind: "causal" as const, offset: p0 },
    precision: options.precision,
  };
  // Under float32 each group's max |K_g| and max |V_g| as the cache keeps them (no rescan per head).
  const known = options.precision === "float32" ? Array.from({ length: G }, (_, g) => cache.maxAbs(g)) : undefined;
  const n = cache.length;
  const d = q[0].cols;
  if (q[0].rows === 1 && group > 1 && group < SMALL_M_ROWS && useFusedSoftmax(group, n, d) === useFusedSoftmax(1, n, d)) {
    // One token: the H/G query rows of a group attend to the same K_g and V_g, so they go through
    // ONE call — K_g and V_g read (under float32: packed) once per group instead of once per head.
    // Every row's causal limit is N_KV (p0 + r + 1 clamped, p0 = N_KV − 1); the call takes the path
    // a head's own call takes (the fused driver for both or for neither; below SMALL_M_ROWS rows
    // the few-rows kernels), whose sums are per row, so each head's row has the bits of its own
    // call (tested). Each head's query is checked first, so a non-finite one raises that call's
    // error. Only float32's decisions are joint, as in mlaStep's batched heads.
    const out: Matrix[] = [];
    for (let g = 0; g < G; g++) {
      const stacked = new Matrix(group, d);
      for (let r = 0; r < group; r++) {
        const qh = q[g * group + r];
        assertFinite(qh, "queries");
        stacked.data.set(qh.data, r * d);
      }
      const y = attentionCachedKeys(stacked, cache.keys(g), cache.values(g), attnOptions, known?.[g]);
      for (let r = 0; r < group; r++) out.push(new Matrix(1, y.cols, y.data.subarray(r * y.cols, (r + 1) * y.cols)));
    }
    return out;
  }
  return q.map((qh, h) => {
    const g = Math.floor(h / group);
    return attentionCachedKeys(qh, cache.keys(g), cache.values(g), attnOptions, known?.[g]);
  });
}

/**
 * [L | k_R] side by side, for the absorbed MLA form's keys. For an exact LatentCache the joined rows
 * are kept next to the cache and grown by the step's new rows only, instead of copying all N cached
 * rows on every decoding step (O(N·(d_L + d_R)) per layer per token, as much as the scores). The
 * cache is append-only, so the kept rows stay equal to the cache's; any mismatch in length (a
 * step that appended without the absorbed form, a failed step) rebuilds them from the cache.
 */
const joinedLatent = new WeakMap<object, RowBuffer>();
function joinedLatentKeys(cache: LatentCache | LatentDecodeCache, latent: Matrix, rotaryKey: Matrix, tNew: number): Matrix {
  if (!(cache instanceof LatentCache)) return concatCols([latent, rotaryKey]);
  const n = latent.rows;
  let kept = joinedLatent.get(cache);
  if (kept === undefined || kept.length !== n - tNew) {
    kept = new RowBuffer(latent.cols + rotaryKey.cols, Math.max(16, n));
    kept.append(concatCols([latent, rotaryKey]));
    joinedLatent.set(cache, kept);
  } else {
    kept.append(concatCols([sliceRows(latent, n - tNew), sliceRows(rotaryKey, n - tNew)]));
  }
  return kept.view();
}

/**
 * The new tokens' MLA projections through the joined weights: every head's queries side by side
 * ([nope | rope] per head, post-RoPE, in a reused scratch buffer: valid until the next step), the
 * pre-RoPE heads when asked, the normalized latent L and the rotary key k_R (pre and rotated) —
 * what `mlaQueries(mlaQueryLatent(…))`, `mlaKeyLatent` and `mlaRotaryKey` return, bit for bit, in
 * three products instead of 2H + 3.
 */
function mlaProjectJoined(
  a: MlaLayerAttention,
  j: JoinedMla,
  xn: Matrix,
  positions: Float64Array,
  keepPre: boolean,
  prec: ProjectionPrecision,
): { queries: Matrix; qPre: Matrix[]; latentNew: Matrix; rotary: { pre: Matrix; rotated: Matrix } } {
  const w = a.weights;
  const t = xn.rows;
  const H = w.queryUp.length;
  const nope = w.queryUp[0].cols;
  const dR = (w.keyRope as Matrix).cols;
  const dQ = nope + dR;
  const all = project(j.queryDownIdentity ? xn : mlaQueryLatent(xn, w), j.queryUp, "mlaQueries", prec);
  const qPre = keepPre ? Array.from({ length: H }, (_, h) => columnSlice(all.data, t, all.cols, h * dQ, dQ)) : [];
  for (let h = 0; h < H; h++) a.rope.rotateColumnsInPlace(all.data, t, all.cols, h * dQ + nope, positions);
  const dL = w.latentDown.cols;
  const kv = project(xn, j.down, "mlaDown", prec);
  const l = columnSlice(kv.data, t, kv.cols, 0, dL);
  const latentNew = w.latentNorm ? rmsNorm(l, w.latentNorm) : l;
  const pre = columnSlice(kv.data, t, kv.cols, dL, dR);
  // The pre-rotation copy only for captures (kPre); the cache keeps the rotated rows.
  const rotated = keepPre ? pre.clone() : pre;
  a.rope.rotateColumnsInPlace(rotated.data, t, dR, 0, positions);
  return { queries: all, qPre, latentNew, rotary: { pre, rotated } };
}

/** Each head's t × d_QK queries copied out of the joined [Q_0 | Q_1 | …] block. */
function queryHeads(all: Matrix, H: number): Matrix[] {
  const dQ = all.cols / H;
  return Array.from({ length: H }, (_, h) => columnSlice(all.data, all.rows, all.cols, h * dQ, dQ));
}

/** Per head K_h = [L W_LK^h | k_R] and V_h = L W_LV^h in one product (`mlaKeysValues`, same bits). */
function mlaKeysValuesJoined(
  j: JoinedMla,
  w: MlaLayerAttention["weights"],
  latent: Matrix,
  rotaryKey: Matrix,
  prec: ProjectionPrecision,
): { keys: Matrix[]; values: Matrix[] } {
  const n = latent.rows;
  const H = w.keyUp.length;
  const nope = w.keyUp[0].cols;
  const dV = w.valueUp[0].cols;
  const dR = rotaryKey.cols;
  const kv = project(latent, j.keyValueUp, "mlaKeyValueUp", prec);
  // Checked once here for every head (an exact LatentCache checked the rotary keys at append), so
  // mlaStep's heads attend through attentionCachedKeys without rescanning each K_h and V_h.
  assertFinite(kv, "keys, values (latent · [W_LK | W_LV])");
  const all = kv.data;
  const ld = j.keyValueUp.cols;
  const keys = Array.from({ length: H }, (_, h) => {
    const k = new Matrix(n, nope + dR);
    for (let i = 0; i < n; i++) {
      k.data.set(all.subarray(i * ld + h * nope, i * ld + (h + 1) * nope), i * (nope + dR));
      k.data.set(rotaryKey.data.subarray(i * dR, (i + 1) * dR), i * (nope + dR) + nope);
    }
    return k;
  });
  const values = Array.from({ length: H }, (_, h) => columnSlice(all, n, ld, H * nope + h * dV, dV));
  return { keys, values };
}

/**
 * All H heads of an MLA layer (exact latent cache, decoupled RoPE, unmerged form) on the fused
 * softmax driver in one pass — the computation of mlaKeysValuesJoined + one `attentionCachedKeys`
 * per head, so the same bits, without the per-head query slices, K_h/V_h matrices, output
 * matrices, concatenation, per-call option resolution and query scans:
 * - queries read in place from the joined [q_nope,h | q_rope,h]_h block (`queryStride`);
 * - [L W_LK^h]_h | [L W_LV^h]_h in one product (checked finite once per layer, as before), then
 *   K_h = [L W_LK^h | k_R] and V_h assembled head after head into two reused buffers in one flat
 *   pass (each head's keys and values contiguous, as the driver packs them);
 * - Y_h written into columns h·d_V … of one reused t × H·d_V buffer (`outStride`).
 * `undefined` when the fused path does not apply or a row needs attention's error path (a
 * non-finite logit, e.g. non-finite queries): the caller then runs the per-head calls, which raise
 * the same errors as before. The float32 option falls back to float64 per head exactly as
 * `float32Attention` does (a non-finite Y or normalizer, or operands outside float32's safe range).
 */
function mlaAttendAllHeads(
  j: JoinedMla,
  w: MlaLayerAttention["weights"],
  queries: Matrix,
  latent: Matrix,
  rotaryKey: Matrix,
  scale: number,
  p0: number,
  precision: RunOptions["precision"],
  prec: ProjectionPrecision,
): Matrix | undefined {
  const t = queries.rows;
  const n = latent.rows;
  const H = w.keyUp.length;
  const nope = w.keyUp[0].cols;
  const dV = w.valueUp[0].cols;
  const dR = rotaryKey.cols;
  const dQ = nope + dR;
  if (queries.cols !== H * dQ || !useFusedSoftmax(t, n, dQ)) return undefined;
  const r = resolveAttention({ kernel: { kind: "softmax", scale }, mask: { kind: "causal", offset: p0 }, precision }, t, n, dQ);
  if (r.kernel.kind !== "softmax") return undefined;
  const kv = project(latent, j.keyValueUp, "mlaKeyValueUp", prec);
  const src = kv.data;
  const ld = kv.cols;
  const rk = rotaryKey.data;
  const keys = scratch("mlaKeys", H * n * dQ);
  const values = scratch("mlaValues", H * n * dV);
  // Per head max |K_h| and max |V_h| while assembling them (NaN or ∞ when an entry is, like
  // maxAbsOf): every entry of the product is copied once, so its finiteness check (done once per
  // layer, as before) and float32's range check come from these maxima instead of rescans.
  const kMax = new Float64Array(H);
  const vMax = new Float64Array(H);
  for (let h = 0; h < H; h++) {
    const kBase = h * n * dQ;
    const vBase = h * n * dV;
    const kCol = h * nope;
    const vCol = H * nope + h * dV;
    let km = 0;
    let vm = 0;
    for (let i = 0; i < n; i++) {
      const s = i * ld;
      const k = kBase + i * dQ;
      for (let c = 0; c < nope; c++) {
        const x = src[s + kCol + c];
        keys[k + c] = x;
        km = Math.max(km, Math.abs(x));
      }
      for (let c = 0, o = i * dR; c < dR; c++) {
        const x = rk[o + c];
        keys[k + nope + c] = x;
        km = Math.max(km, Math.abs(x));
      }
      const v = vBase + i * dV;
      for (let c = 0; c < dV; c++) {
        const x = src[s + vCol + c];
        values[v + c] = x;
        vm = Math.max(vm, Math.abs(x));
      }
    }
    kMax[h] = km;
    vMax[h] = vm;
  }
  for (let h = 0; h < H; h++) {
    // A non-finite entry: the scan names the first one, as before (the rotary keys were checked at append).
    if (!(Number.isFinite(kMax[h]) && Number.isFinite(vMax[h]))) assertFinite(kv, "keys, values (latent · [W_LK | W_LV])");
  }
  const width = H * dV;
  const y = new Matrix(t, width, scratch("heads", t * width));
  const qd = queries.data;
  const ldQ = queries.cols;
  const f32 = r.precision === "float32";
  for (let h = 0; h < H; h++) {
    let inFloat32Range = false;
    if (f32) {
      let qm = 0;
      for (let i = 0; i < t; i++) for (let c = 0, o = i * ldQ + h * dQ; c < dQ; c++) qm = Math.max(qm, Math.abs(qd[o + c]));
      inFloat32Range = attentionMaximaInFloat32Range(qm, kMax[h], vMax[h], n, dQ, r.kernel.scale);
    }
    const spec: FusedSoftmaxSpec = {
      queries: qd.subarray(h * dQ),
      queryStride: ldQ,
      keys: keys.subarray(h * n * dQ, (h + 1) * n * dQ),
      values: values.subarray(h * n * dV, (h + 1) * n * dV),
      nQ: t,
      nKV: n,
      d: dQ,
      dV,
      scale: r.kernel.scale,
      mask: r.mask,
      out: y.data.subarray(h * dV),
      outStride: width,
      precision: f32 ? "float32" : "float64",
      inFloat32Range,
    };
    let stats = fusedSoftmaxAttention(spec);
    // float32's fallback (rows.ts float32Attention): a non-finite Y or normalizer → float64.
    if (f32 && stats !== null && !(rowsFinite(stats.normalizer) && columnsFinite(y.data, t, width, h * dV, dV))) {
      spec.precision = "float64";
      stats = fusedSoftmaxAttention(spec);
    }
    if (stats === null || !rowsFinite(stats.normalizer)) return undefined;
  }
  return y;
}

function mlaStep(
  a: MlaLayerAttention,
  joined: JoinedMla | undefined,
  cache: LatentCache | LatentDecodeCache,
  xn: Matrix,
  positions: Float64Array,
  p0: number,
  options: RunOptions,
  cap: LayerCapture | undefined,
  tensors: ReadonlySet<CaptureTensor>,
  layer: number,
): Matrix {
  const w = a.weights;
  let qPre: Matrix[];
  let q: Matrix[] | undefined;
  let joinedQueries: Matrix | undefined;
  let latentNew: Matrix;
  let rotary: { pre: Matrix; rotated: Matrix };
  if (joined) {
    assertFinite(xn, "x");
    ({
      queries: joinedQueries,
      qPre,
      latentNew,
      rotary,
    } = mlaProjectJoined(a, joined, xn, positions, cap !== undefined, projectionPrecision(options)));
  } else {
    ({ pre: qPre, rotated: q } = mlaQueries(mlaQueryLatent(xn, w), w, a.rope, positions));
    latentNew = mlaKeyLatent(xn, w);
    rotary = mlaRotaryKey(xn, w, a.rope, positions);
  }
  // The latent cache holds L (after kv_a_layernorm) and the rotated k_R: d_L + d_R floats per token.
  if (cache instanceof LatentCache) cache.append(latentNew, rotary.rotated);
  else cache.append(latentNew, rotary.rotated, { rotation: rotationSignature(a.rope), positions });
  const latent = cache.latent();
  const rotaryKey = cache.rotaryKeys();
  const attnOptions = { kernel: { kind: "softmax" as const, scale: a.scale }, mask: { kind: "causal" as const, offset: p0 } };
  const form = options.mlaForm ?? "unmerged";
  if (form !== "unmerged" && form !== "absorbed") throw new ValueError("options.mlaForm", '"unmerged" or "absorbed"', describe(form));
  const H = w.queryUp.length;
  if (form === "unmerged" && joinedQueries && rotaryKey && cache instanceof LatentCache && !cap && !options.attentionOverride) {
    // Every head in one pass from the joined blocks (the prefill's path); undefined: per-head calls below.
    const prec = projectionPrecision(options);
    const y = mlaAttendAllHeads(joined as JoinedMla, w, joinedQueries, latent, rotaryKey, a.scale, p0, options.precision, prec);
    // W_O's product into the layer's reused "attnOut" buffer (no override here: see layerStep).
    if (y) return project(y, w.output, "attnOut", prec);
  }
  // Per-head copies of the queries (before any attention call): the joined block is a scratch
  // buffer, and an attentionOverride callback may run another forward before the later heads.
  const headQueries = (): Matrix[] => q ?? queryHeads(joinedQueries as Matrix, H);
  if (form === "absorbed" && !cap && !options.attentionOverride) {
    // ⟨q_h, [L W_LK^h | k_R]⟩ = ⟨[q_h,nope (W_LK^h)ᵀ | q_R,h], [L | k_R]⟩ and P V_h = (P L) W_LV^h (§4.2).
    const nope = w.queryUp[0].cols;
    const keysL = rotaryKey ? joinedLatentKeys(cache, latent, rotaryKey, xn.rows) : latent;
    const absorbedQuery = (qh: Matrix, h: number) => {
      const qNope = rotaryKey ? sliceCols(qh, 0, nope) : qh;
      const qAbs = matmulTransB(qNope, w.keyUp[h]);
      return rotaryKey ? concatCols([qAbs, sliceCols(qh, nope)]) : qAbs;
    };
    const run = { ...attnOptions, precision: options.precision };
    if (xn.rows === 1 && H > 1 && cache instanceof LatentCache && useFusedSoftmax(1, keysL.rows, keysL.cols)) {
      // One token: every head's query row attends to all N_KV rows of the same [L | k_R] and L, so
      // the H rows go through ONE attention call — the keys and values packed (and, under float32,
      // scanned for the range decision) once per layer instead of once per head (issue 14: ≈ ⅓ of
      // a DeepSeek float32 decoding step). The causal limit of every row is N_KV (row i's limit
      // p0 + i + 1 clamped to N_KV, p0 = N_KV − 1), and the fused driver computes each row as in a
      // call of its own (same limits, same products, same exp pass), so each head's row has the
      // bits of the per-head call. Each head's query is checked first, so a non-finite one raises
      // the per-head call's error. Only float32's decisions are joint: one head's queries outside
      // float32's safe range, or one non-finite float32 output, send every head of the layer to
      // float64 (at least as accurate).
      // Only where one head's call would take the fused driver too (below its work threshold the
      // per-head calls keep their JavaScript path, whose bits differ).
      // absorbedQuery's products and copies written straight into row h of the stacked queries, from
      // the head's query row in place (no override can run in between), and P_h L W_LV^h straight
      // into columns of one row: the same kernels on the same operands (matmulTransB's and
      // matmul's), without ≈ 4H small matrices per layer (issue 14: ≈ 10 % of a decoding step).
      const dq = keysL.cols;
      const stacked = new Matrix(H, dq);
      const width = q ? q[0].cols : (joinedQueries as Matrix).cols / H;
      for (let h = 0; h < H; h++) {
        const qh = q ? q[h].data : (joinedQueries as Matrix).data.subarray(h * width, (h + 1) * width);
        const row = stacked.data.subarray(h * dq, (h + 1) * dq);
        const up = w.keyUp[h];
        matmulTransBInto(qh.subarray(0, nope), up.data, row, 1, nope, up.rows);
        if (rotaryKey) row.set(qh.subarray(nope), up.rows);
        assertFinite(new Matrix(1, dq, row), "queries");
      }
      const y = attentionCachedKeys(stacked, keysL, latent, run);
      const dL = y.cols;
      let dV = 0;
      for (const v of w.valueUp) dV += v.cols;
      const concat = new Matrix(1, dV);
      for (let h = 0, c0 = 0; h < H; c0 += w.valueUp[h].cols, h++) {
        const v = w.valueUp[h];
        matmulInto(y.data.subarray(h * dL, (h + 1) * dL), v.data, concat.data.subarray(c0, c0 + v.cols), 1, dL, v.cols, false);
      }
      // W_O by `project` (matmul's float64 bits): one row runs on the resident panels (residentGemv.ts).
      return project(concat, w.output);
    }
    const qHeads = headQueries();
    const heads = qHeads.map((qh, h) => {
      // The exact LatentCache checked every row at append; a compressed cache's rows are rechecked.
      const attend = cache instanceof LatentCache ? attentionCachedKeys : runAttention;
      return matmul(attend(absorbedQuery(qh, h), keysL, latent, run), w.valueUp[h]);
    });
    return project(concatCols(heads), w.output);
  }
  const qHeads = headQueries();
  const { keys, values } =
    joined && rotaryKey
      ? mlaKeysValuesJoined(joined, w, latent, rotaryKey, projectionPrecision(options))
      : mlaKeysValues(latent, rotaryKey, w);
  const heads = qHeads.map((qh, h) => {
    const over = options.attentionOverride?.({ layer, head: h, queries: qh, keys: keys[h], values: values[h], scale: a.scale, offset: p0 });
    return over
      ? checkOverride(over, qh.rows, values[h].cols, layer, h)
      : (joined && rotaryKey && cache instanceof LatentCache ? attentionCachedKeys : runAttention)(qh, keys[h], values[h], {
          ...attnOptions,
          precision: options.precision,
        });
  });
  if (cap) {
    if (tensors.has("qPre")) cap.qPre = qPre;
    if (tensors.has("q")) cap.q = qHeads;
    if (tensors.has("kPre")) cap.kPre = p0 === 0 ? mlaKeysValues(latent, rotary.pre, w).keys : undefined;
    if (tensors.has("k")) cap.k = keys;
    if (tensors.has("v")) cap.v = values;
    if (tensors.has("weights")) cap.weights = qHeads.map((qh, h) => attentionWeights(qh, keys[h], attnOptions));
    if (tensors.has("latent")) cap.latent = latent.clone();
    if (tensors.has("rotaryKey") && rotaryKey) cap.rotaryKey = rotaryKey.clone();
  }
  return project(concatCols(heads), w.output, undefined, joined ? projectionPrecision(options) : "float64");
}
