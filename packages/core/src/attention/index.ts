/**
 * attention/ — exact attention in every variant of Serret (2026) §2–§4: kernels κ, masks (§3.2),
 * single-head Y = Z⁻¹AV (§2.1), projections, self-/cross-attention, multi-head (§2.2), GQA/MQA
 * (§4.1) and streaming (online-softmax) exact attention. See packages/core/docs/attention.md.
 */
export {
  type Kernel,
  type KernelKind,
  KERNEL_KINDS,
  type ResolvedKernel,
  dotKernel,
  evaluateKernel,
  kernelEmptyValue,
  kernelScale,
  pairwiseKernel,
  resolveKernel,
  softmaxKernel,
} from "./kernel.js";
export {
  type Mask,
  type MaskForm,
  type MaskKind,
  MASK_FORMS,
  MASK_KINDS,
  additiveMask,
  allowedSetsMask,
  causalMask,
  denseMask,
  emptyMaskRows,
  multiplicativeMask,
  paddingMask,
} from "./mask.js";
export {
  ATTENTION_PRECISIONS,
  type AttentionOptions,
  type AttentionPrecisionOption,
  EMPTY_ROW_POLICIES,
  type EmptyRowPolicy,
} from "./options.js";
export { type AttentionScores, attention, attentionScores, attentionWeights } from "./attend.js";
export {
  DEFAULT_KEY_BLOCK_SIZE,
  DEFAULT_QUERY_BLOCK_SIZE,
  type StreamingAttentionOptions,
  streamingAttention,
} from "./streaming.js";
export {
  EXACT_ALGORITHMS,
  type ExactAlgorithm,
  type ProjectedAttentionOptions,
  type ProjectionWeights,
  crossAttention,
  project,
  projectedAttention,
  runAttention,
  selfAttention,
} from "./projection.js";
export {
  type AttentionMode,
  type AttentionPrecision,
  type FastAttentionFullOptions,
  type FastAttentionOptions,
  type PrefixMask,
  attention32,
  fastAttention,
  float32AttentionErrorBound,
  streamingAttention32,
} from "./fast.js";
export type { HeadWeights } from "./fast-heads.js";
export {
  type MultiHeadInit,
  type MultiHeadOptions,
  type MultiHeadShape,
  type MultiHeadWeights,
  type PositionalRotation,
  defaultQueryPositions,
  initMultiHeadWeights,
  kvHeadFor,
  multiHeadAttention,
  multiHeadShape,
  tieKvHeads,
} from "./multihead.js";
