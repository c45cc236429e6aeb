/**
 * WAT of `sq_dist_rows_f64(a, d, rows, bt, n8, out, ldb)`: squared Euclidean distances between
 * `rows` rows of A (row-major, rows × d at byte address a) and the columns of Bᵀ (d × n8 at bt with a
 * row stride of ldb ≥ n8 elements, the rows of B as columns, zero-padded to n8 = a multiple of 8):
 * out[i·n8 + j] = Σ_c (Bᵀ[c, j] − A[i, c])² — the kernel of linalg/distances.ts' `squaredDistances`.
 *
 * Eight columns j at a time, every row i for them before the next eight: the d lines of Bᵀ those
 * columns need (d·64 bytes) stay in L1 for all the rows, and ldb (kernels/stride.ts,
 * `unaliasedStride`) keeps them in distinct L1 sets. Row by row instead, each row re-read all of Bᵀ
 * (2 MiB for N = 4096, d = 64) from L2 or beyond, d lines 32 KiB apart that all fell into one L1 set.
 *
 * Each entry is the sequential sum over c = 0 … d − 1 from 0, with the difference taken as
 * b − a, squared and added in that order — the IEEE operations of the written-out loop
 * `for c: s += (b[j][c] − a[i][c]) ** 2` (x ** 2 is x · x in V8: fdlibm's pow returns x·x for
 * y = 2, and a 2·10⁷-pattern scan found no difference), so the same bits. The SIMD runs across j,
 * eight columns (four f64x2 accumulators) at a time, never across c: lanes never meet, so vectorizing
 * reorders nothing. No FMA exists in SIMD128, so the product is rounded before the add, as in JS.
 */
export function sqDistRowsFunction(): string {
  const acc = [0, 1, 2, 3];
  return `(func $sq_dist_rows_f64 (export "sq_dist_rows_f64") (param $a i32) (param $d i32) (param $rows i32) (param $bt i32) (param $n8 i32) (param $out i32) (param $ldb i32)
(local $i i32) (local $j i32) (local $c i32) (local $ap i32) (local $bp i32) (local $bj i32) (local $op i32) (local $ldbb i32) (local $ldo i32) (local $lda i32)
(local $ys v128) (local $e v128) ${acc.map((q) => `(local $s${q} v128)`).join(" ")}
(local.set $ldbb (i32.shl (local.get $ldb) (i32.const 3)))
(local.set $ldo (i32.shl (local.get $n8) (i32.const 3)))
(local.set $lda (i32.shl (local.get $d) (i32.const 3)))
(local.set $j (i32.const 0))
(block $dj (loop $lj (br_if $dj (i32.ge_s (local.get $j) (local.get $n8)))
 (local.set $bj (i32.add (local.get $bt) (i32.shl (local.get $j) (i32.const 3))))
 (local.set $ap (local.get $a))
 (local.set $op (i32.add (local.get $out) (i32.shl (local.get $j) (i32.const 3))))
 (local.set $i (i32.const 0))
 (block $di (loop $li (br_if $di (i32.ge_s (local.get $i) (local.get $rows)))
  ${acc.map((q) => `(local.set $s${q} (v128.const i64x2 0 0))`).join(" ")}
  (local.set $bp (local.get $bj))
  (local.set $c (i32.const 0))
  (block $dc (loop $lc (br_if $dc (i32.ge_s (local.get $c) (local.get $d)))
   (local.set $ys (v128.load64_splat (i32.add (local.get $ap) (i32.shl (local.get $c) (i32.const 3)))))
   ${acc
     .map(
       (q) =>
         `(local.set $e (f64x2.sub (v128.load offset=${16 * q} (local.get $bp)) (local.get $ys))) (local.set $s${q} (f64x2.add (local.get $s${q}) (f64x2.mul (local.get $e) (local.get $e))))`,
     )
     .join("\n   ")}
   (local.set $bp (i32.add (local.get $bp) (local.get $ldbb)))
   (local.set $c (i32.add (local.get $c) (i32.const 1))) (br $lc)))
  ${acc.map((q) => `(v128.store offset=${16 * q} (local.get $op) (local.get $s${q}))`).join(" ")}
  (local.set $ap (i32.add (local.get $ap) (local.get $lda)))
  (local.set $op (i32.add (local.get $op) (local.get $ldo)))
  (local.set $i (i32.add (local.get $i) (i32.const 1))) (br $li)))
 (local.set $j (i32.add (local.get $j) (i32.const 8))) (br $lj)))
)`;
}
