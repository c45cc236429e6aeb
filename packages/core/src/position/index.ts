/** position/ — rotary position embedding (RoPE) with both pairings and the relative-position identity. */
export { ROPE_PAIRINGS, Rope, type RopeOptions, type RopePairing, ropeFrequencies } from "./rope.js";
