import { E4, EXP_LOCALS, V4_LOCALS, X4, expFast, expInline } from "./watExp.js";

/**
 * WAT of the elementwise passes of a model's layer step (issue 14, pretrained/resident.ts): RMSNorm
 * rows, RoPE (half pairing), SwiGLU, residual adds and a finiteness test, over operands resident in
 * kernel memory. At the shipped models' sizes these passes, as JavaScript loops over typed arrays,
 * cost ≈ 2.5–4 ns per element (measured on the 2-core EPYC) — more than a third of an N = 128 prefill;
 * here they run over f64x2 vectors with no bounds checks.
 *
 * Every function performs the same IEEE operations, in the same order per element, as the
 * JavaScript loop it replaces (no FMA exists in SIMD128; reductions stay sequential and scalar), so
 * results are unchanged bit for bit: RMSNorm's Σ x² is one sequential f64 sum, its scaling is
 * elementwise; SwiGLU runs the module's exp inline, `exp_f64`'s code (whose result per element does
 * not depend on the grouping). Appended to the module by `kernelWat()` (wat.ts), after every existing function.
 * Byte addresses; strides and counts in elements.
 */

/**
 * `rms_rows_f64(src, dst, rows, cols, gain, eps, out32)`: dst row r = gain ⊙ (x · inv) with
 * inv = 1 / √(Σ_j x_j² / cols + eps), Σ summed sequentially from j = 0 (norm.ts rmsNormRowsInto);
 * dst float64, or float32 (rounded) when out32 ≠ 0. Both with row stride `cols`. Returns 1 when
 * every value written (after the float32 rounding) is finite, else 0: `all_finite` on dst, fused
 * (Σ y·0 as there; the resident steps check every normalized block).
 * Four rows' sums run side by side in the lanes of two f64x2 accumulators (each lane the row's own
 * sequential sum, the same operations in the same order: same bits), so the four dependency chains
 * of adds overlap instead of one row's chain setting the pace (issue 14: ≈ 1–2 % of a prefill).
 */
function rmsRowsFunction(): string {
  const L: string[] = [];
  // One row's scaling, dst = row's first byte: gain ⊙ (x · inv), float64 or float32 (rounded);
  // returns Σ y·0 over the values stored (±0, or NaN once one is ±∞/NaN).
  L.push(
    "(func $rms_row_out (param $p i32) (param $dst i32) (param $cols i32) (param $gain i32) (param $inv f64) (param $out32 i32) (result f64)",
  );
  L.push("(local $j i32) (local $x f64) (local $vi v128) (local $y v128) (local $z v128)");
  L.push("(local.set $z (v128.const i64x2 0 0))");
  L.push("(local.set $vi (f64x2.splat (local.get $inv)))");
  L.push("(local.set $j (i32.const 0))");
  L.push("(block $vdone (loop $vloop (br_if $vdone (i32.gt_s (i32.add (local.get $j) (i32.const 2)) (local.get $cols)))");
  L.push(
    "(local.set $y (f64x2.mul (v128.load (i32.add (local.get $gain) (i32.shl (local.get $j) (i32.const 3)))) (f64x2.mul (v128.load (i32.add (local.get $p) (i32.shl (local.get $j) (i32.const 3)))) (local.get $vi))))",
  );
  L.push(
    "(if (local.get $out32) (then (local.set $y (f32x4.demote_f64x2_zero (local.get $y))) (v128.store64_lane 0 (i32.add (local.get $dst) (i32.shl (local.get $j) (i32.const 2))) (local.get $y)) (local.set $y (f64x2.promote_low_f32x4 (local.get $y))))",
  );
  L.push("(else (v128.store (i32.add (local.get $dst) (i32.shl (local.get $j) (i32.const 3))) (local.get $y))))");
  L.push("(local.set $z (f64x2.add (local.get $z) (f64x2.mul (local.get $y) (v128.const f64x2 0 0))))");
  L.push("(local.set $j (i32.add (local.get $j) (i32.const 2))) (br $vloop)))");
  L.push("(if (i32.lt_s (local.get $j) (local.get $cols)) (then");
  L.push(
    "(local.set $x (f64.mul (f64.load (i32.add (local.get $gain) (i32.shl (local.get $j) (i32.const 3)))) (f64.mul (f64.load (i32.add (local.get $p) (i32.shl (local.get $j) (i32.const 3)))) (local.get $inv))))",
  );
  L.push(
    "(if (local.get $out32) (then (local.set $x (f64.promote_f32 (f32.demote_f64 (local.get $x)))) (f32.store (i32.add (local.get $dst) (i32.shl (local.get $j) (i32.const 2))) (f32.demote_f64 (local.get $x))))",
  );
  L.push("(else (f64.store (i32.add (local.get $dst) (i32.shl (local.get $j) (i32.const 3))) (local.get $x))))");
  L.push("(local.set $z (f64x2.add (local.get $z) (f64x2.splat (f64.mul (local.get $x) (f64.const 0)))))))");
  L.push("(f64.add (f64x2.extract_lane 0 (local.get $z)) (f64x2.extract_lane 1 (local.get $z)))");
  L.push(")");
  // inv = 1 / √(ms / cols + eps), as the scalar form.
  const inv = (ms: string) =>
    `(f64.div (f64.const 1) (f64.sqrt (f64.add (f64.div ${ms} (f64.convert_i32_s (local.get $cols))) (local.get $eps))))`;
  // Row r's source and destination (the destination's element size 4 or 8 by out32).
  const src = (r: string) => `(i32.add (local.get $src) (i32.mul (i32.mul ${r} (local.get $cols)) (i32.const 8)))`;
  const dst = (r: string) =>
    `(i32.add (local.get $dst) (i32.shl (i32.mul ${r} (local.get $cols)) (select (i32.const 2) (i32.const 3) (local.get $out32))))`;
  const row = (q: number) => `(i32.add (local.get $r) (i32.const ${q}))`;
  const out = (p: string, d: string, iv: string) =>
    `(local.set $z (f64.add (local.get $z) (call $rms_row_out ${p} ${d} (local.get $cols) (local.get $gain) ${iv} (local.get $out32))))`;
  L.push(
    '(func $rms_rows_f64 (export "rms_rows_f64") (param $src i32) (param $dst i32) (param $rows i32) (param $cols i32) (param $gain i32) (param $eps f64) (param $out32 i32) (result i32)',
  );
  L.push(
    "(local $r i32) (local $j i32) (local $o i32) (local $p0 i32) (local $p1 i32) (local $p2 i32) (local $p3 i32) (local $ms f64) (local $x f64) (local $a v128) (local $b v128) (local $v v128) (local $z f64)",
  );
  L.push("(local.set $z (f64.const 0)) (local.set $r (i32.const 0))");
  // Four rows at a time: lanes (r, r + 1) in $a, (r + 2, r + 3) in $b.
  L.push("(block $qdone (loop $qloop (br_if $qdone (i32.gt_s (i32.add (local.get $r) (i32.const 4)) (local.get $rows)))");
  for (let q = 0; q < 4; q++) L.push(`(local.set $p${q} ${src(row(q))})`);
  L.push("(local.set $a (v128.const i64x2 0 0)) (local.set $b (v128.const i64x2 0 0)) (local.set $j (i32.const 0))");
  L.push("(block $sdone (loop $sloop (br_if $sdone (i32.ge_s (local.get $j) (local.get $cols)))");
  L.push("(local.set $o (i32.shl (local.get $j) (i32.const 3)))");
  L.push(
    "(local.set $v (f64x2.replace_lane 1 (f64x2.splat (f64.load (i32.add (local.get $p0) (local.get $o)))) (f64.load (i32.add (local.get $p1) (local.get $o)))))",
  );
  L.push("(local.set $a (f64x2.add (local.get $a) (f64x2.mul (local.get $v) (local.get $v))))");
  L.push(
    "(local.set $v (f64x2.replace_lane 1 (f64x2.splat (f64.load (i32.add (local.get $p2) (local.get $o)))) (f64.load (i32.add (local.get $p3) (local.get $o)))))",
  );
  L.push("(local.set $b (f64x2.add (local.get $b) (f64x2.mul (local.get $v) (local.get $v))))");
  L.push("(local.set $j (i32.add (local.get $j) (i32.const 1))) (br $sloop)))");
  for (let q = 0; q < 4; q++) {
    const lane = `(f64x2.extract_lane ${q % 2} (local.get ${q < 2 ? "$a" : "$b"}))`;
    L.push(out(`(local.get $p${q})`, dst(row(q)), inv(lane)));
  }
  L.push("(local.set $r (i32.add (local.get $r) (i32.const 4))) (br $qloop)))");
  // The last rows one by one.
  L.push("(block $rdone (loop $rloop (br_if $rdone (i32.ge_s (local.get $r) (local.get $rows)))");
  L.push(`(local.set $p0 ${src("(local.get $r)")})`);
  L.push("(local.set $ms (f64.const 0)) (local.set $j (i32.const 0))");
  L.push("(block $tdone (loop $tloop (br_if $tdone (i32.ge_s (local.get $j) (local.get $cols)))");
  L.push("(local.set $x (f64.load (i32.add (local.get $p0) (i32.shl (local.get $j) (i32.const 3)))))");
  L.push("(local.set $ms (f64.add (local.get $ms) (f64.mul (local.get $x) (local.get $x))))");
  L.push("(local.set $j (i32.add (local.get $j) (i32.const 1))) (br $tloop)))");
  L.push(out("(local.get $p0)", dst("(local.get $r)"), inv("(local.get $ms)")));
  L.push("(local.set $r (i32.add (local.get $r) (i32.const 1))) (br $rloop)))");
  L.push("(f64.eq (local.get $z) (local.get $z))");
  L.push(")");
  return L.join("\n");
}

/**
 * `rope_half_f64(p, ld, rows, blocks, dh, tab)`: RoPE with the half pairing (p, p + dh/2) in place
 * on `blocks` adjacent dh-wide column blocks of a row-major block (row stride ld): a' = a·c − b·s,
 * b' = a·s + b·c (rope.ts rotateColumnsInPlace), with row i's cos at tab + i·dh and sin at
 * tab + i·dh + dh/2 (float64). dh/2 must be even.
 */
function ropeHalfFunction(): string {
  const L: string[] = [];
  L.push(
    '(func $rope_half_f64 (export "rope_half_f64") (param $p i32) (param $ld i32) (param $rows i32) (param $blocks i32) (param $dh i32) (param $tab i32)',
  );
  L.push(
    "(local $i i32) (local $b i32) (local $j i32) (local $row i32) (local $t i32) (local $o i32) (local $hb i32) (local $va v128) (local $vb v128) (local $c v128) (local $s v128)",
  );
  L.push("(local.set $hb (i32.shl (local.get $dh) (i32.const 2)))"); // (dh/2)·8 bytes
  L.push("(local.set $i (i32.const 0))");
  L.push("(block $idone (loop $iloop (br_if $idone (i32.ge_s (local.get $i) (local.get $rows)))");
  L.push("(local.set $row (i32.add (local.get $p) (i32.mul (i32.mul (local.get $i) (local.get $ld)) (i32.const 8))))");
  L.push("(local.set $t (i32.add (local.get $tab) (i32.mul (i32.mul (local.get $i) (local.get $dh)) (i32.const 8))))");
  L.push("(local.set $b (i32.const 0))");
  L.push("(block $bdone (loop $bloop (br_if $bdone (i32.ge_s (local.get $b) (local.get $blocks)))");
  L.push("(local.set $o (i32.add (local.get $row) (i32.mul (i32.mul (local.get $b) (local.get $dh)) (i32.const 8))))");
  L.push("(local.set $j (i32.const 0))");
  L.push("(block $jdone (loop $jloop (br_if $jdone (i32.ge_s (local.get $j) (local.get $hb)))");
  L.push("(local.set $va (v128.load (i32.add (local.get $o) (local.get $j))))");
  L.push("(local.set $vb (v128.load (i32.add (i32.add (local.get $o) (local.get $hb)) (local.get $j))))");
  L.push("(local.set $c (v128.load (i32.add (local.get $t) (local.get $j))))");
  L.push("(local.set $s (v128.load (i32.add (i32.add (local.get $t) (local.get $hb)) (local.get $j))))");
  L.push(
    "(v128.store (i32.add (local.get $o) (local.get $j)) (f64x2.sub (f64x2.mul (local.get $va) (local.get $c)) (f64x2.mul (local.get $vb) (local.get $s))))",
  );
  L.push(
    "(v128.store (i32.add (i32.add (local.get $o) (local.get $hb)) (local.get $j)) (f64x2.add (f64x2.mul (local.get $va) (local.get $s)) (f64x2.mul (local.get $vb) (local.get $c))))",
  );
  L.push("(local.set $j (i32.add (local.get $j) (i32.const 16))) (br $jloop)))");
  L.push("(local.set $b (i32.add (local.get $b) (i32.const 1))) (br $bloop)))");
  L.push("(local.set $i (i32.add (local.get $i) (i32.const 1))) (br $iloop)))");
  L.push(")");
  return L.join("\n");
}

/**
 * `swiglu_f64(gp, hp, rows, n, in32)`: SwiGLU's hidden rows h = (g / (1 + e^{−g})) · u from the
 * joined gate/up rows [g | u] (2n wide at gp) into h (n wide at hp), as fused.ts gluForward, with
 * e^{−g} by the module's exp inline — `exp_f64`'s code (eight at a time through `expFast`, then
 * pairs and the odd one through `expInline`), whose result per element does not depend on the path
 * its group takes, so the same bits as calling `exp_f64` on the row (the form before stop 25, which
 * stored e^{−g} to a scratch row and read it back: ≈ 2 ns per element, 6 % of a float32 Llama
 * N = 128 prefill). in32 ≠ 0: [g | u] and h are float32 (g, u widened exactly; h rounded), the
 * arithmetic float64.
 */
function swigluFunction(): string {
  const L: string[] = [];
  L.push('(func $swiglu_f64 (export "swiglu_f64") (param $gp i32) (param $hp i32) (param $rows i32) (param $n i32) (param $in32 i32)');
  L.push(`(local $r i32) (local $j i32) (local $g i32) (local $h i32) ${V4_LOCALS} ${EXP_LOCALS}`);
  // One row's loops for float64 (is32 false) or float32 storage: g at $g, u n further, h at $h.
  const rowLoops = (is32: boolean) => {
    const sh = is32 ? 2 : 3;
    const at = (base: string, off: number) =>
      `(i32.add (local.get ${base}) (i32.shl (i32.add (local.get $j) (i32.const ${off})) (i32.const ${sh})))`;
    const atU = (off: number) =>
      `(i32.add (local.get $g) (i32.shl (i32.add (i32.add (local.get $j) (local.get $n)) (i32.const ${off})) (i32.const ${sh})))`;
    // A pair (two lanes) of float64 values at byte address a.
    const pair = (a: string) => (is32 ? `(f64x2.promote_low_f32x4 (v128.load64_zero ${a}))` : `(v128.load ${a})`);
    const one = (a: string) => (is32 ? `(f64.promote_f32 (f32.load ${a}))` : `(f64.load ${a})`);
    const y = (off: number, e: string) =>
      `(f64x2.mul (f64x2.div ${pair(at("$g", off))} (f64x2.add (v128.const f64x2 1 1) (local.get ${e}))) ${pair(atU(off))})`;
    const storePair = (off: number, v: string) =>
      is32 ? `(v128.store64_lane 0 ${at("$h", off)} (f32x4.demote_f64x2_zero ${v}))` : `(v128.store ${at("$h", off)} ${v})`;
    const R: string[] = [];
    R.push("(local.set $j (i32.const 0))");
    R.push("(block $d8 (loop $l8 (br_if $d8 (i32.gt_s (i32.add (local.get $j) (i32.const 8)) (local.get $n)))");
    for (let u = 0; u < 4; u++) R.push(`(local.set ${X4[u]} (f64x2.neg ${pair(at("$g", 2 * u))}))`);
    R.push(...expFast(X4, E4, true));
    for (let u = 0; u < 4; u++) R.push(storePair(2 * u, y(2 * u, E4[u])));
    R.push("(local.set $j (i32.add (local.get $j) (i32.const 8))) (br $l8)))");
    R.push("(block $d2 (loop $l2 (br_if $d2 (i32.gt_s (i32.add (local.get $j) (i32.const 2)) (local.get $n)))");
    R.push(`(local.set $x0 (f64x2.neg ${pair(at("$g", 0))}))`);
    R.push(...expInline(["$x0"], ["$e0"]));
    R.push(storePair(0, y(0, "$e0")));
    R.push("(local.set $j (i32.add (local.get $j) (i32.const 2))) (br $l2)))");
    R.push("(if (i32.lt_s (local.get $j) (local.get $n)) (then");
    R.push(`(local.set $x0 (f64x2.splat (f64.neg ${one(at("$g", 0))})))`);
    R.push(...expInline(["$x0"], ["$e0"]));
    const last = `(f64.mul (f64.div ${one(at("$g", 0))} (f64.add (f64.const 1) (f64x2.extract_lane 0 (local.get $e0)))) ${one(atU(0))})`;
    R.push(is32 ? `(f32.store ${at("$h", 0)} (f32.demote_f64 ${last}))))` : `(f64.store ${at("$h", 0)} ${last})))`);
    return R.join("\n");
  };
  L.push("(local.set $r (i32.const 0))");
  L.push("(block $rdone (loop $rloop (br_if $rdone (i32.ge_s (local.get $r) (local.get $rows)))");
  L.push("(if (local.get $in32) (then");
  L.push("(local.set $g (i32.add (local.get $gp) (i32.mul (i32.mul (local.get $r) (local.get $n)) (i32.const 8))))");
  L.push("(local.set $h (i32.add (local.get $hp) (i32.mul (i32.mul (local.get $r) (local.get $n)) (i32.const 4))))");
  L.push(rowLoops(true));
  L.push(")(else");
  L.push("(local.set $g (i32.add (local.get $gp) (i32.mul (i32.mul (local.get $r) (local.get $n)) (i32.const 16))))");
  L.push("(local.set $h (i32.add (local.get $hp) (i32.mul (i32.mul (local.get $r) (local.get $n)) (i32.const 8))))");
  L.push(rowLoops(false));
  L.push("))");
  L.push("(local.set $r (i32.add (local.get $r) (i32.const 1))) (br $rloop)))");
  L.push(")");
  return L.join("\n");
}

/**
 * `add_rows_f64(a, b, dst, n, a32)`: dst[i] = a[i] + b[i] over n elements, float64 (a float32
 * widened when a32 ≠ 0): the residual adds. dst may be a or b.
 */
function addFunction(): string {
  const L: string[] = [];
  L.push('(func $add_rows_f64 (export "add_rows_f64") (param $a i32) (param $b i32) (param $dst i32) (param $n i32) (param $a32 i32)');
  L.push("(local $j i32) (local $va v128)");
  L.push("(local.set $j (i32.const 0))");
  L.push("(block $vdone (loop $vloop (br_if $vdone (i32.gt_s (i32.add (local.get $j) (i32.const 2)) (local.get $n)))");
  L.push(
    "(local.set $va (if (result v128) (local.get $a32) (then (f64x2.promote_low_f32x4 (v128.load64_zero (i32.add (local.get $a) (i32.shl (local.get $j) (i32.const 2)))))) (else (v128.load (i32.add (local.get $a) (i32.shl (local.get $j) (i32.const 3)))))))",
  );
  L.push(
    "(v128.store (i32.add (local.get $dst) (i32.shl (local.get $j) (i32.const 3))) (f64x2.add (local.get $va) (v128.load (i32.add (local.get $b) (i32.shl (local.get $j) (i32.const 3))))))",
  );
  L.push("(local.set $j (i32.add (local.get $j) (i32.const 2))) (br $vloop)))");
  L.push("(if (i32.lt_s (local.get $j) (local.get $n)) (then");
  L.push(
    "(f64.store (i32.add (local.get $dst) (i32.shl (local.get $j) (i32.const 3))) (f64.add (if (result f64) (local.get $a32) (then (f64.promote_f32 (f32.load (i32.add (local.get $a) (i32.shl (local.get $j) (i32.const 2)))))) (else (f64.load (i32.add (local.get $a) (i32.shl (local.get $j) (i32.const 3)))))) (f64.load (i32.add (local.get $b) (i32.shl (local.get $j) (i32.const 3))))))))",
  );
  L.push(")");
  return L.join("\n");
}

/**
 * `all_finite(p, n, is32)` → 1 when all n entries (float64, or float32 when is32 ≠ 0) are finite,
 * else 0: Σ x·0 is ±0 for finite x and NaN as soon as one x is ±∞ or NaN.
 */
function allFiniteFunction(): string {
  const L: string[] = [];
  L.push('(func $all_finite (export "all_finite") (param $p i32) (param $n i32) (param $is32 i32) (result i32)');
  L.push("(local $j i32) (local $acc v128) (local $s f64)");
  L.push("(local.set $acc (v128.const f64x2 0 0)) (local.set $j (i32.const 0))");
  L.push("(if (local.get $is32) (then");
  L.push("(block $fdone (loop $floop (br_if $fdone (i32.gt_s (i32.add (local.get $j) (i32.const 4)) (local.get $n)))");
  L.push(
    "(local.set $acc (f32x4.add (local.get $acc) (f32x4.mul (v128.load (i32.add (local.get $p) (i32.shl (local.get $j) (i32.const 2)))) (v128.const f32x4 0 0 0 0))))",
  );
  L.push("(local.set $j (i32.add (local.get $j) (i32.const 4))) (br $floop)))");
  L.push(
    "(local.set $s (f64.promote_f32 (f32.add (f32.add (f32x4.extract_lane 0 (local.get $acc)) (f32x4.extract_lane 1 (local.get $acc))) (f32.add (f32x4.extract_lane 2 (local.get $acc)) (f32x4.extract_lane 3 (local.get $acc))))))",
  );
  L.push("(block $tdone (loop $tloop (br_if $tdone (i32.ge_s (local.get $j) (local.get $n)))");
  L.push(
    "(local.set $s (f64.add (local.get $s) (f64.mul (f64.promote_f32 (f32.load (i32.add (local.get $p) (i32.shl (local.get $j) (i32.const 2))))) (f64.const 0))))",
  );
  L.push("(local.set $j (i32.add (local.get $j) (i32.const 1))) (br $tloop)))");
  L.push(")(else");
  L.push("(block $ddone (loop $dloop (br_if $ddone (i32.gt_s (i32.add (local.get $j) (i32.const 2)) (local.get $n)))");
  L.push(
    "(local.set $acc (f64x2.add (local.get $acc) (f64x2.mul (v128.load (i32.add (local.get $p) (i32.shl (local.get $j) (i32.const 3)))) (v128.const f64x2 0 0))))",
  );
  L.push("(local.set $j (i32.add (local.get $j) (i32.const 2))) (br $dloop)))");
  L.push("(local.set $s (f64.add (f64x2.extract_lane 0 (local.get $acc)) (f64x2.extract_lane 1 (local.get $acc))))");
  L.push("(if (i32.lt_s (local.get $j) (local.get $n)) (then");
  L.push(
    "(local.set $s (f64.add (local.get $s) (f64.mul (f64.load (i32.add (local.get $p) (i32.shl (local.get $j) (i32.const 3)))) (f64.const 0))))))",
  );
  L.push("))");
  L.push("(f64.eq (local.get $s) (local.get $s))");
  L.push(")");
  return L.join("\n");
}

/**
 * `copy_cols_f64(src, ld, dst, rows, cols)`: columns 0 … cols − 1 of `rows` rows (row stride ld,
 * from src) into a contiguous rows × cols block at dst — one KV head's keys or values out of the
 * joined Q/K/V block. cols even.
 */
function copyColsFunction(): string {
  const L: string[] = [];
  L.push(
    '(func $copy_cols_f64 (export "copy_cols_f64") (param $src i32) (param $ld i32) (param $dst i32) (param $rows i32) (param $cols i32)',
  );
  L.push("(local $r i32) (local $j i32) (local $p i32) (local $w i32)");
  L.push("(local.set $w (i32.shl (local.get $cols) (i32.const 3)))");
  L.push("(local.set $r (i32.const 0))");
  L.push("(block $rdone (loop $rloop (br_if $rdone (i32.ge_s (local.get $r) (local.get $rows)))");
  L.push("(local.set $p (i32.add (local.get $src) (i32.mul (i32.mul (local.get $r) (local.get $ld)) (i32.const 8))))");
  L.push("(local.set $j (i32.const 0))");
  L.push("(block $jdone (loop $jloop (br_if $jdone (i32.ge_s (local.get $j) (local.get $w)))");
  L.push("(v128.store (i32.add (local.get $dst) (local.get $j)) (v128.load (i32.add (local.get $p) (local.get $j))))");
  L.push("(local.set $j (i32.add (local.get $j) (i32.const 16))) (br $jloop)))");
  L.push("(local.set $dst (i32.add (local.get $dst) (local.get $w)))");
  L.push("(local.set $r (i32.add (local.get $r) (i32.const 1))) (br $rloop)))");
  L.push(")");
  return L.join("\n");
}

/**
 * `scale_rows_f64(src, ld, dst, rows, cols, s, out32)`: dst[r·cols + p] = src[r·ld + p]·s, float64
 * or rounded to float32 when out32 ≠ 0 — the fused driver's scaled query block (scale·Q).
 */
function scaleRowsFunction(): string {
  const L: string[] = [];
  L.push(
    '(func $scale_rows_f64 (export "scale_rows_f64") (param $src i32) (param $ld i32) (param $dst i32) (param $rows i32) (param $cols i32) (param $s f64) (param $out32 i32)',
  );
  L.push("(local $r i32) (local $j i32) (local $p i32) (local $q i32) (local $vs v128) (local $y v128) (local $x f64)");
  L.push("(local.set $vs (f64x2.splat (local.get $s)))");
  L.push("(local.set $r (i32.const 0))");
  L.push("(block $rdone (loop $rloop (br_if $rdone (i32.ge_s (local.get $r) (local.get $rows)))");
  L.push("(local.set $p (i32.add (local.get $src) (i32.mul (i32.mul (local.get $r) (local.get $ld)) (i32.const 8))))");
  L.push("(local.set $q (i32.mul (local.get $r) (local.get $cols)))");
  L.push("(local.set $j (i32.const 0))");
  L.push("(block $vdone (loop $vloop (br_if $vdone (i32.gt_s (i32.add (local.get $j) (i32.const 2)) (local.get $cols)))");
  L.push("(local.set $y (f64x2.mul (v128.load (i32.add (local.get $p) (i32.shl (local.get $j) (i32.const 3)))) (local.get $vs)))");
  L.push(
    "(if (local.get $out32) (then (v128.store64_lane 0 (i32.add (local.get $dst) (i32.shl (i32.add (local.get $q) (local.get $j)) (i32.const 2))) (f32x4.demote_f64x2_zero (local.get $y))))",
  );
  L.push("(else (v128.store (i32.add (local.get $dst) (i32.shl (i32.add (local.get $q) (local.get $j)) (i32.const 3))) (local.get $y))))");
  L.push("(local.set $j (i32.add (local.get $j) (i32.const 2))) (br $vloop)))");
  L.push("(if (i32.lt_s (local.get $j) (local.get $cols)) (then");
  L.push("(local.set $x (f64.mul (f64.load (i32.add (local.get $p) (i32.shl (local.get $j) (i32.const 3)))) (local.get $s)))");
  L.push(
    "(if (local.get $out32) (then (f32.store (i32.add (local.get $dst) (i32.shl (i32.add (local.get $q) (local.get $j)) (i32.const 2))) (f32.demote_f64 (local.get $x))))",
  );
  L.push("(else (f64.store (i32.add (local.get $dst) (i32.shl (i32.add (local.get $q) (local.get $j)) (i32.const 3))) (local.get $x))))))");
  L.push("(local.set $r (i32.add (local.get $r) (i32.const 1))) (br $rloop)))");
  L.push(")");
  return L.join("\n");
}

/**
 * `rows_normalize_out(yp, lp, out, ldo, rows, cols, in32)` → 1 when every normalizer l[r] (float64
 * at lp) is in (0, ∞) and, when in32 ≠ 0, every output finite; else 0 (the caller's fallback):
 * out[r·ldo + c] = y[r·cols + c]·(1/l[r]) (y float64, or float32 widened) — the fused driver's Y out.
 */
function rowsNormalizeOutFunction(): string {
  const L: string[] = [];
  L.push(
    '(func $rows_normalize_out (export "rows_normalize_out") (param $yp i32) (param $lp i32) (param $out i32) (param $ldo i32) (param $rows i32) (param $cols i32) (param $in32 i32) (result i32)',
  );
  L.push("(local $r i32) (local $j i32) (local $o i32) (local $l f64) (local $vi v128) (local $y v128) (local $acc v128)");
  L.push("(local.set $acc (v128.const f64x2 0 0))");
  L.push("(local.set $r (i32.const 0))");
  L.push("(block $rdone (loop $rloop (br_if $rdone (i32.ge_s (local.get $r) (local.get $rows)))");
  L.push("(local.set $l (f64.load (i32.add (local.get $lp) (i32.shl (local.get $r) (i32.const 3)))))");
  L.push(
    "(if (i32.eqz (i32.and (f64.gt (local.get $l) (f64.const 0)) (f64.lt (local.get $l) (f64.const inf)))) (then (return (i32.const 0))))",
  );
  L.push("(local.set $vi (f64x2.splat (f64.div (f64.const 1) (local.get $l))))");
  L.push("(local.set $o (i32.add (local.get $out) (i32.mul (i32.mul (local.get $r) (local.get $ldo)) (i32.const 8))))");
  L.push("(local.set $j (i32.const 0))");
  L.push("(block $vdone (loop $vloop (br_if $vdone (i32.gt_s (i32.add (local.get $j) (i32.const 2)) (local.get $cols)))");
  L.push(
    "(local.set $y (if (result v128) (local.get $in32) (then (f64x2.promote_low_f32x4 (v128.load64_zero (i32.add (local.get $yp) (i32.shl (i32.add (i32.mul (local.get $r) (local.get $cols)) (local.get $j)) (i32.const 2)))))) (else (v128.load (i32.add (local.get $yp) (i32.shl (i32.add (i32.mul (local.get $r) (local.get $cols)) (local.get $j)) (i32.const 3)))))))",
  );
  L.push("(local.set $y (f64x2.mul (local.get $y) (local.get $vi)))");
  L.push("(local.set $acc (f64x2.add (local.get $acc) (f64x2.mul (local.get $y) (v128.const f64x2 0 0))))");
  L.push("(v128.store (i32.add (local.get $o) (i32.shl (local.get $j) (i32.const 3))) (local.get $y))");
  L.push("(local.set $j (i32.add (local.get $j) (i32.const 2))) (br $vloop)))");
  L.push("(if (i32.lt_s (local.get $j) (local.get $cols)) (then");
  L.push(
    "(local.set $y (f64x2.splat (f64.mul (if (result f64) (local.get $in32) (then (f64.promote_f32 (f32.load (i32.add (local.get $yp) (i32.shl (i32.add (i32.mul (local.get $r) (local.get $cols)) (local.get $j)) (i32.const 2)))))) (else (f64.load (i32.add (local.get $yp) (i32.shl (i32.add (i32.mul (local.get $r) (local.get $cols)) (local.get $j)) (i32.const 3)))))) (f64x2.extract_lane 0 (local.get $vi)))))",
  );
  L.push("(local.set $acc (f64x2.add (local.get $acc) (f64x2.mul (local.get $y) (v128.const f64x2 0 0))))");
  L.push("(f64.store (i32.add (local.get $o) (i32.shl (local.get $j) (i32.const 3))) (f64x2.extract_lane 0 (local.get $y)))))");
  L.push("(local.set $r (i32.add (local.get $r) (i32.const 1))) (br $rloop)))");
  L.push("(if (local.get $in32) (then");
  L.push("(return (f64.eq (f64.add (f64x2.extract_lane 0 (local.get $acc)) (f64x2.extract_lane 1 (local.get $acc))) (f64.const 0)))))");
  L.push("(i32.const 1)");
  L.push(")");
  return L.join("\n");
}

/**
 * `widen_f32(src, dst, n)`: dst[i] = src[i] widened from float32 to float64 (exact);
 * `narrow_f64(src, dst, n)`: dst[i] = src[i] rounded from float64 to float32 (round to nearest
 * even, as a Float32Array store rounds). The float32 products' conversions of the resident step
 * (issue 14: as typed-array `set` calls they cost ≈ 1 ns per element, ≈ 1.5 % of a float32 prefill).
 */
function convertFunctions(): string {
  const L: string[] = [];
  L.push('(func $widen_f32 (export "widen_f32") (param $src i32) (param $dst i32) (param $n i32)');
  L.push("(local $j i32)");
  L.push("(local.set $j (i32.const 0))");
  L.push("(block $vdone (loop $vloop (br_if $vdone (i32.gt_s (i32.add (local.get $j) (i32.const 4)) (local.get $n)))");
  L.push(
    "(v128.store (i32.add (local.get $dst) (i32.shl (local.get $j) (i32.const 3))) (f64x2.promote_low_f32x4 (v128.load64_zero (i32.add (local.get $src) (i32.shl (local.get $j) (i32.const 2))))))",
  );
  L.push(
    "(v128.store offset=16 (i32.add (local.get $dst) (i32.shl (local.get $j) (i32.const 3))) (f64x2.promote_low_f32x4 (v128.load64_zero offset=8 (i32.add (local.get $src) (i32.shl (local.get $j) (i32.const 2))))))",
  );
  L.push("(local.set $j (i32.add (local.get $j) (i32.const 4))) (br $vloop)))");
  L.push("(block $sdone (loop $sloop (br_if $sdone (i32.ge_s (local.get $j) (local.get $n)))");
  L.push(
    "(f64.store (i32.add (local.get $dst) (i32.shl (local.get $j) (i32.const 3))) (f64.promote_f32 (f32.load (i32.add (local.get $src) (i32.shl (local.get $j) (i32.const 2))))))",
  );
  L.push("(local.set $j (i32.add (local.get $j) (i32.const 1))) (br $sloop)))");
  L.push(")");
  L.push('(func $narrow_f64 (export "narrow_f64") (param $src i32) (param $dst i32) (param $n i32)');
  L.push("(local $j i32)");
  L.push("(local.set $j (i32.const 0))");
  L.push("(block $vdone (loop $vloop (br_if $vdone (i32.gt_s (i32.add (local.get $j) (i32.const 4)) (local.get $n)))");
  L.push(
    "(v128.store (i32.add (local.get $dst) (i32.shl (local.get $j) (i32.const 2))) (i8x16.shuffle 0 1 2 3 4 5 6 7 16 17 18 19 20 21 22 23 (f32x4.demote_f64x2_zero (v128.load (i32.add (local.get $src) (i32.shl (local.get $j) (i32.const 3))))) (f32x4.demote_f64x2_zero (v128.load offset=16 (i32.add (local.get $src) (i32.shl (local.get $j) (i32.const 3)))))))",
  );
  L.push("(local.set $j (i32.add (local.get $j) (i32.const 4))) (br $vloop)))");
  L.push("(block $sdone (loop $sloop (br_if $sdone (i32.ge_s (local.get $j) (local.get $n)))");
  L.push(
    "(f32.store (i32.add (local.get $dst) (i32.shl (local.get $j) (i32.const 2))) (f32.demote_f64 (f64.load (i32.add (local.get $src) (i32.shl (local.get $j) (i32.const 3))))))",
  );
  L.push("(local.set $j (i32.add (local.get $j) (i32.const 1))) (br $sloop)))");
  L.push(")");
  return L.join("\n");
}

/**
 * `rope_pairs_f64(p, ld, rows, blocks, bstride, dr, tab)`: RoPE with the interleaved pairing
 * (2q, 2q + 1) in place on `blocks` dr-wide column blocks per row (block b at element b·bstride
 * from p, row stride ld): a' = a·c − b·s, b' = a·s + b·c (rope.ts rotateColumnsInPlace), with row
 * i's (cos, sin) of pair q at tab + (i·dr + 2q)·8 (float64) — MLA's rope columns of every head and
 * the shared rotary key (pretrained/residentMla.ts). As one f64x2 [a, b]: [a, b]·[c, c] + [b, a]·
 * [−s, s]; a·c + b·(−s) is a·c − b·s exactly (negation is exact) and b·c + a·s is a·s + b·c
 * (IEEE addition commutes), so the bits are the loop's. dr even.
 */
function ropePairsFunction(): string {
  const L: string[] = [];
  L.push(
    '(func $rope_pairs_f64 (export "rope_pairs_f64") (param $p i32) (param $ld i32) (param $rows i32) (param $blocks i32) (param $bstride i32) (param $dr i32) (param $tab i32)',
  );
  L.push("(local $i i32) (local $b i32) (local $j i32) (local $o i32) (local $t i32) (local $w i32) (local $v v128) (local $cs v128)");
  L.push("(local.set $w (i32.shl (local.get $dr) (i32.const 3)))");
  L.push("(local.set $i (i32.const 0))");
  L.push("(block $idone (loop $iloop (br_if $idone (i32.ge_s (local.get $i) (local.get $rows)))");
  L.push("(local.set $t (i32.add (local.get $tab) (i32.mul (local.get $i) (local.get $w))))");
  L.push("(local.set $b (i32.const 0))");
  L.push("(block $bdone (loop $bloop (br_if $bdone (i32.ge_s (local.get $b) (local.get $blocks)))");
  L.push(
    "(local.set $o (i32.add (local.get $p) (i32.shl (i32.add (i32.mul (local.get $i) (local.get $ld)) (i32.mul (local.get $b) (local.get $bstride))) (i32.const 3))))",
  );
  L.push("(local.set $j (i32.const 0))");
  L.push("(block $jdone (loop $jloop (br_if $jdone (i32.ge_s (local.get $j) (local.get $w)))");
  L.push("(local.set $v (v128.load (i32.add (local.get $o) (local.get $j))))");
  L.push("(local.set $cs (v128.load (i32.add (local.get $t) (local.get $j))))");
  L.push(
    "(v128.store (i32.add (local.get $o) (local.get $j)) (f64x2.add (f64x2.mul (local.get $v) (i8x16.shuffle 0 1 2 3 4 5 6 7 0 1 2 3 4 5 6 7 (local.get $cs) (local.get $cs))) (f64x2.mul (i8x16.shuffle 8 9 10 11 12 13 14 15 0 1 2 3 4 5 6 7 (local.get $v) (local.get $v)) (f64x2.mul (i8x16.shuffle 8 9 10 11 12 13 14 15 8 9 10 11 12 13 14 15 (local.get $cs) (local.get $cs)) (v128.const f64x2 -1 1)))))",
  );
  L.push("(local.set $j (i32.add (local.get $j) (i32.const 16))) (br $jloop)))");
  L.push("(local.set $b (i32.add (local.get $b) (i32.const 1))) (br $bloop)))");
  L.push("(local.set $i (i32.add (local.get $i) (i32.const 1))) (br $iloop)))");
  L.push(")");
  return L.join("\n");
}

/** WAT: the f64 value at byte address `a` of a float32 (`is32`) or float64 array. */
const load64 = (is32: boolean, a: string) => (is32 ? `(f64.promote_f32 (f32.load ${a}))` : `(f64.load ${a})`);
/** WAT: stores the f64 value `x` at byte address `a`, rounded to float32 when `is32`. */
const store64 = (is32: boolean, a: string, x: string) => (is32 ? `(f32.store ${a} (f32.demote_f64 ${x}))` : `(f64.store ${a} ${x})`);
/** WAT: the loop `body` for one of the (src32, dst32, withmax) cases, chosen at run time once per call. */
const byTypes = (body: (s32: boolean, d32: boolean, mx: boolean) => string) => {
  const pair = (mx: boolean) =>
    `(if (local.get $src32) (then (if (local.get $dst32) (then ${body(true, true, mx)}) (else ${body(true, false, mx)}))) (else (if (local.get $dst32) (then ${body(false, true, mx)}) (else ${body(false, false, mx)}))))`;
  return `(if (local.get $withmax) (then ${pair(true)}) (else ${pair(false)}))`;
};
/**
 * WAT: max |x| so far in $mx (a compare and select; f64.max's NaN and ±0 handling cost a branchy
 * sequence per element) and whether some x was NaN in $nan — together Math.max's result.
 */
const trackMax = (x: string) =>
  `(local.set $a (f64.abs ${x})) (local.set $mx (select (local.get $a) (local.get $mx) (f64.gt (local.get $a) (local.get $mx)))) (local.set $nan (i32.or (local.get $nan) (f64.ne (local.get $a) (local.get $a))))`;

/**
 * `pack_key_panels(src, ld, n, cols, src32, dst, depth, nr, dst32, withmax)` → max |x| (NaN when
 * some x is NaN; 0 unless withmax): columns 0 … cols − 1 of the n rows at src (row stride ld,
 * float32 when src32) into the fused driver's key panels (softmaxWasm.ts packPanels, by rows: key
 * j's column c at element (⌊j/nr⌋·nr·depth + c·nr + j mod nr) from dst, float32 rounded when
 * dst32) — a depth-wide K_h assembled from column blocks (MLA: [L W_LK^h | k_R]) by one call per
 * block with dst advanced by the block's first column · nr. The padding keys of a last partial
 * panel are not written (the caller zeroes them once). One loop per type pair (a branch per
 * element made it ≈ 4 ns per entry).
 */
function packKeyPanelsFunction(): string {
  const loop = (s32: boolean, d32: boolean, withMax: boolean) => {
    const ss = s32 ? 2 : 3;
    const sd = d32 ? 2 : 3;
    const L: string[] = [];
    L.push("(local.set $step (i32.shl (local.get $nr) (i32.const " + sd + ")))");
    L.push("(local.set $pstep (i32.shl (i32.mul (local.get $nr) (local.get $depth)) (i32.const " + sd + ")))");
    L.push("(local.set $pb (local.get $dst)) (local.set $jj (i32.const 0)) (local.set $j (i32.const 0))");
    L.push("(block $jdone (loop $jloop (br_if $jdone (i32.ge_s (local.get $j) (local.get $n)))");
    L.push(`(local.set $s (i32.add (local.get $src) (i32.shl (i32.mul (local.get $j) (local.get $ld)) (i32.const ${ss}))))`);
    L.push(`(local.set $t (i32.add (local.get $pb) (i32.shl (local.get $jj) (i32.const ${sd}))))`);
    L.push(`(local.set $e (i32.add (local.get $s) (i32.shl (local.get $cols) (i32.const ${ss}))))`);
    L.push("(block $cdone (loop $cloop (br_if $cdone (i32.ge_u (local.get $s) (local.get $e)))");
    L.push(`(local.set $x ${load64(s32, "(local.get $s)")})`);
    if (withMax) L.push(trackMax("(local.get $x)"));
    L.push(store64(d32, "(local.get $t)", "(local.get $x)"));
    L.push("(local.set $t (i32.add (local.get $t) (local.get $step)))");
    L.push(`(local.set $s (i32.add (local.get $s) (i32.const ${s32 ? 4 : 8}))) (br $cloop)))`);
    L.push("(local.set $jj (i32.add (local.get $jj) (i32.const 1)))");
    L.push(
      "(if (i32.eq (local.get $jj) (local.get $nr)) (then (local.set $jj (i32.const 0)) (local.set $pb (i32.add (local.get $pb) (local.get $pstep)))))",
    );
    L.push("(local.set $j (i32.add (local.get $j) (i32.const 1))) (br $jloop)))");
    return L.join("\n");
  };
  const L: string[] = [];
  L.push(
    '(func $pack_key_panels (export "pack_key_panels") (param $src i32) (param $ld i32) (param $n i32) (param $cols i32) (param $src32 i32) (param $dst i32) (param $depth i32) (param $nr i32) (param $dst32 i32) (param $withmax i32) (result f64)',
  );
  L.push(
    "(local $j i32) (local $jj i32) (local $s i32) (local $e i32) (local $t i32) (local $pb i32) (local $step i32) (local $pstep i32) (local $x f64) (local $a f64) (local $mx f64) (local $nan i32)",
  );
  L.push("(local.set $mx (f64.const 0)) (local.set $nan (i32.const 0))");
  L.push(byTypes(loop));
  L.push("(select (f64.const nan) (local.get $mx) (local.get $nan))");
  L.push(")");
  return L.join("\n");
}

/**
 * `pack_value_panels(src, ld, n, cols, src32, dst, nr, dst32, withmax)` → max |x| (as
 * pack_key_panels): columns 0 … cols − 1 of the n rows at src into the fused driver's value panels
 * (packPanels by columns: column c of row i at element (⌊c/nr⌋·nr·n + i·nr + c mod nr) from dst),
 * the columns past `cols` of a last partial panel zero. Same-type full panels of 32 bytes (the
 * kernels' nr: 4 float64, 8 float32) copy as two v128 per row, the maxima by f64x2/f32x4.max of
 * the absolute values (NaN-propagating like Math.max; the max of float32 magnitudes is exact); float64
 * rows into float32 panels of 8 as four f64x2 rounded by f32x4.demote_f64x2_zero (stop 42: the
 * scalar loop was ≈ 1.2 ns per entry of the fused driver's float32 V).
 */
function packValuePanelsFunction(): string {
  const scalar = (s32: boolean, d32: boolean, withMax: boolean) => {
    const ss = s32 ? 2 : 3;
    const L: string[] = [];
    L.push("(local.set $t (local.get $dst)) (local.set $c0 (i32.const 0))");
    L.push("(block $cdone (loop $cloop (br_if $cdone (i32.ge_s (local.get $c0) (local.get $cols)))");
    L.push("(local.set $i (i32.const 0))");
    L.push("(block $idone (loop $iloop (br_if $idone (i32.ge_s (local.get $i) (local.get $n)))");
    L.push(
      `(local.set $s (i32.add (local.get $src) (i32.shl (i32.add (i32.mul (local.get $i) (local.get $ld)) (local.get $c0)) (i32.const ${ss}))))`,
    );
    L.push("(local.set $jj (i32.const 0))");
    L.push("(block $jdone (loop $jloop (br_if $jdone (i32.ge_s (local.get $jj) (local.get $nr)))");
    L.push("(local.set $x (f64.const 0))");
    L.push("(if (i32.lt_s (i32.add (local.get $c0) (local.get $jj)) (local.get $cols)) (then");
    L.push(`(local.set $x ${load64(s32, `(i32.add (local.get $s) (i32.shl (local.get $jj) (i32.const ${ss})))`)})`);
    L.push(`${withMax ? trackMax("(local.get $x)") : ""}))`);
    L.push(store64(d32, "(local.get $t)", "(local.get $x)"));
    L.push(`(local.set $t (i32.add (local.get $t) (i32.const ${d32 ? 4 : 8})))`);
    L.push("(local.set $jj (i32.add (local.get $jj) (i32.const 1))) (br $jloop)))");
    L.push("(local.set $i (i32.add (local.get $i) (i32.const 1))) (br $iloop)))");
    L.push("(local.set $c0 (i32.add (local.get $c0) (local.get $nr))) (br $cloop)))");
    return L.join("\n");
  };
  // Same type, nr·es = 32 bytes, cols a multiple of nr: two v128 per row and panel.
  const vector = (is32: boolean, withMax: boolean) => {
    const sh = is32 ? 2 : 3;
    const abs = is32 ? "f32x4.abs" : "f64x2.abs";
    const max = is32 ? "f32x4.pmax" : "f64x2.pmax";
    const ne = is32 ? "f32x4.ne" : "f64x2.ne";
    const L: string[] = [];
    L.push("(local.set $t (local.get $dst)) (local.set $c0 (i32.const 0))");
    L.push("(block $cdone (loop $cloop (br_if $cdone (i32.ge_s (local.get $c0) (local.get $cols)))");
    L.push(`(local.set $s (i32.add (local.get $src) (i32.shl (local.get $c0) (i32.const ${sh}))))`);
    L.push("(local.set $i (i32.const 0))");
    L.push("(block $idone (loop $iloop (br_if $idone (i32.ge_s (local.get $i) (local.get $n)))");
    L.push("(local.set $va (v128.load (local.get $s))) (local.set $vb (v128.load offset=16 (local.get $s)))");
    L.push("(v128.store (local.get $t) (local.get $va)) (v128.store offset=16 (local.get $t) (local.get $vb))");
    if (withMax) {
      // pmax (one maxpd) drops NaN: tracked apart, lane by lane (x ≠ x).
      L.push(`(local.set $vm (${max} (local.get $vm) (${max} (${abs} (local.get $va)) (${abs} (local.get $vb)))))`);
      L.push(
        `(local.set $vn (v128.or (local.get $vn) (v128.or (${ne} (local.get $va) (local.get $va)) (${ne} (local.get $vb) (local.get $vb)))))`,
      );
    }
    L.push("(local.set $t (i32.add (local.get $t) (i32.const 32)))");
    L.push(`(local.set $s (i32.add (local.get $s) (i32.shl (local.get $ld) (i32.const ${sh}))))`);
    L.push("(local.set $i (i32.add (local.get $i) (i32.const 1))) (br $iloop)))");
    L.push("(local.set $c0 (i32.add (local.get $c0) (local.get $nr))) (br $cloop)))");
    if (!withMax) return L.join("\n");
    if (is32) {
      L.push(
        "(local.set $mx (f64.promote_f32 (f32.max (f32.max (f32x4.extract_lane 0 (local.get $vm)) (f32x4.extract_lane 1 (local.get $vm))) (f32.max (f32x4.extract_lane 2 (local.get $vm)) (f32x4.extract_lane 3 (local.get $vm))))))",
      );
    } else L.push("(local.set $mx (f64.max (f64x2.extract_lane 0 (local.get $vm)) (f64x2.extract_lane 1 (local.get $vm))))");
    L.push("(local.set $nan (v128.any_true (local.get $vn)))");
    return L.join("\n");
  };
  // float64 rows into float32 panels of nr = 8, cols a multiple of 8: four f64x2 per row and panel,
  // each rounded by f32x4.demote_f64x2_zero (nearest-even, as f32.demote_f64) and joined in pairs;
  // the maxima of the float64 values as in `vector` (the fused driver's value panels at float32).
  const narrowing = (withMax: boolean) => {
    const L: string[] = [];
    const join = "(i8x16.shuffle 0 1 2 3 4 5 6 7 16 17 18 19 20 21 22 23";
    L.push("(local.set $t (local.get $dst)) (local.set $c0 (i32.const 0))");
    L.push("(block $cdone (loop $cloop (br_if $cdone (i32.ge_s (local.get $c0) (local.get $cols)))");
    L.push("(local.set $s (i32.add (local.get $src) (i32.shl (local.get $c0) (i32.const 3))))");
    L.push("(local.set $i (i32.const 0))");
    L.push("(block $idone (loop $iloop (br_if $idone (i32.ge_s (local.get $i) (local.get $n)))");
    for (const h of [0, 1]) {
      L.push(
        `(local.set $va (v128.load offset=${32 * h} (local.get $s))) (local.set $vb (v128.load offset=${32 * h + 16} (local.get $s)))`,
      );
      L.push(
        `(v128.store offset=${16 * h} (local.get $t) ${join} (f32x4.demote_f64x2_zero (local.get $va)) (f32x4.demote_f64x2_zero (local.get $vb))))`,
      );
      if (withMax) {
        L.push("(local.set $vm (f64x2.pmax (local.get $vm) (f64x2.pmax (f64x2.abs (local.get $va)) (f64x2.abs (local.get $vb)))))");
        L.push(
          "(local.set $vn (v128.or (local.get $vn) (v128.or (f64x2.ne (local.get $va) (local.get $va)) (f64x2.ne (local.get $vb) (local.get $vb)))))",
        );
      }
    }
    L.push("(local.set $t (i32.add (local.get $t) (i32.const 32)))");
    L.push("(local.set $s (i32.add (local.get $s) (i32.shl (local.get $ld) (i32.const 3))))");
    L.push("(local.set $i (i32.add (local.get $i) (i32.const 1))) (br $iloop)))");
    L.push("(local.set $c0 (i32.add (local.get $c0) (local.get $nr))) (br $cloop)))");
    if (withMax) {
      L.push("(local.set $mx (f64.max (f64x2.extract_lane 0 (local.get $vm)) (f64x2.extract_lane 1 (local.get $vm))))");
      L.push("(local.set $nan (v128.any_true (local.get $vn)))");
    }
    return L.join("\n");
  };
  const L: string[] = [];
  L.push(
    '(func $pack_value_panels (export "pack_value_panels") (param $src i32) (param $ld i32) (param $n i32) (param $cols i32) (param $src32 i32) (param $dst i32) (param $nr i32) (param $dst32 i32) (param $withmax i32) (result f64)',
  );
  L.push(
    "(local $c0 i32) (local $i i32) (local $jj i32) (local $s i32) (local $t i32) (local $x f64) (local $a f64) (local $mx f64) (local $nan i32) (local $va v128) (local $vb v128) (local $vm v128) (local $vn v128)",
  );
  L.push(
    "(local.set $mx (f64.const 0)) (local.set $nan (i32.const 0)) (local.set $vm (v128.const i64x2 0 0)) (local.set $vn (v128.const i64x2 0 0))",
  );
  L.push(
    "(if (i32.and (i32.eq (local.get $src32) (local.get $dst32)) (i32.and (i32.eq (i32.shl (local.get $nr) (select (i32.const 2) (i32.const 3) (local.get $dst32))) (i32.const 32)) (i32.eqz (i32.rem_u (local.get $cols) (local.get $nr)))))",
  );
  const vec = (mx: boolean) => `(if (local.get $dst32) (then ${vector(true, mx)}) (else ${vector(false, mx)}))`;
  L.push(`(then (if (local.get $withmax) (then ${vec(true)}) (else ${vec(false)})))`);
  L.push(
    "(else (if (i32.and (i32.and (i32.eqz (local.get $src32)) (local.get $dst32)) (i32.and (i32.eq (local.get $nr) (i32.const 8)) (i32.eqz (i32.and (local.get $cols) (i32.const 7)))))",
  );
  L.push(`(then (if (local.get $withmax) (then ${narrowing(true)}) (else ${narrowing(false)})))`);
  L.push(`(else ${byTypes(scalar)}))))`);
  L.push("(select (f64.const nan) (local.get $mx) (local.get $nan))");
  L.push(")");
  return L.join("\n");
}

/**
 * `scatter_add_rows(out, y, rowsp, wp, te, d, y32)`: out[rows[r]·d + j] += w[r]·y[r·d + j] for
 * r < te, j < d (moe.ts scatterAddWeighted: the product, then the sum, per element), with rows
 * (int32) at rowsp, w (float64) at wp, y float32 (widened) when y32 ≠ 0; out float64.
 */
function scatterAddFunction(): string {
  const L: string[] = [];
  L.push(
    '(func $scatter_add_rows (export "scatter_add_rows") (param $out i32) (param $y i32) (param $rowsp i32) (param $wp i32) (param $te i32) (param $d i32) (param $y32 i32)',
  );
  L.push("(local $r i32) (local $j i32) (local $o i32) (local $s i32) (local $w f64) (local $vw v128) (local $vy v128)");
  L.push("(local.set $r (i32.const 0))");
  L.push("(block $rdone (loop $rloop (br_if $rdone (i32.ge_s (local.get $r) (local.get $te)))");
  L.push("(local.set $w (f64.load (i32.add (local.get $wp) (i32.shl (local.get $r) (i32.const 3)))))");
  L.push("(local.set $vw (f64x2.splat (local.get $w)))");
  L.push(
    "(local.set $o (i32.add (local.get $out) (i32.shl (i32.mul (i32.load (i32.add (local.get $rowsp) (i32.shl (local.get $r) (i32.const 2)))) (local.get $d)) (i32.const 3))))",
  );
  L.push("(local.set $s (i32.mul (local.get $r) (local.get $d)))");
  L.push("(local.set $j (i32.const 0))");
  L.push("(block $vdone (loop $vloop (br_if $vdone (i32.gt_s (i32.add (local.get $j) (i32.const 2)) (local.get $d)))");
  L.push(
    "(local.set $vy (if (result v128) (local.get $y32) (then (f64x2.promote_low_f32x4 (v128.load64_zero (i32.add (local.get $y) (i32.shl (i32.add (local.get $s) (local.get $j)) (i32.const 2)))))) (else (v128.load (i32.add (local.get $y) (i32.shl (i32.add (local.get $s) (local.get $j)) (i32.const 3)))))))",
  );
  L.push(
    "(v128.store (i32.add (local.get $o) (i32.shl (local.get $j) (i32.const 3))) (f64x2.add (v128.load (i32.add (local.get $o) (i32.shl (local.get $j) (i32.const 3)))) (f64x2.mul (local.get $vw) (local.get $vy))))",
  );
  L.push("(local.set $j (i32.add (local.get $j) (i32.const 2))) (br $vloop)))");
  L.push("(if (i32.lt_s (local.get $j) (local.get $d)) (then");
  L.push(
    `(f64.store (i32.add (local.get $o) (i32.shl (local.get $j) (i32.const 3))) (f64.add (f64.load (i32.add (local.get $o) (i32.shl (local.get $j) (i32.const 3)))) (f64.mul (local.get $w) (if (result f64) (local.get $y32) (then ${load64(true, "(i32.add (local.get $y) (i32.shl (i32.add (local.get $s) (local.get $j)) (i32.const 2)))")}) (else ${load64(false, "(i32.add (local.get $y) (i32.shl (i32.add (local.get $s) (local.get $j)) (i32.const 3)))")})))))))`,
  );
  L.push("(local.set $r (i32.add (local.get $r) (i32.const 1))) (br $rloop)))");
  L.push(")");
  return L.join("\n");
}

/**
 * `gather_rows(src, dst, rowsp, te, bytes)`: the te rows rows[r] (int32 at rowsp) of `bytes` bytes
 * each from the block at src into consecutive rows at dst (a MoE expert's tokens; bytes a multiple
 * of 16).
 */
function gatherRowsFunction(): string {
  const L: string[] = [];
  L.push(
    '(func $gather_rows (export "gather_rows") (param $src i32) (param $dst i32) (param $rowsp i32) (param $te i32) (param $bytes i32)',
  );
  L.push("(local $r i32) (local $j i32) (local $s i32)");
  L.push("(local.set $r (i32.const 0))");
  L.push("(block $rdone (loop $rloop (br_if $rdone (i32.ge_s (local.get $r) (local.get $te)))");
  L.push(
    "(local.set $s (i32.add (local.get $src) (i32.mul (i32.load (i32.add (local.get $rowsp) (i32.shl (local.get $r) (i32.const 2)))) (local.get $bytes))))",
  );
  L.push("(local.set $j (i32.const 0))");
  L.push("(block $jdone (loop $jloop (br_if $jdone (i32.ge_s (local.get $j) (local.get $bytes)))");
  L.push("(v128.store (i32.add (local.get $dst) (local.get $j)) (v128.load (i32.add (local.get $s) (local.get $j))))");
  L.push("(local.set $j (i32.add (local.get $j) (i32.const 16))) (br $jloop)))");
  L.push("(local.set $dst (i32.add (local.get $dst) (local.get $bytes)))");
  L.push("(local.set $r (i32.add (local.get $r) (i32.const 1))) (br $rloop)))");
  L.push(")");
  return L.join("\n");
}

/**
 * `max_abs_block(src, ld, rows, cols)` → max |x| over a rows × cols float64 block (row stride ld),
 * NaN when some x is NaN, 0 when empty: maxAbsOf of rows_max_f64's row maxima (range32.ts) in one
 * pass — f64x2.pmax (one maxpd; f64x2.max's NaN and ±0 handling cost a longer sequence) on |x|,
 * NaN lanes tracked apart (x ≠ x). Max is exact, so the order does not matter. MLA's max |Q_h|
 * for float32 attention's range decision (pretrained/residentMla.ts).
 */
function maxAbsBlockFunction(): string {
  const L: string[] = [];
  L.push('(func $max_abs_block (export "max_abs_block") (param $src i32) (param $ld i32) (param $rows i32) (param $cols i32) (result f64)');
  L.push(
    "(local $r i32) (local $p i32) (local $end i32) (local $v v128) (local $vm v128) (local $vn v128) (local $x f64) (local $m f64) (local $nan i32)",
  );
  L.push(
    "(local.set $vm (v128.const i64x2 0 0)) (local.set $vn (v128.const i64x2 0 0)) (local.set $m (f64.const 0)) (local.set $nan (i32.const 0))",
  );
  L.push("(local.set $r (i32.const 0))");
  L.push("(block $rdone (loop $rloop (br_if $rdone (i32.ge_s (local.get $r) (local.get $rows)))");
  L.push("(local.set $p (i32.add (local.get $src) (i32.shl (i32.mul (local.get $r) (local.get $ld)) (i32.const 3))))");
  L.push("(local.set $end (i32.add (local.get $p) (i32.shl (i32.and (local.get $cols) (i32.const -2)) (i32.const 3))))");
  L.push("(block $vdone (loop $vloop (br_if $vdone (i32.ge_u (local.get $p) (local.get $end)))");
  L.push("(local.set $v (v128.load (local.get $p)))");
  L.push("(local.set $vm (f64x2.pmax (local.get $vm) (f64x2.abs (local.get $v))))");
  L.push("(local.set $vn (v128.or (local.get $vn) (f64x2.ne (local.get $v) (local.get $v))))");
  L.push("(local.set $p (i32.add (local.get $p) (i32.const 16))) (br $vloop)))");
  L.push("(if (i32.and (local.get $cols) (i32.const 1)) (then");
  L.push("(local.set $x (f64.abs (f64.load (local.get $p))))");
  L.push("(local.set $m (select (local.get $x) (local.get $m) (f64.gt (local.get $x) (local.get $m))))");
  L.push("(local.set $nan (i32.or (local.get $nan) (f64.ne (local.get $x) (local.get $x))))))");
  L.push("(local.set $r (i32.add (local.get $r) (i32.const 1))) (br $rloop)))");
  L.push("(local.set $m (f64.max (local.get $m) (f64.max (f64x2.extract_lane 0 (local.get $vm)) (f64x2.extract_lane 1 (local.get $vm)))))");
  L.push("(select (f64.const nan) (local.get $m) (i32.or (local.get $nan) (v128.any_true (local.get $vn))))");
  L.push(")");
  return L.join("\n");
}

/** The functions above, in module order (appended at the end of `kernelWat()`). */
export function modelKernelFunctions(): string[] {
  return [
    rmsRowsFunction(),
    ropeHalfFunction(),
    swigluFunction(),
    addFunction(),
    allFiniteFunction(),
    copyColsFunction(),
    scaleRowsFunction(),
    rowsNormalizeOutFunction(),
    convertFunctions(),
    // MLA prefill passes (pretrained/residentMla.ts).
    ropePairsFunction(),
    packKeyPanelsFunction(),
    packValuePanelsFunction(),
    scatterAddFunction(),
    gatherRowsFunction(),
    maxAbsBlockFunction(),
  ];
}
