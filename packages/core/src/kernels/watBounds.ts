/**
 * WAT of the two O(N·d) passes of the fused driver's `rowShift: "bound"` form (softmaxWasm.ts
 * `boundSoftmaxAttention`) that ran as JavaScript loops beside its O(N²·d) kernels (issue 14):
 *
 *  - `key_panel_norms_f64` / `_f32(panels, count, depth, kabs)` → max_j ‖k_j‖²: over `count` key
 *    panels as the driver packs them (nr = 4 float64 / 8 float32 keys each, key j's column p at
 *    element p·nr + j mod nr of its panel, `depth` columns), each key's Σ_p k_jp² from 0 in p order,
 *    and kabs[p] = max_j |k_jp| (float64 at kabs); NaN when some k_jp is NaN;
 *  - `scale_rows_bounds(src, ld, rows, d, factor, dst, dst32, kabs, knorm, slack, maxshift, mp)`:
 *    each of `rows` float64 rows at src (row stride ld) times `factor` into the query block at dst
 *    (row stride d; float32 rounded when dst32), and from the stored values x (float32 widened) the
 *    row's shift bound m = min(√(Σ_p x_p²)·knorm, Σ_p |x_p|·kabs[p])·slack, both sums from 0 in p
 *    order, stored at mp[r] as ⌈m⌉ when m ≤ maxshift and 0 otherwise (NaN included: the driver then
 *    recomputes the row with the row max).
 *
 * They perform the JavaScript's operations in its order — per key / per row sequential sums, the
 * maxima (order-free: |x| is never −0, and f64.max propagates a NaN as the loops' `|| isNaN` did),
 * Math.min (f64x2.min: NaN-propagating, −0 below +0) and Math.ceil (f64x2.ceil) — so the bounds,
 * hence every row's shift and result, keep their bits. The SIMD runs across keys (lanes of a panel)
 * and across rows (two rows per f64x2, four per step), never along p, so it reorders no sum.
 * Measured at N = 4096, d = 64 (stop 42): these passes and the packing took ≈ 3–4 ms of JavaScript per
 * call (the K loop with its `Math.fround` ≈ 3 ns per entry), ≈ 3 % of a float32 attention call.
 */

/**
 * `key_panel_norms_<ty>`: float64 panels of 4 keys (two f64x2 per column) or float32 panels of 8
 * (two f32x4 per column, widened exactly into four f64x2). Four sum chains per panel, one per
 * vector. The maxima by pmax (one maxpd; V8's IEEE f64x2.max and f64.max are instruction sequences):
 * exact on the values here, which are ≥ 0 and never −0, with a NaN tracked apart (x ≠ x) and
 * returned as the result — the JavaScript's NaN bound, whose rows all took the row max. Per column
 * p a running pair of lane maxima at kabs + 16p, folded at the end into kabs[p] (float64, in place,
 * in ascending p: entry p is written after pair p/2 was read). The caller reserves 16·depth bytes.
 */
function keyPanelNormsFunction(ty: "f64" | "f32"): string {
  const f32 = ty === "f32";
  const nr = f32 ? 8 : 4;
  const es = f32 ? 4 : 8;
  const vecs = f32 ? 4 : 2;
  const xs = Array.from({ length: vecs }, (_, u) => `$x${u}`);
  const ss = Array.from({ length: vecs }, (_, u) => `$s${u}`);
  const hi = "(i8x16.shuffle 8 9 10 11 12 13 14 15 0 1 2 3 4 5 6 7 (local.get $w) (local.get $w))";
  const loads = f32
    ? [0, 1].flatMap((h) => [
        `(local.set $w (v128.load offset=${16 * h} (local.get $q)))`,
        `(local.set $x${2 * h} (f64x2.promote_low_f32x4 (local.get $w)))`,
        `(local.set $x${2 * h + 1} (f64x2.promote_low_f32x4 ${hi}))`,
      ])
    : [0, 1].map((u) => `(local.set $x${u} (v128.load offset=${16 * u} (local.get $q)))`);
  const fold = (op: string, vs: string[]) => vs.reduce((a, b) => `(${op} ${a} ${b})`);
  const absMax = fold(
    "f64x2.pmax",
    xs.map((x) => `(f64x2.abs (local.get ${x}))`),
  );
  const nanOr = fold(
    "v128.or",
    xs.map((x) => `(f64x2.ne (local.get ${x}) (local.get ${x}))`),
  );
  const lanesMax = (v: string) =>
    `(select (f64x2.extract_lane 0 ${v}) (f64x2.extract_lane 1 ${v}) (f64.gt (f64x2.extract_lane 0 ${v}) (f64x2.extract_lane 1 ${v})))`;
  return `(func $key_panel_norms_${ty} (export "key_panel_norms_${ty}") (param $panels i32) (param $count i32) (param $depth i32) (param $kabs i32) (result f64)
(local $i i32) (local $p i32) (local $q i32) (local $ka i32) (local $w v128) (local $vm v128) (local $vn v128)
${[...xs, ...ss].map((v) => `(local ${v} v128)`).join(" ")}
(local.set $vm (v128.const i64x2 0 0)) (local.set $vn (v128.const i64x2 0 0))
(local.set $p (i32.const 0))
(block $dz (loop $lz (br_if $dz (i32.ge_s (local.get $p) (local.get $depth)))
 (v128.store (i32.add (local.get $kabs) (i32.shl (local.get $p) (i32.const 4))) (v128.const i64x2 0 0))
 (local.set $p (i32.add (local.get $p) (i32.const 1))) (br $lz)))
(local.set $q (local.get $panels))
(local.set $i (i32.const 0))
(block $di (loop $li (br_if $di (i32.ge_s (local.get $i) (local.get $count)))
 ${ss.map((s) => `(local.set ${s} (v128.const i64x2 0 0))`).join(" ")}
 (local.set $ka (local.get $kabs))
 (local.set $p (i32.const 0))
 (block $dp (loop $lp (br_if $dp (i32.ge_s (local.get $p) (local.get $depth)))
  ${loads.join("\n  ")}
  ${xs.map((x, u) => `(local.set ${ss[u]} (f64x2.add (local.get ${ss[u]}) (f64x2.mul (local.get ${x}) (local.get ${x}))))`).join("\n  ")}
  (v128.store (local.get $ka) (f64x2.pmax (v128.load (local.get $ka)) ${absMax}))
  (local.set $vn (v128.or (local.get $vn) ${nanOr}))
  (local.set $ka (i32.add (local.get $ka) (i32.const 16)))
  (local.set $q (i32.add (local.get $q) (i32.const ${nr * es})))
  (local.set $p (i32.add (local.get $p) (i32.const 1))) (br $lp)))
 (local.set $vm (f64x2.pmax (local.get $vm) ${fold(
   "f64x2.pmax",
   ss.map((s) => `(local.get ${s})`),
 )}))
 (local.set $i (i32.add (local.get $i) (i32.const 1))) (br $li)))
(local.set $p (i32.const 0))
(block $df (loop $lf (br_if $df (i32.ge_s (local.get $p) (local.get $depth)))
 (local.set $w (v128.load (i32.add (local.get $kabs) (i32.shl (local.get $p) (i32.const 4)))))
 (f64.store (i32.add (local.get $kabs) (i32.shl (local.get $p) (i32.const 3))) ${lanesMax("(local.get $w)")})
 (local.set $p (i32.add (local.get $p) (i32.const 1))) (br $lf)))
(select (f64.const nan) ${lanesMax("(local.get $vm)")} (v128.any_true (local.get $vn))))`;
}

/**
 * WAT: the byte address of row r + u (the locals `$r`, `$rows`, `$last` = rows − 1) from `base` (a
 * local) with a row stride of `stride` bytes (a WAT expression), a row past the block clamped to its
 * last row — the four-rows-per-step loops' lanes (`scale_rows_bounds`, watFeatures.ts'
 * `rows_sumsq_f64`), which thus need no tail loop.
 */
export const rowAddr = (base: string, stride: string, u: number) =>
  `(i32.add (local.get ${base}) (i32.mul (select (i32.add (local.get $r) (i32.const ${u})) (local.get $last) (i32.lt_s (i32.add (local.get $r) (i32.const ${u})) (local.get $rows))) ${stride}))`;

/**
 * `scale_rows_bounds`: four rows per step, rows (r, r+1) in the lanes of one f64x2 and (r+2, r+3)
 * in another; a row index past the block is clamped to its last row, whose values are then loaded,
 * stored and bounded twice (the same values to the same addresses), so no tail loop is needed.
 */
function scaleRowsBoundsFunction(): string {
  const pairs = [0, 1];
  const L: string[] = [];
  L.push(
    '(func $scale_rows_bounds (export "scale_rows_bounds") (param $src i32) (param $ld i32) (param $rows i32) (param $d i32) (param $factor f64) (param $dst i32) (param $dst32 i32) (param $kabs i32) (param $knorm f64) (param $slack f64) (param $maxshift f64) (param $mp i32)',
  );
  L.push(
    "(local $r i32) (local $p i32) (local $last i32) (local $ldb i32) (local $es i32) (local $sb i32) (local $ka i32) (local $k v128) (local $f v128) (local $b1 v128) (local $b v128)",
  );
  for (const h of pairs) {
    L.push(
      `(local $sa${h} i32) (local $sc${h} i32) (local $da${h} i32) (local $dc${h} i32) (local $x${h} v128) (local $y${h} v128) (local $q${h} v128) (local $t${h} v128)`,
    );
  }
  L.push("(local.set $last (i32.sub (local.get $rows) (i32.const 1)))");
  L.push("(local.set $ldb (i32.shl (local.get $ld) (i32.const 3)))");
  L.push("(local.set $es (select (i32.const 4) (i32.const 8) (local.get $dst32)))");
  L.push("(local.set $sb (i32.mul (local.get $d) (local.get $es)))");
  L.push("(local.set $f (f64x2.splat (local.get $factor)))");
  L.push("(local.set $r (i32.const 0))");
  L.push("(block $dr (loop $lr (br_if $dr (i32.ge_s (local.get $r) (local.get $rows)))");
  for (const h of pairs) {
    L.push(`(local.set $sa${h} ${rowAddr("$src", "(local.get $ldb)", 2 * h)})`);
    L.push(`(local.set $sc${h} ${rowAddr("$src", "(local.get $ldb)", 2 * h + 1)})`);
    L.push(`(local.set $da${h} ${rowAddr("$dst", "(local.get $sb)", 2 * h)})`);
    L.push(`(local.set $dc${h} ${rowAddr("$dst", "(local.get $sb)", 2 * h + 1)})`);
    L.push(`(local.set $q${h} (v128.const i64x2 0 0)) (local.set $t${h} (v128.const i64x2 0 0))`);
  }
  L.push("(local.set $ka (local.get $kabs))");
  L.push("(local.set $p (i32.const 0))");
  L.push("(block $dp (loop $lp (br_if $dp (i32.ge_s (local.get $p) (local.get $d)))");
  L.push("(local.set $k (v128.load64_splat (local.get $ka)))");
  for (const h of pairs) {
    // x = Q·factor for the two rows (one rounding, as the JavaScript product), stored in the
    // block's precision and read back as stored (float32: the rounded value, widened exactly).
    L.push(`(local.set $x${h} (f64x2.mul (v128.load64_lane 1 (local.get $sc${h}) (v128.load64_zero (local.get $sa${h}))) (local.get $f)))`);
  }
  L.push("(if (local.get $dst32) (then");
  for (const h of pairs) {
    L.push(`(local.set $y${h} (f32x4.demote_f64x2_zero (local.get $x${h})))`);
    L.push(`(v128.store32_lane 0 (local.get $da${h}) (local.get $y${h})) (v128.store32_lane 1 (local.get $dc${h}) (local.get $y${h}))`);
    L.push(`(local.set $x${h} (f64x2.promote_low_f32x4 (local.get $y${h})))`);
    L.push(
      `(local.set $da${h} (i32.add (local.get $da${h}) (i32.const 4))) (local.set $dc${h} (i32.add (local.get $dc${h}) (i32.const 4)))`,
    );
  }
  L.push(") (else");
  for (const h of pairs) {
    L.push(`(v128.store64_lane 0 (local.get $da${h}) (local.get $x${h})) (v128.store64_lane 1 (local.get $dc${h}) (local.get $x${h}))`);
    L.push(
      `(local.set $da${h} (i32.add (local.get $da${h}) (i32.const 8))) (local.set $dc${h} (i32.add (local.get $dc${h}) (i32.const 8)))`,
    );
  }
  L.push("))");
  for (const h of pairs) {
    L.push(`(local.set $q${h} (f64x2.add (local.get $q${h}) (f64x2.mul (local.get $x${h}) (local.get $x${h}))))`);
    L.push(`(local.set $t${h} (f64x2.add (local.get $t${h}) (f64x2.mul (f64x2.abs (local.get $x${h})) (local.get $k))))`);
    L.push(
      `(local.set $sa${h} (i32.add (local.get $sa${h}) (i32.const 8))) (local.set $sc${h} (i32.add (local.get $sc${h}) (i32.const 8)))`,
    );
  }
  L.push("(local.set $ka (i32.add (local.get $ka) (i32.const 8)))");
  L.push("(local.set $p (i32.add (local.get $p) (i32.const 1))) (br $lp)))");
  for (const h of pairs) {
    // m = min(√sq·‖K‖, Σ|x|·max|K|)·slack, then ⌈m⌉ where m ≤ maxshift, else 0 (NaN: 0).
    L.push(`(local.set $b1 (f64x2.mul (f64x2.sqrt (local.get $q${h})) (f64x2.splat (local.get $knorm))))`);
    L.push(`(local.set $b (f64x2.mul (f64x2.min (local.get $b1) (local.get $t${h})) (f64x2.splat (local.get $slack))))`);
    L.push(
      `(local.set $b (v128.bitselect (f64x2.ceil (local.get $b)) (v128.const i64x2 0 0) (f64x2.le (local.get $b) (f64x2.splat (local.get $maxshift)))))`,
    );
    L.push(`(v128.store64_lane 0 ${rowAddr("$mp", "(i32.const 8)", 2 * h)} (local.get $b))`);
    L.push(`(v128.store64_lane 1 ${rowAddr("$mp", "(i32.const 8)", 2 * h + 1)} (local.get $b))`);
  }
  L.push("(local.set $r (i32.add (local.get $r) (i32.const 4))) (br $lr)))");
  L.push(")");
  return L.join("\n");
}

/** The bound form's pass kernels, in the main kernel module. */
export function boundPassFunctions(): string[] {
  return [keyPanelNormsFunction("f64"), keyPanelNormsFunction("f32"), scaleRowsBoundsFunction()];
}
