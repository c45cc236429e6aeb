/**
 * Skip connections (§3.1.1, item 4) and where the normalization sits around each sublayer F
 * (remark of §3.2; study notes "Normalization — 4 variants"):
 *
 *  - `"post"` (Post-LN, the original Transformer, Fig. 5):  y = norm(x + F(x))
 *  - `"pre"`  (Pre-LN [Xio+20]):                           y = x + F(norm(x))   — the skip path is never normalized
 *  - `"peri"` (Peri-LN [Kim+25], Gemma 2/3, OLMo 2):      y = x + norm_out(F(norm_in(x)))
 *
 * Peri-LN also normalizes the input embeddings and the final hidden state; those two norms live
 * at model level (model/stack.ts).
 */
import { ShapeError, ValueError } from "../errors.js";
import { Matrix } from "../matrix.js";
import { assertFinite, assertMatrix, assertNonEmpty, assertOneOf, describe } from "../validate.js";
import { type NormKind, type NormParams, applyNorm, assertNormParams, initNorm } from "../norm.js";

/** Normalization placement around a sublayer. */
export type NormPlacement = "post" | "pre" | "peri";

/** The allowed values of {@link NormPlacement}. */
export const NORM_PLACEMENTS: readonly NormPlacement[] = ["post", "pre", "peri"];

/**
 * The norms of one residual block. `before` normalizes the sublayer's input ("pre", "peri");
 * `after` normalizes the sum x + F(x) ("post") or the sublayer's output F(·) ("peri").
 */
export interface SublayerNorms {
  readonly before?: NormParams;
  readonly after?: NormParams;
}

/** Which of `before` / `after` each placement uses. */
export function normsUsed(placement: NormPlacement): { before: boolean; after: boolean } {
  assertOneOf(placement, "placement", NORM_PLACEMENTS);
  return { before: placement !== "post", after: placement !== "pre" };
}

/** Initial norms (γ = 1, β = 0) for one residual block of the given placement. */
export function initSublayerNorms(placement: NormPlacement, kind: NormKind, dim: number, epsilon?: number): SublayerNorms {
  const used = normsUsed(placement);
  const opts = epsilon === undefined ? {} : { epsilon };
  return {
    before: used.before ? initNorm(kind, dim, opts) : undefined,
    after: used.after ? initNorm(kind, dim, opts) : undefined,
  };
}

/** Checks that `norms` holds exactly the norms `placement` uses, each of width `dim`. */
export function assertSublayerNorms(
  norms: unknown,
  argument: string,
  placement: NormPlacement,
  dim: number,
): asserts norms is SublayerNorms {
  if (norms === null || typeof norms !== "object") throw new ValueError(argument, "a { before?, after? } object", describe(norms));
  const n = norms as SublayerNorms;
  const used = normsUsed(placement);
  for (const side of ["before", "after"] as const) {
    const p = n[side];
    if (used[side]) {
      if (p === undefined) throw new ValueError(`${argument}.${side}`, `norm parameters (placement "${placement}" uses it)`, "undefined");
      assertNormParams(p, `${argument}.${side}`, dim);
    } else if (p !== undefined) {
      throw new ValueError(`${argument}.${side}`, `undefined (placement "${placement}" has no ${side}-norm)`, `${p.kind} norm parameters`);
    }
  }
}

/**
 * One residual block: x + F(x) with the normalization at `placement` (see the module comment).
 * `sublayer` must map an N×d matrix to an N×d matrix (attention or FFN).
 * @throws ShapeError when the sublayer's output is not the shape of `x`.
 * @throws ValueError when `norms` does not hold exactly the norms the placement uses.
 */
export function residualBlock(x: Matrix, sublayer: (h: Matrix) => Matrix, placement: NormPlacement, norms: SublayerNorms): Matrix {
  assertMatrix(x, "x");
  assertNonEmpty(x, "x");
  if (typeof sublayer !== "function") throw new ValueError("sublayer", "a function Matrix → Matrix", describe(sublayer));
  assertOneOf(placement, "placement", NORM_PLACEMENTS);
  assertSublayerNorms(norms, "norms", placement, x.cols);
  assertFinite(x, "x");
  const input = placement === "post" ? x : applyNorm(x, norms.before as NormParams);
  const f = sublayer(input);
  if (!(f instanceof Matrix) || f.rows !== x.rows || f.cols !== x.cols) {
    throw new ShapeError(
      "sublayer(x)",
      `${x.shape} (the shape of x, for the skip connection)`,
      f instanceof Matrix ? f.shape : describe(f),
    );
  }
  const branch = placement === "peri" ? applyNorm(f, norms.after as NormParams) : f;
  const sum = new Matrix(x.rows, x.cols);
  const s = sum.data;
  for (let i = 0; i < s.length; i++) s[i] = x.data[i] + branch.data[i];
  return placement === "post" ? applyNorm(sum, norms.after as NormParams) : sum;
}
