/**
 * TurboQuant-style cache (Zandieh, Daliri, Hadian & Mirrokni 2025, arXiv 2504.19874): a random
 * orthogonal rotation Π makes every coordinate of a unit vector ≈ N(0, 1/p) whatever the input
 * (§3.1: the coordinates of Πx/‖x‖ follow a scaled Beta law that tends to the Gaussian), so one
 * fixed scalar codebook serves every coordinate with no per-block scales.
 *
 * Keys (TurboQuant_prod, §3.2): y = Π k/‖k‖ is quantized per coordinate at b − 1 bits (the
 * Gaussian-optimal uniform quantizer of quantize.ts), and the residual r = y − ŷ gets 1-bit QJL
 * (signs of S r, S ∈ R^{p×p} Gaussian) so the inner-product estimate
 *   ⟨q, k⟩ ≈ ‖k‖ (⟨Πq, ŷ⟩ + ‖r‖ √(π/2)/p ⟨S Π q, sign(S r)⟩)
 * is unbiased (the MSE quantizer alone biases inner products). With `residual: false` all b bits
 * go to the MSE quantizer. Values (TurboQuant_mse): v̂ = ‖v‖ Π_Vᵀ Q(Π_V v/‖v‖) at `valueBits`;
 * attention sums ‖v_j‖ Q(·)_j in the rotated domain and rotates back once per query.
 *
 * Rotations: `"haar"` — Π = Q·diag(sign R) of the QR of a Gaussian matrix (Haar-distributed,
 * stored as p² floats); `"srht"` — Π = H D/√p (the project's Walsh–Hadamard transform, D random
 * signs, p = d rounded up to a power of two, stored as p sign bits). Both are counted in the bits.
 */
import { Matrix, RandomStream, type SeedKey, ValueError, derive } from "@randattn/core";
import { assertOneOf } from "@randattn/core/internal";
import { householderQr } from "../lowrank/householder.js";
import { fwhtInPlace } from "../operators/fwht.js";
import { type AttentionPart, CompressedKvCache, type KvCacheShape, checkShape, partFromLogits, rowOf } from "./base.js";
import { gaussianMatrix, packSigns, projectVector, signedDot } from "./qjl.js";
import { PackedCodes, checkBits, gaussianOptimalStep, symmetricCode, symmetricLevels } from "./quantize.js";

/** The random rotation of a TurboQuant-style cache. */
export type RotationKind = "haar" | "srht";

/** Options of the `turbo-quant` cache. */
export interface TurboQuantOptions extends KvCacheShape {
  /** Bits per key coordinate: b − 1 for the MSE quantizer + 1 for the QJL residual (or all b without it); 1–8 (≥ 2 with the residual). @default 4 */
  bits?: number;
  /** Bits per value coordinate (MSE quantizer, no residual), 1–8. @default bits */
  valueBits?: number;
  /** Random rotation. @default "haar" */
  rotation?: RotationKind;
  /** 1-bit QJL on the key residual (unbiased inner products). @default true */
  residual?: boolean;
}

/** A random orthogonal map R^d → R^p (p = d for Haar, the next power of two for SRHT). */
export class RandomRotation {
  readonly kind: RotationKind;
  readonly dim: number;
  readonly paddedDim: number;
  private readonly matrix: Matrix | undefined;
  private readonly signs: PackedCodes | undefined;

  constructor(kind: RotationKind, dim: number, seed: SeedKey) {
    this.kind = kind;
    this.dim = dim;
    if (kind === "haar") {
      this.paddedDim = dim;
      const { q, r } = householderQr(gaussianMatrix(dim, dim, derive(seed, "haar")));
      // Q·diag(sign R_ii) is Haar-distributed (Mezzadri 2007); Π = that matrix transposed (rows = columns of Q).
      const m = new Matrix(dim, dim);
      for (let i = 0; i < dim; i++) {
        const s = r.data[i * dim + i] < 0 ? -1 : 1;
        for (let j = 0; j < dim; j++) m.data[i * dim + j] = s * q.data[j * dim + i];
      }
      this.matrix = m;
    } else {
      let p = 1;
      while (p < dim) p *= 2;
      this.paddedDim = p;
      const stream = new RandomStream(derive(seed, "srht", "signs"));
      const signs = new PackedCodes(p, 1);
      for (let i = 0; i < p; i++) if (stream.sign() > 0) signs.set(i, 1);
      this.signs = signs;
    }
  }

  /** Π x (p entries). */
  apply(x: ArrayLike<number>): Float64Array {
    if (this.matrix) return projectVector(this.matrix, x);
    const p = this.paddedDim;
    const y = new Float64Array(p);
    const s = this.signs as PackedCodes;
    for (let i = 0; i < this.dim; i++) y[i] = s.get(i) ? x[i] : -x[i];
    fwhtInPlace(y);
    const c = 1 / Math.sqrt(p);
    for (let i = 0; i < p; i++) y[i] *= c;
    return y;
  }

  /** Πᵀ y (d entries). */
  applyTranspose(y: ArrayLike<number>): Float64Array {
    const d = this.dim;
    if (this.matrix) {
      const out = new Float64Array(d);
      for (let i = 0; i < d; i++) for (let j = 0; j < d; j++) out[j] += this.matrix.data[i * d + j] * y[i];
      return out;
    }
    const p = this.paddedDim;
    const z = Float64Array.from(y);
    fwhtInPlace(z);
    const c = 1 / Math.sqrt(p);
    const s = this.signs as PackedCodes;
    const out = new Float64Array(d);
    for (let i = 0; i < d; i++) out[i] = (s.get(i) ? z[i] : -z[i]) * c;
    return out;
  }

  /** Flops of one application. */
  get flops(): number {
    return this.matrix ? 2 * this.dim * this.dim : this.paddedDim * Math.log2(this.paddedDim) + 2 * this.paddedDim;
  }

  buffers(): ArrayBufferView[] {
    return this.matrix ? [this.matrix.data] : [(this.signs as PackedCodes).bytes];
  }
}

/** A unit vector's rotated coordinates quantized at b bits with step Δ_b/√p. */
function quantizeRotated(y: Float64Array, bits: number): PackedCodes {
  const step = gaussianOptimalStep(bits) / Math.sqrt(y.length);
  const codes = new PackedCodes(y.length, bits);
  for (let i = 0; i < y.length; i++) codes.set(i, symmetricCode(y[i], step, bits));
  return codes;
}

function dequantizeRotated(codes: PackedCodes, bits: number): Float64Array {
  return symmetricLevels(codes, gaussianOptimalStep(bits) / Math.sqrt(codes.count));
}

function unit(x: Float64Array): { norm: number; unit: Float64Array } {
  let s = 0;
  for (const v of x) s += v * v;
  const norm = Math.sqrt(s);
  return { norm, unit: norm > 0 ? x.map((v) => v / norm) : x.slice() };
}

interface TurboKey {
  codes: PackedCodes;
  residualSigns: PackedCodes | undefined;
  /** ‖k‖, ‖r‖ */
  norms: Float64Array;
}

export class TurboQuantCache extends CompressedKvCache {
  readonly kind = "turbo-quant";
  readonly bits: number;
  readonly valueBits: number;
  readonly residual: boolean;
  readonly keyRotation: RandomRotation;
  readonly valueRotation: RandomRotation;
  /** S (p×p) of the 1-bit residual, when `residual`. */
  readonly residualProjection: Matrix | undefined;
  private readonly keys: TurboKey[][];
  private readonly valueCodes: PackedCodes[][];
  private readonly valueNorms: number[][];
  // Diagnostics for the experiments (not cache state, not counted): Σ‖y − ŷ‖² of the MSE stage and the key count.
  private distortionSum = 0;
  private distortionCount = 0;

  constructor(options: TurboQuantOptions, seed: SeedKey) {
    const shape = checkShape(options, "turbo-quant");
    super(shape);
    const residual = options.residual ?? true;
    if (typeof residual !== "boolean") throw new ValueError("options.residual", "a boolean", String(residual));
    this.residual = residual;
    this.bits = checkBits(options.bits ?? 4, "options.bits", residual ? 2 : 1);
    this.valueBits = checkBits(options.valueBits ?? this.bits, "options.valueBits");
    const rotation = options.rotation ?? "haar";
    assertOneOf(rotation, "options.rotation", ["haar", "srht"] as const);
    this.keyRotation = new RandomRotation(rotation, shape.keyDim, derive(seed, "turbo", "keys"));
    this.valueRotation = new RandomRotation(rotation, shape.valueDim, derive(seed, "turbo", "values"));
    const p = this.keyRotation.paddedDim;
    this.residualProjection = residual ? gaussianMatrix(p, p, derive(seed, "turbo", "residual")) : undefined;
    this.keys = Array.from({ length: shape.numKvHeads }, () => []);
    this.valueCodes = Array.from({ length: shape.numKvHeads }, () => []);
    this.valueNorms = Array.from({ length: shape.numKvHeads }, () => []);
  }

  private get mseBits(): number {
    return this.residual ? this.bits - 1 : this.bits;
  }

  /** The estimate of ⟨q, k_j⟩ from Π q (and S Π q) for a stored key (module doc). */
  private estimate(rq: Float64Array, srq: Float64Array | undefined, key: TurboKey): number {
    const yhat = dequantizeRotated(key.codes, this.mseBits);
    let dot = 0;
    for (let i = 0; i < yhat.length; i++) dot += rq[i] * yhat[i];
    if (srq && key.residualSigns) dot += key.norms[1] * (Math.sqrt(Math.PI / 2) / srq.length) * signedDot(srq, key.residualSigns);
    return key.norms[0] * dot;
  }

  /** Mean ‖y − ŷ‖² over the keys folded so far (y = Πk/‖k‖, ŷ its MSE-stage quantization): TurboQuant's D_mse, ≥ 4^(−b) for b bits. */
  meanKeyDistortion(): number {
    return this.distortionCount === 0 ? Number.NaN : this.distortionSum / this.distortionCount;
  }

  /** The estimates of ⟨q, k_j⟩ for every key j stored for head g (module doc). */
  keyInnerProducts(g: number, query: ArrayLike<number>): Float64Array {
    const rq = this.keyRotation.apply(query);
    const srq = this.residualProjection ? projectVector(this.residualProjection, rq) : undefined;
    return Float64Array.from(this.keys[g], (k) => this.estimate(rq, srq, k));
  }

  protected storedPart(g: number, queries: Matrix, scale: number): AttentionPart {
    const keys = this.keys[g];
    const n = keys.length;
    const t = queries.rows;
    const p = this.keyRotation.paddedDim;
    const logits = new Float64Array(t * n);
    for (let i = 0; i < t; i++) {
      const rq = this.keyRotation.apply(rowOf(queries, i));
      const srq = this.residualProjection ? projectVector(this.residualProjection, rq) : undefined;
      for (let j = 0; j < n; j++) logits[i * n + j] = scale * this.estimate(rq, srq, keys[j]);
    }
    // Values in the rotated domain: ‖v_j‖·Q(Π_V v_j/‖v_j‖); Π_Vᵀ applied once per query row.
    const pv = this.valueRotation.paddedDim;
    const rotated = new Float64Array(n * pv);
    for (let j = 0; j < n; j++) {
      const y = dequantizeRotated(this.valueCodes[g][j], this.valueBits);
      const s = this.valueNorms[g][j];
      for (let c = 0; c < pv; c++) rotated[j * pv + c] = s * y[c];
    }
    const part = partFromLogits(logits, t, n, rotated, pv);
    const num = new Float64Array(t * this.valueDim);
    for (let i = 0; i < t; i++) num.set(this.valueRotation.applyTranspose(part.num.subarray(i * pv, (i + 1) * pv)), i * this.valueDim);
    part.num = num;
    part.flops +=
      t * (this.keyRotation.flops + (this.residualProjection ? 2 * p * p : 0) + n * 4 * p + this.valueRotation.flops) + n * 2 * pv;
    return part;
  }

  protected fold(g: number, keys: Matrix, values: Matrix): number {
    for (let i = 0; i < keys.rows; i++) {
      const { norm, unit: u } = unit(rowOf(keys, i));
      const y = this.keyRotation.apply(u);
      const codes = quantizeRotated(y, this.mseBits);
      const yq = dequantizeRotated(codes, this.mseBits);
      let dist = 0;
      for (let c = 0; c < y.length; c++) dist += (y[c] - yq[c]) ** 2;
      this.distortionSum += dist;
      this.distortionCount += 1;
      const norms = new Float64Array(this.residualProjection ? 2 : 1);
      norms[0] = norm;
      let residualSigns: PackedCodes | undefined;
      if (this.residualProjection) {
        const yhat = dequantizeRotated(codes, this.mseBits);
        const r = y.map((v, c) => v - yhat[c]);
        let s = 0;
        for (const v of r) s += v * v;
        norms[1] = Math.sqrt(s);
        residualSigns = packSigns(projectVector(this.residualProjection, r));
      }
      this.keys[g].push({ codes, residualSigns, norms });
      const v = unit(rowOf(values, i));
      this.valueCodes[g].push(quantizeRotated(this.valueRotation.apply(v.unit), this.valueBits));
      this.valueNorms[g].push(v.norm);
    }
    const p = this.keyRotation.paddedDim;
    return keys.rows * (this.keyRotation.flops + this.valueRotation.flops + (this.residualProjection ? 2 * p * p : 0) + 6 * p);
  }

  buffers(): ArrayBufferView[] {
    const out: ArrayBufferView[] = [...this.keyRotation.buffers(), ...this.valueRotation.buffers()];
    if (this.residualProjection) out.push(this.residualProjection.data);
    for (let g = 0; g < this.numKvHeads; g++) {
      for (const k of this.keys[g]) {
        out.push(k.codes.bytes, k.norms);
        if (k.residualSigns) out.push(k.residualSigns.bytes);
      }
      out.push(...this.valueCodes[g].map((c) => c.bytes));
      if (this.valueNorms[g].length > 0) out.push(Float64Array.from(this.valueNorms[g]));
    }
    return out;
  }
}
