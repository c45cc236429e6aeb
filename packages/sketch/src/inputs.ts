/**
 * Input checks shared by every attention sketch (sampling/, lsh/ and its users, nystrom/, coreset/):
 * one place that says what Q, K, V must be, so every method rejects bad input with the same typed
 * error naming the same argument.
 */
import { type Matrix, ShapeError } from "@randattn/core";
import { assertFinite, assertMatrix, assertNonEmpty } from "@randattn/core/internal";

/** Checks Q (N_Q × d), K (N_KV × d), V (N_KV × d_V): matrices, non-empty, matching, finite. */
export function checkAttentionInputs(queries: unknown, keys: unknown, values: unknown): asserts queries is Matrix {
  for (const [m, name] of [
    [queries, "queries"],
    [keys, "keys"],
    [values, "values"],
  ] as const) {
    assertMatrix(m, name);
    assertNonEmpty(m, name);
  }
  const q = queries as Matrix;
  const k = keys as Matrix;
  const v = values as Matrix;
  if (k.cols !== q.cols) throw new ShapeError("keys", `*×${q.cols} (cols = queries.cols = d_QK)`, k.shape);
  if (v.rows !== k.rows) throw new ShapeError("values", `${k.rows}×* (rows = keys.rows = N_KV)`, v.shape);
  assertFinite(q, "queries");
  assertFinite(k, "keys");
  assertFinite(v, "values");
}
