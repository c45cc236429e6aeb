/**
 * Online compression of the MLA latent (§4.2; issue 12 item 7): the latent rows L (N×d_L) are kept
 * as a rank-r truncated SVD L̃ = W diag(σ) Uᵀ updated as tokens arrive — the incremental SVD of
 * Brand (2006, "Fast low-rank modifications of the thin SVD"), truncated after every append:
 *
 *   X new rows (t×d_L):  P = X U,  E = X − P Uᵀ = Kᵀ Jᵀ (QR of Eᵀ, J ⟂ U),
 *   [L̃; X] = [[W, 0], [0, I]] · [[diag σ, 0], [P, Kᵀ]] · [U J]ᵀ,
 * so one SVD of the small (r + t)×(r + t) core A Σ' Bᵀ gives W ← [[W,0],[0,I]]A, U ← [U J]B, σ ← Σ',
 * truncated to r. It stores r floats per token (W) plus U (d_L×r) and σ, instead of d_L per token;
 * it pays off while r·(N + d_L) < N·d_L. The one-shot randomized SVD of lowrank/mla.ts
 * (`compressLatent`) is the offline reference it is compared with. With r ≥ min(N, d_L) nothing is
 * truncated and L̃ = L to rounding. The decoupled rotary keys (d_R per token) are kept exactly.
 * Deterministic (no random draw): the seed is unused, as the contract still asks for one.
 */
import {
  type FillRecord,
  type LatentDecodeCache,
  LatentCache,
  Matrix,
  type PositionalFill,
  type SeedKey,
  ShapeError,
  ValueError,
  checkFill,
} from "@randattn/core";
import {
  assertFinite,
  assertInteger,
  assertNonEmpty,
  assertShape,
  describe,
  sequentialMatmulInto,
  transposeInto,
} from "@randattn/core/internal";
import { householderQr } from "../lowrank/householder.js";
import { exactSvd } from "../lowrank/svd.js";

/** Options of the `online-svd` latent cache. */
export interface OnlineLatentOptions {
  /** d_L */
  latentDim: number;
  /** d_R of the shared rotary key (0 without). @default 0 */
  ropeDim?: number;
  /** r, the rank kept. */
  rank: number;
}

export class OnlineLatentCache implements LatentDecodeCache {
  readonly kind = "online-svd";
  readonly latentDim: number;
  readonly ropeDim: number;
  readonly rank: number;
  /** W (N×k), σ (k), U (d_L×k), k ≤ rank. */
  private w = new Matrix(0, 0);
  private sigma = new Float64Array(0);
  private u = new Matrix(0, 0);
  private rotary: Float64Array[] = [];
  private record: FillRecord | undefined = undefined;
  /** Flops of the last append. */
  lastFlops = 0;

  constructor(options: OnlineLatentOptions) {
    if (options === null || typeof options !== "object") throw new ValueError("options", "{ latentDim, rank }", describe(options));
    assertInteger(options.latentDim, "options.latentDim");
    const ropeDim = options.ropeDim ?? 0;
    assertInteger(ropeDim, "options.ropeDim", 0);
    assertInteger(options.rank, "options.rank");
    this.latentDim = options.latentDim;
    this.ropeDim = ropeDim;
    this.rank = options.rank;
  }

  get length(): number {
    return this.w.rows;
  }

  get fill(): FillRecord | undefined {
    return this.record;
  }

  append(latent: Matrix, rotaryKeys?: Matrix, fill?: PositionalFill): void {
    assertShape(latent, "latent", undefined, this.latentDim, "cols = latentDim");
    assertNonEmpty(latent, "latent");
    assertFinite(latent, "latent");
    if (this.ropeDim > 0) {
      if (rotaryKeys === undefined) throw new ShapeError("rotaryKeys", `${latent.rows}×${this.ropeDim}`, "undefined");
      assertShape(rotaryKeys, "rotaryKeys", latent.rows, this.ropeDim, "rows = latent.rows, cols = ropeDim");
      assertFinite(rotaryKeys, "rotaryKeys");
    } else if (rotaryKeys !== undefined) {
      throw new ShapeError("rotaryKeys", "undefined (cache has ropeDim 0)", describe(rotaryKeys));
    }
    const t = latent.rows;
    const start = this.record === undefined ? this.length : Math.floor(this.record.lastPosition) + 1;
    const record = checkFill(
      this.record,
      fill ?? { rotation: this.record?.rotation ?? "none", positions: Float64Array.from({ length: t }, (_, i) => start + i) },
      t,
    );
    // Chunks of at most d_L rows (the QR of Eᵀ needs d_L ≥ rows).
    let flops = 0;
    for (let r0 = 0; r0 < t; r0 += this.latentDim) {
      const rows = Math.min(this.latentDim, t - r0);
      flops += this.update(new Matrix(rows, this.latentDim, latent.data.slice(r0 * this.latentDim, (r0 + rows) * this.latentDim)));
    }
    if (rotaryKeys) for (let i = 0; i < t; i++) this.rotary.push(rotaryKeys.data.slice(i * this.ropeDim, (i + 1) * this.ropeDim));
    this.record = record;
    this.lastFlops = flops;
  }

  private update(x: Matrix): number {
    const dL = this.latentDim;
    const k = this.sigma.length;
    const t = x.rows;
    const n = this.w.rows;
    // P = X U (t×k), E = X − P Uᵀ (t×d_L).
    const p = new Float64Array(t * k);
    const e = Float64Array.from(x.data);
    for (let i = 0; i < t; i++)
      for (let a = 0; a < k; a++) {
        let s = 0;
        for (let c = 0; c < dL; c++) s += x.data[i * dL + c] * this.u.data[c * k + a];
        p[i * k + a] = s;
        for (let c = 0; c < dL; c++) e[i * dL + c] -= s * this.u.data[c * k + a];
      }
    // Eᵀ = J K (J d_L×t orthonormal, K t×t upper triangular).
    const et = new Matrix(dL, t);
    for (let i = 0; i < t; i++) for (let c = 0; c < dL; c++) et.data[c * t + i] = e[i * dL + c];
    const { q: J, r: K } = householderQr(et);
    // Core (k+t)×(k+t) = [[diag σ, 0], [P, Kᵀ]].
    const m = k + t;
    const core = new Matrix(m, m);
    for (let a = 0; a < k; a++) core.data[a * m + a] = this.sigma[a];
    for (let i = 0; i < t; i++) {
      for (let a = 0; a < k; a++) core.data[(k + i) * m + a] = p[i * k + a];
      for (let j = 0; j < t; j++) core.data[(k + i) * m + k + j] = K.data[j * t + i];
    }
    const svd = exactSvd(core);
    let keep = 0;
    while (keep < Math.min(this.rank, m) && svd.S[keep] > 0) keep++;
    keep = Math.max(1, keep);
    // W' = [[W, 0], [0, I]] A[:, :keep]  ((n+t)×keep). Both products below are O(n·k·keep) and
    // O(d_L·m·keep) per appended token — most of a decode's time in JavaScript (issue 14: 69 % and
    // 26 % of the latent-online sweep's `update`). sequentialMatmulInto sums each entry as the
    // literal loop s = 0; s += …, p = 0…k−1 did, so the committed results keep their bits.
    const w2 = new Matrix(n + t, keep);
    if (n > 0) {
      const top = new Float64Array(k * keep); // A[:k, :keep]
      for (let a = 0; a < k; a++) top.set(svd.U.data.subarray(a * m, a * m + keep), a * keep);
      sequentialMatmulInto(this.w.data, top, w2.data, n, k, keep);
    }
    for (let i = 0; i < t; i++) for (let b = 0; b < keep; b++) w2.data[(n + i) * keep + b] = svd.U.data[(k + i) * m + b];
    // U' = [U J] B[:, :keep]  (d_L×keep); B = Vtᵀ: one sum over the m = k + t columns of [U J], U's first.
    const uj = new Float64Array(dL * m);
    for (let c = 0; c < dL; c++) {
      uj.set(this.u.data.subarray(c * k, (c + 1) * k), c * m);
      uj.set(J.data.subarray(c * t, (c + 1) * t), c * m + k);
    }
    const bt = new Float64Array(m * keep); // Vt[:keep, :]ᵀ
    transposeInto(svd.Vt.data.subarray(0, keep * m), bt, keep, m);
    const u2 = new Matrix(dL, keep);
    sequentialMatmulInto(uj, bt, u2.data, dL, m, keep);
    this.w = w2;
    this.u = u2;
    this.sigma = svd.S.slice(0, keep);
    return 4 * t * k * dL + 2 * dL * t * t + 20 * m * m * m + 2 * (n + t) * m * keep + 2 * dL * m * keep;
  }

  /** L̃ = W diag(σ) Uᵀ (length×d_L): the latent rows attention reads. */
  latent(): Matrix {
    const n = this.length;
    const k = this.sigma.length;
    const dL = this.latentDim;
    const out = new Matrix(n, dL);
    for (let i = 0; i < n; i++)
      for (let a = 0; a < k; a++) {
        const s = this.w.data[i * k + a] * this.sigma[a];
        for (let c = 0; c < dL; c++) out.data[i * dL + c] += s * this.u.data[c * k + a];
      }
    return out;
  }

  rotaryKeys(): Matrix | undefined {
    if (this.ropeDim === 0) return undefined;
    const out = new Matrix(this.rotary.length, this.ropeDim);
    for (let i = 0; i < this.rotary.length; i++) out.data.set(this.rotary[i], i * this.ropeDim);
    return out;
  }

  /** The factors of L̃ = factor · basis: factor = W diag(σ) (length×k), basis = Uᵀ (k×d_L). */
  factors(): { factor: Matrix; basis: Matrix } {
    const n = this.length;
    const k = this.sigma.length;
    const dL = this.latentDim;
    const factor = new Matrix(n, k);
    for (let i = 0; i < n; i++) for (let a = 0; a < k; a++) factor.data[i * k + a] = this.w.data[i * k + a] * this.sigma[a];
    const basis = new Matrix(k, dL);
    for (let a = 0; a < k; a++) for (let c = 0; c < dL; c++) basis.data[a * dL + c] = this.u.data[c * k + a];
    return { factor, basis };
  }

  /** The kept singular values σ. */
  singularValues(): Float64Array {
    return this.sigma.slice();
  }

  buffers(): ArrayBufferView[] {
    return [this.w.data, this.sigma, this.u.data, ...this.rotary];
  }

  floatsStored(): number {
    return this.buffers().reduce((s, b) => s + (b as Float64Array).length, 0);
  }

  bitsStored(): number {
    return this.buffers().reduce((s, b) => s + b.byteLength * 8, 0);
  }
}

/** Latent cache kinds: the exact core cache and the online SVD. */
export type LatentKvCacheName = "exact" | "online-svd";

/**
 * Creates a latent decode cache by name: `"exact"` (core's LatentCache) or `"online-svd"`.
 * @param seed unused by both (deterministic), kept for the contract.
 */
export function createLatentKvCache(
  name: LatentKvCacheName,
  options: OnlineLatentOptions | { latentDim: number; ropeDim?: number },
  seed: SeedKey,
): LatentDecodeCache {
  void seed; // both kinds are deterministic; the seed keeps the (options, seed) convention
  if (name === "exact") return new LatentCache(options);
  if (name === "online-svd") return new OnlineLatentCache(options as OnlineLatentOptions);
  throw new ValueError("name", '"exact" or "online-svd"', describe(name));
}
