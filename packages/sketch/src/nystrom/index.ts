/** Nyström attention baselines (docs/coreset.md): Nyströmformer (segment-means landmarks) and Skyformer (Nyström of the PSD Gaussian embedding). */
export { type NystromformerOptions, type NystromformerResult, nystromformerAttention, segmentMeans } from "./nystromformer.js";
export { type SkyformerOptions, type SkyformerResult, skyformerAttention } from "./skyformer.js";
export { type PseudoInverse, exactPinv, iterativePinv } from "./shared.js";
