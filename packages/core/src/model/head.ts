/**
 * The output head (Fig. 8/9 top: "Linear" then "Softmax"): logits = H W_out (+ b) over the
 * vocabulary, with W_out = Eᵀ when tied to the token embedding, and the softmax turning each row
 * into a distribution over the N_T tokens.
 */
import { NumericalError, ShapeError, ValueError } from "../errors.js";
import { matmul, matmulTransB } from "../linalg/matmul.js";
import type { Matrix } from "../matrix.js";
import { softmaxRows } from "../linalg/ops.js";
import { initWeight } from "../random/init.js";
import type { SeedKey } from "../random/stream.js";
import { Embedding } from "../tokens/index.js";
import { assertFinite, assertInteger, assertMatrix, assertNonEmpty, assertShape, describe } from "../validate.js";

/** Output projection to the vocabulary. */
export interface OutputHead {
  /** Tied: logits = H Eᵀ with E the (target) token embedding. */
  readonly tied: boolean;
  /** W_out ∈ R^{d×N_T} when untied. */
  readonly weight?: Matrix;
  /** Optional bias b ∈ R^{N_T}. */
  readonly bias?: Float64Array;
}

/** Options of {@link initOutputHead}. */
export interface InitOutputHeadOptions {
  /** Tie W_out to the token embedding (logits = H Eᵀ): no weight is drawn. */
  tied: boolean;
}

/** A tied head, or an untied W_out ∈ R^{d×N_T} (LeCun normal from `seed`). No bias. */
export function initOutputHead(dModel: number, vocabSize: number, options: InitOutputHeadOptions, seed: SeedKey): OutputHead {
  if (options === null || typeof options !== "object") throw new ValueError("options", "{ tied }", describe(options));
  assertInteger(dModel, "dModel");
  assertInteger(vocabSize, "vocabSize");
  return options.tied ? { tied: true } : { tied: false, weight: initWeight(dModel, vocabSize, {}, seed) };
}

/**
 * Logits over the vocabulary for each row of `hidden` (N×d): H Eᵀ (tied) or H W_out (+ b).
 * @param embedding the token embedding, required when the head is tied.
 * @throws ShapeError on width mismatches; NumericalError when the logits are not finite (non-finite weights).
 */
export function outputLogits(hidden: Matrix, head: OutputHead, embedding?: Embedding): Matrix {
  assertMatrix(hidden, "hidden");
  assertNonEmpty(hidden, "hidden");
  if (head === null || typeof head !== "object") throw new ValueError("head", "an OutputHead", describe(head));
  let logits: Matrix;
  if (head.tied) {
    if (!(embedding instanceof Embedding)) throw new ValueError("embedding", "the token Embedding (the head is tied)", describe(embedding));
    if (embedding.dim !== hidden.cols) throw new ShapeError("hidden", `*×${embedding.dim} (cols = embedding dim)`, hidden.shape);
    logits = matmulTransB(hidden, embedding.table);
  } else {
    assertShape(head.weight, "head.weight", hidden.cols, undefined, "rows = hidden.cols");
    logits = matmul(hidden, head.weight);
  }
  if (head.bias !== undefined) {
    if (!(head.bias instanceof Float64Array) || head.bias.length !== logits.cols) {
      throw new ShapeError("head.bias", `a Float64Array of length ${logits.cols}`, describe(head.bias));
    }
    const o = logits.data;
    for (let i = 0; i < o.length; i++) o[i] += head.bias[i % logits.cols];
  }
  checkFiniteLogits(logits);
  return logits;
}

function checkFiniteLogits(logits: Matrix): void {
  for (let i = 0; i < logits.data.length; i++) {
    if (!Number.isFinite(logits.data[i])) {
      const where = `[${Math.floor(i / logits.cols)}, ${i % logits.cols}]`;
      throw new NumericalError("logits", "finite values (check the weights for NaN/±Inf or overflow)", `${logits.data[i]} at ${where}`);
    }
  }
}

/**
 * The softmax over the vocabulary of each row of logits: row i is the model's distribution of
 * the next token after position i.
 * @throws NonFiniteError on NaN/±Inf logits.
 */
export function outputProbabilities(logits: Matrix): Matrix {
  assertMatrix(logits, "logits");
  assertNonEmpty(logits, "logits");
  assertFinite(logits, "logits");
  return softmaxRows(logits);
}

/** argmax of a row of logits (lowest index on ties): the greedy choice. */
export function greedyToken(logits: Matrix, row?: number): number {
  assertMatrix(logits, "logits");
  assertNonEmpty(logits, "logits");
  // (not a default parameter: it would read logits.rows before `logits` is checked)
  row ??= logits.rows - 1;
  assertInteger(row, "row", 0, logits.rows - 1);
  // a NaN logit would make the argmax depend on where it sits, silently
  assertFinite(logits.rowView(row), `logits[${row}]`);
  const o = row * logits.cols;
  let best = 0;
  for (let j = 1; j < logits.cols; j++) if (logits.data[o + j] > logits.data[o + best]) best = j;
  return best;
}
