// The raw transpose kernel behind `transpose` (public, linalg/ops.ts) and the sketch package's
// QR and range finder (through @randattn/core/internal): flat arrays, no checks.

/**
 * o (cols × rows) = data (rows × cols)ᵀ, row-major. Eight input rows at a time: for each column j
 * the eight values land in one contiguous run of the output (a whole cache line), read from eight
 * sequential input streams. The former 32 × 32 tiles wrote 32 output rows a power-of-two stride
 * apart (rows = 16384: 128 KiB), which map to the same L1 set and evicted one another — 16 ns per
 * entry on a 16384 × 512 matrix against ≈ 2 here (issue 14; the RSVD's QR transposes its samples).
 */
export function transposeInto(data: Float64Array, o: Float64Array, rows: number, cols: number): void {
  let i0 = 0;
  for (; i0 + 7 < rows; i0 += 8) {
    for (let j = 0, s = i0 * cols, d = i0; j < cols; j++, s++, d += rows) {
      o[d] = data[s];
      o[d + 1] = data[s + cols];
      o[d + 2] = data[s + 2 * cols];
      o[d + 3] = data[s + 3 * cols];
      o[d + 4] = data[s + 4 * cols];
      o[d + 5] = data[s + 5 * cols];
      o[d + 6] = data[s + 6 * cols];
      o[d + 7] = data[s + 7 * cols];
    }
  }
  for (; i0 < rows; i0++) for (let j = 0; j < cols; j++) o[j * rows + i0] = data[i0 * cols + j];
}
