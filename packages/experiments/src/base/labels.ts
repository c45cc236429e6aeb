/**
 * Column names of results.csv in words, with units, for axis labels, legends and table headers
 * ("relative Frobenius error", "flops", "samples s"), never the raw snake_case name.
 */

const KNOWN: Record<string, string> = {
  rel_frobenius_error: "relative Frobenius error ‖Ŷ−Y‖_F / ‖Y‖_F",
  rel_spectral_error: "relative spectral error ‖Ŷ−Y‖₂ / ‖Y‖₂",
  max_abs_error: "max absolute error",
  mean_kl_divergence_nats: "mean KL divergence (nats)",
  flops: "flops (analytic count)",
  floats_stored: "floats stored",
  wall_time_ms: "wall time (ms)",
  setup_time_ms: "setup time (ms)",
  trial: "trial",
  method_label: "method",
  method: "method",
  problem: "problem",
  problem_n: "sequence length N",
  problem_n_queries: "queries N_Q",
  problem_d: "query/key width d",
  problem_dv: "value width d_V",
  problem_scale: "input scale",
  problem_tokens: "tokens",
  problem_tail_index: "tail index",
  problem_shrink: "shrink factor",
  problem_cos: "cosine of the angle",
  problem_norm: "vector norm",
  param_samples: "samples s",
  param_num_features: "random features m",
  param_num_frequencies: "random frequencies m",
  param_rank: "rank k",
  param_k: "keys kept k",
  param_oversampling: "oversampling p",
  param_power_iterations: "power iterations q",
  param_block_size: "block size",
  param_latent_rank: "latent rank",
  dkm_expected_rel_error: "DKM expected relative error",
};

/** Words for a results column (units where there are units); unknown columns are de-snaked. */
export function columnLabel(column: string): string {
  if (Object.hasOwn(KNOWN, column)) return KNOWN[column];
  return column
    .replace(/^param_/, "")
    .replace(/^problem_/, "problem ")
    .replace(/_ms$/, " (ms)")
    .replace(/_nats$/, " (nats)")
    .replace(/_/g, " ");
}

/** A short label for point annotations and legends: `s = 64`, `N = 512`, `rank k = 8`. */
export function shortLabel(column: string, value: string): string {
  const words = columnLabel(column);
  // "samples s" → "s = 64"; "sequence length N" → "N = 512"; otherwise "words = value".
  const sym = /\s([A-Za-z](?:_[A-Za-z]+)?)$/.exec(words);
  return `${sym ? sym[1] : words} = ${value}`;
}
