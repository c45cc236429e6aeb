/**
 * WAT of passes of sketch's resident random-feature attention (sketch features/attention.ts,
 * `residentBidirectional`, and maps.ts `streamFeaturesResident`) that ran as JavaScript loops beside
 * its products (issue 14, stop 42): `panel_column_sums_f64` here, `rows_sumsq_f64` and
 * `divide_rows_f64` below.
 *
 *  - `panel_column_sums_f64(panels, kb, count, z)`: z[l] += Σ_p φ[p, l] for the `count` features of
 *    a block of kb keys held in 4-column panels (feature l of key p at element ⌊l/4⌋·4·kb + 4p +
 *    l mod 4), each sum running from the z[l] given (float64 at z) through p = 0 … kb − 1 in order —
 *    the loop's additions in its order, one feature per lane (two f64x2 per panel), so the same bits.
 *    The lanes of a last partial panel past `count` (the panels' zero padding) are summed and not
 *    stored. The JavaScript loop: ≈ 2.9 ms in a profile of a 150 ms call at N = 16,384, m = 256.
 */
import { rowAddr } from "./watBounds.js";

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

/**
 * `rows_sumsq_f64(src, ld, rows, cols, dst)` → 1 when every entry read is finite, else 0: dst[r] =
 * Σ_c x[r·ld + c]² from 0 in c order (float64 at dst) for each of `rows` rows — the per-row loop of
 * sketch's `streamFeaturesResident` (its ‖x‖² for the positive and hyperbolic features' shift), two
 * rows per f64x2 and four per step (a row index past the block clamped to its last row, which is
 * then summed and stored twice), never across c, so the same bits. The loop's finiteness test
 * (Σ (x − x) = 0) runs beside it, one running sum for all rows.
 */
export function rowsSumSqFunction(): string {
  const pairs = [0, 1];
  const L: string[] = [];
  L.push(
    '(func $rows_sumsq_f64 (export "rows_sumsq_f64") (param $src i32) (param $ld i32) (param $rows i32) (param $cols i32) (param $dst i32) (result i32)',
  );
  L.push("(local $r i32) (local $c i32) (local $last i32) (local $ldb i32) (local $z v128)");
  for (const h of pairs) L.push(`(local $a${h} i32) (local $b${h} i32) (local $x${h} v128) (local $q${h} v128)`);
  L.push("(local.set $last (i32.sub (local.get $rows) (i32.const 1)))");
  L.push("(local.set $ldb (i32.shl (local.get $ld) (i32.const 3)))");
  L.push("(local.set $z (v128.const i64x2 0 0))");
  L.push("(local.set $r (i32.const 0))");
  L.push("(block $dr (loop $lr (br_if $dr (i32.ge_s (local.get $r) (local.get $rows)))");
  for (const h of pairs) {
    L.push(
      `(local.set $a${h} ${rowAddr("$src", "(local.get $ldb)", 2 * h)}) (local.set $b${h} ${rowAddr("$src", "(local.get $ldb)", 2 * h + 1)})`,
    );
    L.push(`(local.set $q${h} (v128.const i64x2 0 0))`);
  }
  L.push("(local.set $c (i32.const 0))");
  L.push("(block $dc (loop $lc (br_if $dc (i32.ge_s (local.get $c) (local.get $cols)))");
  for (const h of pairs) {
    L.push(`(local.set $x${h} (v128.load64_lane 1 (local.get $b${h}) (v128.load64_zero (local.get $a${h}))))`);
    L.push(`(local.set $q${h} (f64x2.add (local.get $q${h}) (f64x2.mul (local.get $x${h}) (local.get $x${h}))))`);
    L.push(`(local.set $z (f64x2.add (local.get $z) (f64x2.sub (local.get $x${h}) (local.get $x${h}))))`);
    L.push(`(local.set $a${h} (i32.add (local.get $a${h}) (i32.const 8))) (local.set $b${h} (i32.add (local.get $b${h}) (i32.const 8)))`);
  }
  L.push("(local.set $c (i32.add (local.get $c) (i32.const 1))) (br $lc)))");
  for (const h of pairs) {
    L.push(`(v128.store64_lane 0 ${rowAddr("$dst", "(i32.const 8)", 2 * h)} (local.get $q${h}))`);
    L.push(`(v128.store64_lane 1 ${rowAddr("$dst", "(i32.const 8)", 2 * h + 1)} (local.get $q${h}))`);
  }
  L.push("(local.set $r (i32.add (local.get $r) (i32.const 4))) (br $lr)))");
  L.push(
    "(i32.and (f64.eq (f64x2.extract_lane 0 (local.get $z)) (f64.const 0)) (f64.eq (f64x2.extract_lane 1 (local.get $z)) (f64.const 0))))",
  );
  return L.join("\n");
}

/**
 * `divide_rows_f64(src, ld, rows, cols, dst)` → 1 when every row's last entry D = src[r·ld + cols]
 * is > 0, and then dst[r·cols + c] = src[r·ld + c]·(1/D) for c < cols; 0, with nothing written,
 * otherwise (NaN included): sketch's resident random-feature attention's [numerator | normalizer]
 * rows divided into the output (`divideRows`: the same product by the same reciprocal), whose loop
 * keeps the rows with D ≤ 0 (its policies) for the blocks that have them.
 */
export function divideRowsFunction(): string {
  return `(func $divide_rows_f64 (export "divide_rows_f64") (param $src i32) (param $ld i32) (param $rows i32) (param $cols i32) (param $dst i32) (result i32)
(local $r i32) (local $c i32) (local $s i32) (local $o i32) (local $ldb i32) (local $inv f64) (local $vi v128)
(local.set $ldb (i32.shl (local.get $ld) (i32.const 3)))
(local.set $s (i32.add (local.get $src) (i32.shl (local.get $cols) (i32.const 3))))
(local.set $r (i32.const 0))
(block $dk (loop $lk (br_if $dk (i32.ge_s (local.get $r) (local.get $rows)))
 (if (i32.eqz (f64.gt (f64.load (local.get $s)) (f64.const 0))) (then (return (i32.const 0))))
 (local.set $s (i32.add (local.get $s) (local.get $ldb)))
 (local.set $r (i32.add (local.get $r) (i32.const 1))) (br $lk)))
(local.set $s (local.get $src)) (local.set $o (local.get $dst))
(local.set $r (i32.const 0))
(block $dr (loop $lr (br_if $dr (i32.ge_s (local.get $r) (local.get $rows)))
 (local.set $inv (f64.div (f64.const 1) (f64.load (i32.add (local.get $s) (i32.shl (local.get $cols) (i32.const 3))))))
 (local.set $vi (f64x2.splat (local.get $inv)))
 (local.set $c (i32.const 0))
 (block $dv (loop $lv (br_if $dv (i32.gt_s (i32.add (local.get $c) (i32.const 2)) (local.get $cols)))
  (v128.store (i32.add (local.get $o) (i32.shl (local.get $c) (i32.const 3))) (f64x2.mul (v128.load (i32.add (local.get $s) (i32.shl (local.get $c) (i32.const 3)))) (local.get $vi)))
  (local.set $c (i32.add (local.get $c) (i32.const 2))) (br $lv)))
 (if (i32.lt_s (local.get $c) (local.get $cols)) (then
  (f64.store (i32.add (local.get $o) (i32.shl (local.get $c) (i32.const 3))) (f64.mul (f64.load (i32.add (local.get $s) (i32.shl (local.get $c) (i32.const 3)))) (local.get $inv)))))
 (local.set $s (i32.add (local.get $s) (local.get $ldb)))
 (local.set $o (i32.add (local.get $o) (i32.shl (local.get $cols) (i32.const 3))))
 (local.set $r (i32.add (local.get $r) (i32.const 1))) (br $lr)))
(i32.const 1))`;
}
