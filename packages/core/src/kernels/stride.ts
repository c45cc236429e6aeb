/**
 * Row strides for the kernels' own copies of row-major arrays whose columns they walk down.
 *
 * A walk down a column touches one 64-byte line per row. When a row is an even number of lines long
 * (cols·8 bytes a multiple of 128), the lines of one column fall into a fraction of L1's sets — all
 * into one at a 4 KiB multiple — and evict each other before they are reused. Eight more elements
 * make the stride an odd number of lines, so a column's lines visit every set. Only the layout
 * changes: a kernel given the stride performs the same operations in the same order (issue 14,
 * stop 38: the Jacobi spectral norm at n = 128 18–20 → 10.4–10.9 ms, the squared distances at
 * N = 4096 250 → 160 ms).
 */

/**
 * The row stride (float64 elements) for `cols` columns: cols + 8 when a row is an even number of
 * 64-byte lines and cols ≥ `minCols`, else cols.
 * @param minCols below it the array is small enough to stay in L1 whatever the stride. @default 0
 */
export function unaliasedStride(cols: number, minCols = 0): number {
  return cols >= minCols && cols % 16 === 0 ? cols + 8 : cols;
}
