/**
 * The two registries every experiment is built from.
 *
 * - A PROBLEM generator turns (params, seed) into attention inputs: one or more heads of
 *   queries/keys/values plus the kernel and mask that define the exact target Y = Z⁻¹AV (§2).
 * - A METHOD turns a problem instance (and its own seed) into an approximate output with an
 *   analytic cost. The runner compares it with the exact output and records the metrics.
 *
 * Both are plain data + a pure function, so a cell's result depends only on its identity and
 * seed — never on which worker ran it or what ran before (byte-identical results.csv).
 */
import type { Cost, Matrix, MultiHeadWeights, PretrainedModel, SeedKey } from "@randattn/core";
import type { CompiledExpression } from "../base/expr-eval.js";

/** A JSON schema (ajv draft-07 subset) for a params object. */
export type ParamsSchema = {
  readonly type: "object";
  readonly properties: Readonly<Record<string, Readonly<Record<string, unknown>>>>;
  readonly required?: readonly string[];
  readonly additionalProperties: false;
};

/** A parameter value as it appears in a config or a CSV column. */
export type ParamValue = number | string | boolean;
/** A resolved params object (after defaults and sweep substitution). */
export type Params = Record<string, ParamValue>;

/** The kernel of a problem, as sent to workers (formulas pre-parsed in the main thread). */
export type KernelSpec =
  | { kind: "softmax"; scale?: number }
  | { kind: "dot"; formula: string; expression: CompiledExpression; scale?: number };

/** The mask of a problem. `causal.offset` defaults to N_KV − N_Q (ERRATA). */
export type MaskSpec = { kind: "causal"; offset?: number };

/** One attention head's inputs. GQA heads of one group share the same keys/values objects. */
export interface AttentionHead {
  readonly queries: Matrix;
  readonly keys: Matrix;
  readonly values: Matrix;
}

/** Extra structure a model-shaped generator exposes to methods that can use it (e.g. MLA). */
export interface LatentStructure {
  /** The latent L = X W_L (N_KV × d_L) that an MLA cache stores (§4.2). */
  readonly latent: Matrix;
  /** Per head: W_LK^h (d_L × d_QK) so K_h = L W_LK^h. */
  readonly keyUp: readonly Matrix[];
  /** Per head: W_LV^h (d_L × d_V) so V_h = L W_LV^h (ERRATA form). */
  readonly valueUp: readonly Matrix[];
}

/** The projections behind a multi-head problem (GQA/MHA), for methods that rewrite the weights. */
export interface MultiHeadStructure {
  /** The layer input X (N × d_in); queries, keys and values of `heads` are X W_Q^h, X W_K^g, X W_V^g. */
  readonly x: Matrix;
  /** W_Q^h, W_K^g, W_V^g and an identity W_O (so the layer output is the concatenation of the heads). */
  readonly weights: MultiHeadWeights;
}

/**
 * Pairs of vectors for kernel-value methods (no attention): row i of `queries` and of `keys` is one
 * pair (q_i, k_i), and the target is the exact kernel value κ(q_i, k_i) of the problem's kernel.
 */
export interface KernelPairsStructure {
  readonly queries: Matrix;
  readonly keys: Matrix;
}

/** Model accounting problem (no tensors): a named preset and a token count. */
export interface AccountingStructure {
  readonly preset: string;
  readonly tokens: number;
}

/** A loaded checkpoint and the token window a `model` problem ran it over (registry/real.ts). */
export interface PretrainedStructure {
  readonly model: PretrainedModel;
  /** The token window (BOS-prefixed documents, from the problem's `offset`). */
  readonly ids: readonly number[];
  /** Absolute checkpoint folder (identifies the model in memo keys). */
  readonly checkpoint: string;
  /** The decoder layer the problem's heads come from. */
  readonly layer?: number;
}

/** What a generator returns. */
export interface ProblemInstance {
  /** Attention heads; the exact/approximate output is the column concatenation of head outputs. */
  readonly heads: readonly AttentionHead[];
  readonly kernel: KernelSpec;
  readonly mask: MaskSpec | null;
  /** Query heads per KV group (1 for MHA); informational, used in cost accounting. */
  readonly numKvHeads: number;
  readonly latent?: LatentStructure;
  readonly multiHead?: MultiHeadStructure;
  readonly kernelPairs?: KernelPairsStructure;
  readonly accounting?: AccountingStructure;
  /** The checkpoint and tokens behind a `model` problem (for end-to-end evaluations). */
  readonly pretrained?: PretrainedStructure;
}

/*
 * Problem SIZES without tensors (issue 13, `randattn plan`): registry/shape.ts derives them from
 * an instance (`shapeOf`) or a checkpoint config; an instance is itself a shape for its tensor fields.
 */

/** Rows × columns of a matrix. */
export interface Dims {
  readonly rows: number;
  readonly cols: number;
}

/** One head's Q, K, V sizes. GQA heads of one group share the same keys/values objects (as instances do). */
export interface HeadShape {
  readonly queries: Dims;
  readonly keys: Dims;
  readonly values: Dims;
}

/** The attention sizes of a decoder model (a checkpoint or the synthetic decoder). */
export interface ModelAttentionShape {
  readonly numLayers: number;
  /** H, query heads per layer. */
  readonly numHeads: number;
  /** G, KV heads per layer (H for MHA and MLA). */
  readonly numKvHeads: number;
  /** d_QK per head (MLA: d_nope + d_R). */
  readonly dQK: number;
  /** d_V per head. */
  readonly dV: number;
  /** MLA only: d_L and d_R of the cached latent. */
  readonly latentDim?: number;
  readonly ropeDim?: number;
}

/** The sizes of a problem (see module doc). */
export interface ProblemShape {
  readonly heads: readonly HeadShape[];
  readonly kernel: KernelSpec;
  readonly mask: MaskSpec | null;
  readonly numKvHeads: number;
  readonly latent?: { readonly latent: Dims; readonly keyUp: readonly Dims[]; readonly valueUp: readonly Dims[] };
  readonly multiHead?: {
    readonly x: Dims;
    readonly weights: { readonly queries: readonly Dims[]; readonly keys: readonly Dims[]; readonly values: readonly Dims[] };
  };
  readonly kernelPairs?: { readonly queries: Dims; readonly keys: Dims };
  readonly accounting?: AccountingStructure;
  /** A `model` problem: the checkpoint's attention sizes and the token window's length. */
  readonly pretrained?: { readonly attention: ModelAttentionShape; readonly tokens: number };
  /** A decode problem: the model's attention sizes, the prompt and the decoded steps. */
  readonly decode?: { readonly attention: ModelAttentionShape; readonly promptLength: number; readonly steps: number };
}

/** Analytic cost of a method run (the paper's flop and memory counts, not measured): core's `Cost`. */
export type { Cost };

/** What a method returns. */
export interface MethodResult {
  /** N_Q × Σ d_V output (heads concatenated), or null for accounting-only methods. */
  readonly output: Matrix | null;
  readonly cost: Cost;
  /** Row-stochastic attention weights per head, when the method forms them (for the KL metric). */
  readonly weights?: readonly Matrix[];
  /**
   * Values of the method's declared `extraMetrics` (reference curves such as the DKM expectation,
   * errors of the sketched object itself). null (or a missing key) leaves the column empty;
   * non-finite values are recorded as empty too.
   */
  readonly extras?: Readonly<Record<string, number | null>>;
}

/** An extra results.csv column a method fills (snake_case, units in the name where there are units). */
export interface ExtraMetric {
  readonly name: string;
  readonly description: string;
}

/** Inputs a method or generator receives besides its params. */
export interface RunContext {
  /** Directory against which relative data paths resolve (the config file's folder). */
  readonly baseDir: string;
  /** Whether the runner will compute the KL metric (so methods that can should return weights). */
  readonly wantWeights: boolean;
  /**
   * Where a method that returns weights writes head h's N_Q × N_KV matrix (n = N_Q·N_KV floats):
   * a buffer the runner owns and reuses once it has read the task's metrics (issue 14: a fresh
   * N × N array costs its page faults, more than forming it on the benchmark VM). A method that
   * uses it must not keep the weights past its result. Absent outside the runner: allocate.
   */
  readonly weightsBuffer?: (head: number, n: number) => Float64Array;
}

/** What a generator receives besides its params: the run context plus the config's kernel and mask. */
export interface GenerateContext extends RunContext {
  /** The problem's kernel (defines the exact target). */
  readonly kernel: KernelSpec;
  /** The problem's mask, or null. */
  readonly mask: MaskSpec | null;
}

/** A registered method. */
export interface MethodDefinition {
  readonly name: string;
  readonly description: string;
  /** Family, for listings and default figure styling. */
  readonly family: "exact" | "sampling" | "features" | "kernel" | "lowrank" | "latent" | "accounting" | "debug";
  readonly paramsSchema: ParamsSchema;
  /** Whether `run` returns attention weights (so the KL metric is defined). */
  readonly exposesWeights: boolean;
  /**
   * Extra columns this method fills in `MethodResult.extras`. A plan's results.csv gets the union
   * over its methods, sorted by name, after `floats_stored` (empty for methods without them).
   * @default none
   */
  readonly extraMetrics?: readonly ExtraMetric[];
  /**
   * The cost `run` reports, from the problem's SIZES alone (`randattn plan` sums it over a sweep
   * without drawing or loading any tensor; registry/shape.ts). The same formula as `run`'s: equal
   * to the recorded flops for every method whose cost is a function of the sizes, which
   * test/registry/estimate-cost.test.ts checks for every registered method.
   */
  estimateCost(problem: ProblemShape, params: Params): Cost;
  /**
   * Set when the cost `run` reports depends on the data (LSH bucket sizes, a cache's evictions), so
   * `estimateCost` is a model of it: `note` says what it assumes and how far the recorded value can be.
   * @default none (the estimate is exact)
   */
  readonly costEstimate?: { readonly kind: "approximate"; readonly note: string };
  /** Computes the approximation. Must be a pure function of (problem, params, seed); the seed comes last (issue 9). */
  run(problem: ProblemInstance, params: Params, context: RunContext, seed: SeedKey): MethodResult;
  /**
   * Reference values of declared extra columns that do not depend on the method's random draw
   * (a closed-form expectation, a bound, the optimum), computed after `run` and outside its wall
   * time, so expensive references never distort timings. Merged over `MethodResult.extras`.
   * @default none
   */
  references?(problem: ProblemInstance, params: Params, context?: ReferenceContext): Readonly<Record<string, number | null>>;
}

/** What the runner already holds when it asks a method for its references (`MethodDefinition.references`). */
export interface ReferenceContext {
  /**
   * The exact attention weights P_h = Z_h⁻¹A_h of every head, with the problem's kernel and mask, as
   * the exact reference formed them (core's `attentionWeights`) — present when a task of the same
   * problem point and trial asked for them (mean_kl_divergence), so a reference needing P reuses
   * them instead of forming P again. Absent otherwise: compute P yourself.
   */
  readonly weights?: readonly Matrix[];
}

/** A registered problem generator. */
export interface ProblemDefinition {
  readonly name: string;
  readonly description: string;
  readonly paramsSchema: ParamsSchema;
  /**
   * The params that determine the random draw (sizes). The input seed is
   * (root, "inputs", generator, these params, trial), so sweeping a non-structural param such as
   * `scale` reuses the same underlying draw (common random numbers across the axis).
   */
  readonly structuralParams: readonly string[];
  /** Whether the generator produces tensors (false for accounting presets). */
  readonly producesTensors: boolean;
  /**
   * The sizes of the instance `generate` would draw, without drawing it (for `randattn plan`).
   * Generators whose tensors are costly (a checkpoint forward, files) give it; for the others plan
   * draws the instance once per problem point and takes its shape.
   * @default none
   */
  shape?(params: Params, context: GenerateContext): ProblemShape;
  /** Draws the problem instance: a pure function of (params, context.kernel, context.mask, seed); the seed comes last (issue 9). */
  generate(params: Params, context: GenerateContext, seed: SeedKey): ProblemInstance;
}
