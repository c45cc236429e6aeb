/**
 * WAT of a pass of sketch's resident random-feature attention (sketch features/attention.ts,
 * `residentBidirectional`) that ran as a JavaScript loop beside its products (issue 14, stop 42):
 *
 *  - `panel_column_sums_f64(panels, kb, count, z)`: z[l] += Σ_p φ[p, l] for the `count` features of
 *    a block of kb keys held in 4-column panels (feature l of key p at element ⌊l/4⌋·4·kb + 4p +
 *    l mod 4), each sum running from the z[l] given (float64 at z) through p = 0 … kb − 1 in order —
 *    the loop's additions in its order, one feature per lane (two f64x2 per panel), so the same bits.
 *    The lanes of a last partial panel past `count` (the panels' zero padding) are summed and not
 *    stored. The JavaScript took ≈ 2.9 ms of a 150 ms call at N = 16,384, m = 256.
 */
export function panelColumnSumsFunction(): string {
  return `(func $panel_column_sums_f64 (export "panel_column_sums_f64") (param $panels i32) (param $kb i32) (param $count i32) (param $z i32)
(local $g i32) (local $q i32) (local $end i32) (local $zp i32) (local $s0 v128) (local $s1 v128)
(local.set $q (local.get $panels))
(local.set $zp (local.get $z))
(local.set $g (i32.const 0))
(block $dg (loop $lg (br_if $dg (i32.ge_s (local.get $g) (local.get $count)))
 (if (i32.le_s (i32.add (local.get $g) (i32.const 4)) (local.get $count))
  (then (local.set $s0 (v128.load (local.get $zp))) (local.set $s1 (v128.load offset=16 (local.get $zp))))
  (else
   (local.set $s0 (v128.const i64x2 0 0)) (local.set $s1 (v128.const i64x2 0 0))
   (local.set $s0 (v128.load64_lane 0 (local.get $zp) (local.get $s0)))
   (if (i32.gt_s (i32.sub (local.get $count) (local.get $g)) (i32.const 1)) (then (local.set $s0 (v128.load64_lane offset=8 1 (local.get $zp) (local.get $s0)))))
   (if (i32.gt_s (i32.sub (local.get $count) (local.get $g)) (i32.const 2)) (then (local.set $s1 (v128.load64_lane offset=16 0 (local.get $zp) (local.get $s1)))))))
 (local.set $end (i32.add (local.get $q) (i32.shl (local.get $kb) (i32.const 5))))
 (block $dp (loop $lp (br_if $dp (i32.ge_u (local.get $q) (local.get $end)))
  (local.set $s0 (f64x2.add (local.get $s0) (v128.load (local.get $q))))
  (local.set $s1 (f64x2.add (local.get $s1) (v128.load offset=16 (local.get $q))))
  (local.set $q (i32.add (local.get $q) (i32.const 32))) (br $lp)))
 (if (i32.le_s (i32.add (local.get $g) (i32.const 4)) (local.get $count))
  (then (v128.store (local.get $zp) (local.get $s0)) (v128.store offset=16 (local.get $zp) (local.get $s1)))
  (else
   (v128.store64_lane 0 (local.get $zp) (local.get $s0))
   (if (i32.gt_s (i32.sub (local.get $count) (local.get $g)) (i32.const 1)) (then (v128.store64_lane offset=8 1 (local.get $zp) (local.get $s0))))
   (if (i32.gt_s (i32.sub (local.get $count) (local.get $g)) (i32.const 2)) (then (v128.store64_lane offset=16 0 (local.get $zp) (local.get $s1))))))
 (local.set $zp (i32.add (local.get $zp) (i32.const 32)))
 (local.set $g (i32.add (local.get $g) (i32.const 4))) (br $lg)))
)`;
}
