/**
 * Random projection matrices Ω (m × d, one frequency ωᵢ per row) for random-feature maps.
 *
 * - `"iid"`: ωᵢ ~ N(0, I_d) independently (Rahimi & Recht 2007), or i.i.d. standard Cauchy
 *   coordinates for the Laplacian kernel.
 * - `"orthogonal"`: Performer's orthogonal random features (Choromanski et al. 2021, §2.4; Yu et al.
 *   2016): rows drawn in blocks of d that are exactly orthogonal within a block — each block is the
 *   Haar-orthogonal Q of a d × d Gaussian matrix (QR with sign(diag R) fixed, so Q is Haar) — and each
 *   row is rescaled by an independent χ_d length (the norm of a fresh N(0, I_d) vector). Every ωᵢ is
 *   then marginally N(0, I_d), so each feature stays unbiased, while the orthogonality within a block
 *   lowers the estimator's variance. When m is not a multiple of d the last block keeps its first
 *   m mod d rows.
 */
import { Matrix, type SeedKey, ValueError, derive, randomMatrix, RandomStream } from "@randattn/core";
import { assertInteger, assertOneOf, optionsObject } from "@randattn/core/internal";
import { householderQr } from "../lowrank/householder.js";

/** How the frequencies ωᵢ are drawn: independently or in orthogonal blocks (see module doc). */
export type ProjectionKind = "iid" | "orthogonal";

/** The distribution of each frequency's coordinates. */
export type FrequencyDistribution = "gaussian" | "cauchy";

export interface ProjectionOptions {
  /**
   * Independent rows or orthogonal blocks of d rows with χ_d lengths.
   * @default "iid" — unlike `randomFeatureAttention`, whose default is `"orthogonal"` (FAVOR+).
   * Why they differ: `drawProjection` is the general Ω primitive and also draws Cauchy frequencies
   * (Laplacian kernel), for which orthogonal blocks do not exist; `"iid"` is the one kind valid for
   * every distribution and the one the Performer closed-form MSE (Lemma 2) describes. The attention
   * entry point is for the softmax kernel, where orthogonal blocks are unbiased with lower variance.
   */
  projection?: ProjectionKind;
  /** Coordinate distribution: N(0, 1) (softmax, Gaussian kernels) or standard Cauchy (Laplacian kernel). Orthogonal blocks need `"gaussian"`. @default "gaussian" */
  distribution?: FrequencyDistribution;
}

/**
 * Draws Ω ∈ R^{numFrequencies × dim} from the stream `derive(seed, "omega", …)`: a pure function of
 * (seed, numFrequencies, dim, options), so redrawing the features means passing another seed.
 * @param numFrequencies m, the number of frequencies (rows); ≥ 1.
 * @param dim d, the dimension of the vectors being featurized; ≥ 1.
 * @throws ValueError for a non-integer or < 1 size, an unknown kind, or orthogonal Cauchy frequencies.
 */
export function drawProjection(numFrequencies: number, dim: number, options: ProjectionOptions, seed: SeedKey): Matrix {
  assertInteger(numFrequencies, "numFrequencies", 1);
  assertInteger(dim, "dim", 1);
  const o = optionsObject(options, "options");
  const projection = o.projection ?? "iid";
  const distribution = o.distribution ?? "gaussian";
  assertOneOf(projection, "options.projection", ["iid", "orthogonal"] as const);
  assertOneOf(distribution, "options.distribution", ["gaussian", "cauchy"] as const);
  if (projection === "iid") {
    if (distribution === "gaussian") return randomMatrix(numFrequencies, dim, {}, derive(seed, "omega", "iid"));
    const omega = randomMatrix(numFrequencies, dim, { distribution: "uniform", scale: 0.5 }, derive(seed, "omega", "cauchy"));
    // Inverse CDF of the standard Cauchy: tan(π(u − ½)) with u − ½ uniform on [−½, ½).
    const w = omega.data;
    for (let i = 0; i < w.length; i++) w[i] = Math.tan(Math.PI * w[i]);
    return omega;
  }
  if (distribution !== "gaussian") {
    throw new ValueError(
      "options.distribution",
      '"gaussian" with projection "orthogonal" (χ_d row lengths assume Gaussian rows)',
      `"${distribution}"`,
    );
  }
  const omega = new Matrix(numFrequencies, dim);
  const w = omega.data;
  const norms = new RandomStream(derive(seed, "omega", "orthogonal", "norms"));
  for (let start = 0, block = 0; start < numFrequencies; start += dim, block++) {
    const g = randomMatrix(dim, dim, {}, derive(seed, "omega", "orthogonal", "block", block));
    const { q, r } = householderQr(g);
    const rows = Math.min(dim, numFrequencies - start);
    for (let i = 0; i < rows; i++) {
      // Row i of the block = column i of Q·diag(sign R_ii) (Haar), times an independent χ_d length.
      const sign = r.data[i * dim + i] < 0 ? -1 : 1;
      let sq = 0;
      for (let t = 0; t < dim; t++) {
        const z = norms.gaussian();
        sq += z * z;
      }
      const len = Math.sqrt(sq) * sign;
      const o = (start + i) * dim;
      for (let t = 0; t < dim; t++) w[o + t] = len * q.data[t * dim + i];
    }
  }
  return omega;
}
