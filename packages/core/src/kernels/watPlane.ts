/**
 * WAT of `plane_ops_f64(x, w, ops, count)`: a recorded sequence of plane operations on the rows of a
 * float64 matrix (row-major at byte address x, w elements per row), applied in order — the singular
 * vectors' share of a Golub–Kahan–Reinsch SVD (sketch's lowrank/gkr.ts). That iteration computes
 * every rotation from the bidiagonal alone and never reads U or V back (JAMA's algorithm), so it
 * records their rotations, sign flips and swaps and has them applied here afterwards, in the same
 * order: the same IEEE operations on every element, so the same bits (tested against ml-matrix's SVD).
 *
 * `count` operations of 6 float64 each at byte address `ops`: kind, j, j2, n, c, s (indices as exact
 * small floats):
 *  - kind 0, rotation of rows j and j2 over their first n elements: t = c·x_j + s·x_j2,
 *    x_j2 ← (−s)·x_j + c·x_j2, x_j ← t (linalg/plane.ts' `rotateRows`);
 *  - kind 1, swap of rows j and j + 1 (all w elements);
 *  - kind 2, x_j ← −x_j over the first n elements.
 * Pairs of elements as f64x2 (elementwise: no sum spans lanes), a scalar last element for odd n.
 */
export function planeOpsFunction(): string {
  // Byte address of element 0 of row r (an i32 expression).
  const row = (r: string) => `(i32.add (local.get $x) (i32.shl (i32.mul ${r} (local.get $w)) (i32.const 3)))`;
  const field = (k: number) => `(f64.load offset=${8 * k} (local.get $op))`;
  const idx = (k: number) => `(i32.trunc_f64_s ${field(k)})`;
  return `(func $plane_ops_f64 (export "plane_ops_f64") (param $x i32) (param $w i32) (param $ops i32) (param $count i32)
(local $op i32) (local $end i32) (local $kind i32) (local $a i32) (local $b i32) (local $n i32) (local $i i32) (local $n2 i32)
(local $c f64) (local $s f64) (local $ns f64) (local $u f64) (local $v f64)
(local $cv v128) (local $sv v128) (local $nsv v128) (local $va v128) (local $vb v128)
(local.set $op (local.get $ops))
(local.set $end (i32.add (local.get $ops) (i32.mul (local.get $count) (i32.const 48))))
(block $done (loop $next (br_if $done (i32.ge_u (local.get $op) (local.get $end)))
 (local.set $kind ${idx(0)})
 (local.set $a ${row(idx(1))})
 (local.set $n ${idx(3)})
 (local.set $n2 (i32.and (local.get $n) (i32.const -2)))
 (local.set $i (i32.const 0))
 (if (i32.eqz (local.get $kind)) (then
  (local.set $b ${row(idx(2))})
  (local.set $c ${field(4)}) (local.set $s ${field(5)}) (local.set $ns (f64.neg (local.get $s)))
  (local.set $cv (f64x2.splat (local.get $c))) (local.set $sv (f64x2.splat (local.get $s))) (local.set $nsv (f64x2.splat (local.get $ns)))
  (block $rd (loop $rl (br_if $rd (i32.ge_s (local.get $i) (local.get $n2)))
   (local.set $va (v128.load (local.get $a))) (local.set $vb (v128.load (local.get $b)))
   (v128.store (local.get $b) (f64x2.add (f64x2.mul (local.get $nsv) (local.get $va)) (f64x2.mul (local.get $cv) (local.get $vb))))
   (v128.store (local.get $a) (f64x2.add (f64x2.mul (local.get $cv) (local.get $va)) (f64x2.mul (local.get $sv) (local.get $vb))))
   (local.set $a (i32.add (local.get $a) (i32.const 16))) (local.set $b (i32.add (local.get $b) (i32.const 16)))
   (local.set $i (i32.add (local.get $i) (i32.const 2))) (br $rl)))
  (if (i32.lt_s (local.get $i) (local.get $n)) (then
   (local.set $u (f64.load (local.get $a))) (local.set $v (f64.load (local.get $b)))
   (f64.store (local.get $b) (f64.add (f64.mul (local.get $ns) (local.get $u)) (f64.mul (local.get $c) (local.get $v))))
   (f64.store (local.get $a) (f64.add (f64.mul (local.get $c) (local.get $u)) (f64.mul (local.get $s) (local.get $v))))))
 ) (else (if (i32.eq (local.get $kind) (i32.const 1)) (then
  (local.set $b (i32.add (local.get $a) (i32.shl (local.get $w) (i32.const 3))))
  (local.set $n (local.get $w))
  (local.set $n2 (i32.and (local.get $n) (i32.const -2)))
  (block $sd (loop $sl (br_if $sd (i32.ge_s (local.get $i) (local.get $n2)))
   (local.set $va (v128.load (local.get $a))) (v128.store (local.get $a) (v128.load (local.get $b))) (v128.store (local.get $b) (local.get $va))
   (local.set $a (i32.add (local.get $a) (i32.const 16))) (local.set $b (i32.add (local.get $b) (i32.const 16)))
   (local.set $i (i32.add (local.get $i) (i32.const 2))) (br $sl)))
  (if (i32.lt_s (local.get $i) (local.get $n)) (then
   (local.set $u (f64.load (local.get $a))) (f64.store (local.get $a) (f64.load (local.get $b))) (f64.store (local.get $b) (local.get $u))))
 ) (else
  (block $nd (loop $nl (br_if $nd (i32.ge_s (local.get $i) (local.get $n2)))
   (v128.store (local.get $a) (f64x2.neg (v128.load (local.get $a))))
   (local.set $a (i32.add (local.get $a) (i32.const 16)))
   (local.set $i (i32.add (local.get $i) (i32.const 2))) (br $nl)))
  (if (i32.lt_s (local.get $i) (local.get $n)) (then (f64.store (local.get $a) (f64.neg (f64.load (local.get $a))))))
 ))))
 (local.set $op (i32.add (local.get $op) (i32.const 48)))
 (br $next)))
)`;
}
