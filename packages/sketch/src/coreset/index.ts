/** Coreset attention (docs/coreset.md): WildCat (RPCholesky + Nyström weights), kernel halving, Thinformer. */
export { type WildCatOptions, type WildCatResult, wildcatAttention } from "./wildcat.js";
export { type HalvingResult, type IndexKernel, compress, kernelHalving, thin } from "./halving.js";
export {
  type ThinformerOptions,
  type ThinformerResult,
  type ThinningCertificate,
  attentionPairKernel,
  mmdSquared,
  thinformerAttention,
} from "./thinformer.js";
