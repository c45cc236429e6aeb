/**
 * WebAssembly text (WAT) of the SIMD128 GEMM macro-kernels, generated from one template so the
 * float64 (f64x2) and float32 (f32x4) kernels cannot drift apart.
 *
 * Scheme (GotoBLAS / BLIS): the driver in `gemm.ts` packs a block of op(A) into MR-row panels
 * (`Apack[panel][p·MR + ii]`) and a block of op(B) into NR-column panels (`Bpack[panel][p·NR + jj]`),
 * zero-padded to whole panels, and calls `gemm_f64` / `gemm_f32`, which computes
 * C[i, j] += Σ_p Apack·Bpack for the mc × nc block with an MR × NR register tile:
 *  - f64: MR = 4 rows × NR = 4 columns = 8 f64x2 accumulators (+ 2 B vectors + 1 broadcast A),
 *  - f32: MR = 4 rows × NR = 8 columns = 8 f32x4 accumulators,
 * i.e. 11 live v128 values — within the 16 XMM registers V8 allocates on x86-64 (a 4×6 f64 tile
 * would need 16 and spill). Only SIMD128 MVP instructions are used (`v128.load64_splat`,
 * `f64x2.mul`, `f64x2.add`, …): relaxed-SIMD (fused multiply-add) needs a flag in Node 20.
 * Edge tiles (i + MR > mc or j + NR > nc) are written to a scratch tile at address 0 and the
 * valid part is added to C by a scalar loop, so C is never written out of bounds.
 */

/** Register tile of the float64 kernel: rows of C per tile. */
export const F64_MR = 4;
/** Register tile of the float64 kernel: columns of C per tile (2 f64x2 vectors). */
export const F64_NR = 4;
/** Register tile of the float32 kernel: rows of C per tile. */
export const F32_MR = 4;
/** Register tile of the float32 kernel: columns of C per tile (2 f32x4 vectors). */
export const F32_NR = 8;
/** Bytes reserved at address 0 for the edge-tile scratch (largest tile: 4×8 f32 or 4×4 f64 = 128 B). */
export const SCRATCH_BYTES = 256;

type Precision = "f64" | "f32";

function gemmFunction(name: string, ty: Precision, MR: number, NR: number): string {
  const lanes = ty === "f64" ? 2 : 4;
  const es = ty === "f64" ? 8 : 4;
  const NRV = NR / lanes;
  const vt = ty === "f64" ? "f64x2" : "f32x4";
  const splat = ty === "f64" ? "v128.load64_splat" : "v128.load32_splat";
  const acc = (i: number, v: number) => `$c${i}_${v}`;
  const L: string[] = [];
  L.push(
    `(func $${name} (export "${name}") (param $ap i32) (param $bp i32) (param $cp i32) (param $ldc i32) (param $mc i32) (param $nc i32) (param $kc i32)`,
  );
  L.push("(local $i i32) (local $j i32) (local $p i32) (local $a i32) (local $b i32) (local $c i32) (local $av v128)");
  L.push("(local $ii i32) (local $jj i32) (local $mr i32) (local $nr i32)");
  for (let v = 0; v < NRV; v++) L.push(`(local $b${v} v128)`);
  for (let i = 0; i < MR; i++) for (let v = 0; v < NRV; v++) L.push(`(local ${acc(i, v)} v128)`);
  // j (B panel, stays in L1 across the i loop) outer, i (A panels, streamed from L2) inner.
  L.push("(local.set $j (i32.const 0))");
  L.push("(block $jdone (loop $jloop");
  L.push("(br_if $jdone (i32.ge_s (local.get $j) (local.get $nc)))");
  L.push("(local.set $i (i32.const 0))");
  L.push("(block $idone (loop $iloop");
  L.push("(br_if $idone (i32.ge_s (local.get $i) (local.get $mc)))");
  L.push(`(local.set $a (i32.add (local.get $ap) (i32.mul (local.get $i) (i32.mul (local.get $kc) (i32.const ${es})))))`);
  L.push(`(local.set $b (i32.add (local.get $bp) (i32.mul (local.get $j) (i32.mul (local.get $kc) (i32.const ${es})))))`);
  for (let i = 0; i < MR; i++) for (let v = 0; v < NRV; v++) L.push(`(local.set ${acc(i, v)} (v128.const i64x2 0 0))`);
  L.push("(local.set $p (local.get $kc))");
  L.push("(block $pdone (loop $ploop");
  L.push("(br_if $pdone (i32.eqz (local.get $p)))");
  for (let v = 0; v < NRV; v++) L.push(`(local.set $b${v} (v128.load offset=${v * 16} (local.get $b)))`);
  for (let i = 0; i < MR; i++) {
    L.push(`(local.set $av (${splat} offset=${i * es} (local.get $a)))`);
    for (let v = 0; v < NRV; v++) {
      L.push(`(local.set ${acc(i, v)} (${vt}.add (local.get ${acc(i, v)}) (${vt}.mul (local.get $av) (local.get $b${v}))))`);
    }
  }
  L.push(`(local.set $a (i32.add (local.get $a) (i32.const ${MR * es})))`);
  L.push(`(local.set $b (i32.add (local.get $b) (i32.const ${NR * es})))`);
  L.push("(local.set $p (i32.sub (local.get $p) (i32.const 1)))");
  L.push("(br $ploop)))");
  // Full tile: C += acc with vector loads/stores.
  L.push(
    `(if (i32.and (i32.le_s (i32.add (local.get $i) (i32.const ${MR})) (local.get $mc)) (i32.le_s (i32.add (local.get $j) (i32.const ${NR})) (local.get $nc)))`,
  );
  L.push("(then");
  for (let i = 0; i < MR; i++) {
    L.push(
      `(local.set $c (i32.add (local.get $cp) (i32.mul (i32.add (i32.mul (i32.add (local.get $i) (i32.const ${i})) (local.get $ldc)) (local.get $j)) (i32.const ${es}))))`,
    );
    for (let v = 0; v < NRV; v++) {
      L.push(
        `(v128.store offset=${v * 16} (local.get $c) (${vt}.add (v128.load offset=${v * 16} (local.get $c)) (local.get ${acc(i, v)})))`,
      );
    }
  }
  L.push(")(else");
  // Edge tile: spill to the scratch at address 0, add the valid mr × nr part to C.
  for (let i = 0; i < MR; i++) {
    for (let v = 0; v < NRV; v++) L.push(`(v128.store offset=${(i * NRV + v) * 16} (i32.const 0) (local.get ${acc(i, v)}))`);
  }
  L.push(
    `(local.set $mr (select (i32.sub (local.get $mc) (local.get $i)) (i32.const ${MR}) (i32.lt_s (i32.sub (local.get $mc) (local.get $i)) (i32.const ${MR}))))`,
  );
  L.push(
    `(local.set $nr (select (i32.sub (local.get $nc) (local.get $j)) (i32.const ${NR}) (i32.lt_s (i32.sub (local.get $nc) (local.get $j)) (i32.const ${NR}))))`,
  );
  L.push("(local.set $ii (i32.const 0))");
  L.push("(block $eidone (loop $eiloop (br_if $eidone (i32.ge_s (local.get $ii) (local.get $mr)))");
  L.push("(local.set $jj (i32.const 0))");
  L.push("(block $ejdone (loop $ejloop (br_if $ejdone (i32.ge_s (local.get $jj) (local.get $nr)))");
  L.push(
    `(local.set $c (i32.add (local.get $cp) (i32.mul (i32.add (i32.mul (i32.add (local.get $i) (local.get $ii)) (local.get $ldc)) (i32.add (local.get $j) (local.get $jj))) (i32.const ${es}))))`,
  );
  L.push(
    `(${ty}.store (local.get $c) (${ty}.add (${ty}.load (local.get $c)) (${ty}.load (i32.mul (i32.add (i32.mul (local.get $ii) (i32.const ${NR})) (local.get $jj)) (i32.const ${es})))))`,
  );
  L.push("(local.set $jj (i32.add (local.get $jj) (i32.const 1))) (br $ejloop)))");
  L.push("(local.set $ii (i32.add (local.get $ii) (i32.const 1))) (br $eiloop)))");
  L.push("))");
  L.push(`(local.set $i (i32.add (local.get $i) (i32.const ${MR})))`);
  L.push("(br $iloop)))");
  L.push(`(local.set $j (i32.add (local.get $j) (i32.const ${NR})))`);
  L.push("(br $jloop)))");
  L.push(")");
  return L.join("\n");
}

/**
 * The macro-kernel with op(A) read in place, row-major with leading dimension `lda` (elements),
 * instead of from packed panels: C[i, j] (+)= Σ_p A[i·lda + p]·Bpack. Used by the fused attention
 * driver (`softmaxWasm.ts`), whose A operands (the scaled queries, the exponentiated score rows)
 * already sit in WebAssembly memory row by row, so packing them would only copy. The four rows of a
 * register tile are four sequential streams (prefetcher-friendly); rows past `mc` are clamped to
 * row mc − 1 (their results land in the discarded part of the edge tile). `acc` = 0 overwrites C,
 * 1 adds to it (so C needs no zeroing pass).
 */
function gemmRowsFunction(name: string, ty: Precision, MR: number, NR: number): string {
  const lanes = ty === "f64" ? 2 : 4;
  const es = ty === "f64" ? 8 : 4;
  const NRV = NR / lanes;
  const vt = ty === "f64" ? "f64x2" : "f32x4";
  const splat = ty === "f64" ? "v128.load64_splat" : "v128.load32_splat";
  const acc = (i: number, v: number) => `$c${i}_${v}`;
  const L: string[] = [];
  L.push(
    `(func $${name} (export "${name}") (param $ap i32) (param $lda i32) (param $bp i32) (param $cp i32) (param $ldc i32) (param $mc i32) (param $nc i32) (param $kc i32) (param $acc i32)`,
  );
  L.push("(local $i i32) (local $j i32) (local $p i32) (local $b i32) (local $c i32) (local $av v128) (local $r i32)");
  L.push("(local $ii i32) (local $jj i32) (local $mr i32) (local $nr i32) (local $t i32)");
  for (let i = 0; i < MR; i++) L.push(`(local $a${i} i32)`);
  for (let v = 0; v < NRV; v++) L.push(`(local $b${v} v128)`);
  for (let i = 0; i < MR; i++) for (let v = 0; v < NRV; v++) L.push(`(local ${acc(i, v)} v128)`);
  L.push("(local.set $j (i32.const 0))");
  L.push("(block $jdone (loop $jloop");
  L.push("(br_if $jdone (i32.ge_s (local.get $j) (local.get $nc)))");
  L.push("(local.set $i (i32.const 0))");
  L.push("(block $idone (loop $iloop");
  L.push("(br_if $idone (i32.ge_s (local.get $i) (local.get $mc)))");
  for (let i = 0; i < MR; i++) {
    // row min(i + ii, mc − 1)
    L.push(`(local.set $r (i32.add (local.get $i) (i32.const ${i})))`);
    L.push(
      "(local.set $r (select (local.get $r) (i32.sub (local.get $mc) (i32.const 1)) (i32.lt_s (local.get $r) (local.get $mc))))",
    );
    L.push(`(local.set $a${i} (i32.add (local.get $ap) (i32.mul (i32.mul (local.get $r) (local.get $lda)) (i32.const ${es}))))`);
  }
  L.push(`(local.set $b (i32.add (local.get $bp) (i32.mul (local.get $j) (i32.mul (local.get $kc) (i32.const ${es})))))`);
  for (let i = 0; i < MR; i++) for (let v = 0; v < NRV; v++) L.push(`(local.set ${acc(i, v)} (v128.const i64x2 0 0))`);
  L.push("(local.set $p (local.get $kc))");
  L.push("(block $pdone (loop $ploop");
  L.push("(br_if $pdone (i32.eqz (local.get $p)))");
  for (let v = 0; v < NRV; v++) L.push(`(local.set $b${v} (v128.load offset=${v * 16} (local.get $b)))`);
  for (let i = 0; i < MR; i++) {
    L.push(`(local.set $av (${splat} (local.get $a${i})))`);
    for (let v = 0; v < NRV; v++) {
      L.push(`(local.set ${acc(i, v)} (${vt}.add (local.get ${acc(i, v)}) (${vt}.mul (local.get $av) (local.get $b${v}))))`);
    }
    L.push(`(local.set $a${i} (i32.add (local.get $a${i}) (i32.const ${es})))`);
  }
  L.push(`(local.set $b (i32.add (local.get $b) (i32.const ${NR * es})))`);
  L.push("(local.set $p (i32.sub (local.get $p) (i32.const 1)))");
  L.push("(br $ploop)))");
  L.push(
    `(if (i32.and (i32.le_s (i32.add (local.get $i) (i32.const ${MR})) (local.get $mc)) (i32.le_s (i32.add (local.get $j) (i32.const ${NR})) (local.get $nc)))`,
  );
  L.push("(then");
  L.push("(if (local.get $acc) (then");
  for (let i = 0; i < MR; i++) {
    L.push(
      `(local.set $c (i32.add (local.get $cp) (i32.mul (i32.add (i32.mul (i32.add (local.get $i) (i32.const ${i})) (local.get $ldc)) (local.get $j)) (i32.const ${es}))))`,
    );
    for (let v = 0; v < NRV; v++) {
      L.push(
        `(v128.store offset=${v * 16} (local.get $c) (${vt}.add (v128.load offset=${v * 16} (local.get $c)) (local.get ${acc(i, v)})))`,
      );
    }
  }
  L.push(")(else");
  for (let i = 0; i < MR; i++) {
    L.push(
      `(local.set $c (i32.add (local.get $cp) (i32.mul (i32.add (i32.mul (i32.add (local.get $i) (i32.const ${i})) (local.get $ldc)) (local.get $j)) (i32.const ${es}))))`,
    );
    for (let v = 0; v < NRV; v++) L.push(`(v128.store offset=${v * 16} (local.get $c) (local.get ${acc(i, v)}))`);
  }
  L.push("))");
  L.push(")(else");
  for (let i = 0; i < MR; i++) {
    for (let v = 0; v < NRV; v++) L.push(`(v128.store offset=${(i * NRV + v) * 16} (i32.const 0) (local.get ${acc(i, v)}))`);
  }
  L.push(
    `(local.set $mr (select (i32.sub (local.get $mc) (local.get $i)) (i32.const ${MR}) (i32.lt_s (i32.sub (local.get $mc) (local.get $i)) (i32.const ${MR}))))`,
  );
  L.push(
    `(local.set $nr (select (i32.sub (local.get $nc) (local.get $j)) (i32.const ${NR}) (i32.lt_s (i32.sub (local.get $nc) (local.get $j)) (i32.const ${NR}))))`,
  );
  L.push("(local.set $ii (i32.const 0))");
  L.push("(block $eidone (loop $eiloop (br_if $eidone (i32.ge_s (local.get $ii) (local.get $mr)))");
  L.push("(local.set $jj (i32.const 0))");
  L.push("(block $ejdone (loop $ejloop (br_if $ejdone (i32.ge_s (local.get $jj) (local.get $nr)))");
  L.push(
    `(local.set $c (i32.add (local.get $cp) (i32.mul (i32.add (i32.mul (i32.add (local.get $i) (local.get $ii)) (local.get $ldc)) (i32.add (local.get $j) (local.get $jj))) (i32.const ${es}))))`,
  );
  L.push(`(local.set $t (i32.mul (i32.add (i32.mul (local.get $ii) (i32.const ${NR})) (local.get $jj)) (i32.const ${es})))`);
  L.push(
    `(${ty}.store (local.get $c) (select (${ty}.add (${ty}.load (local.get $c)) (${ty}.load (local.get $t))) (${ty}.load (local.get $t)) (local.get $acc)))`,
  );
  L.push("(local.set $jj (i32.add (local.get $jj) (i32.const 1))) (br $ejloop)))");
  L.push("(local.set $ii (i32.add (local.get $ii) (i32.const 1))) (br $eiloop)))");
  L.push("))");
  L.push(`(local.set $i (i32.add (local.get $i) (i32.const ${MR})))`);
  L.push("(br $iloop)))");
  L.push(`(local.set $j (i32.add (local.get $j) (i32.const ${NR})))`);
  L.push("(br $jloop)))");
  L.push(")");
  return L.join("\n");
}

/** Cody–Waite split of ln 2 (fdlibm): LN2_HI has 21 trailing zero bits, so k·LN2_HI is exact for |k| < 2²¹. */
const LN2_HI = "0x1.62e42feep-1";
const LN2_LO = "0x1.a39ef35793c76p-33";
/** 1.5·2⁵²: adding it rounds a float64 |t| < 2⁵¹ to an integer held in the low mantissa bits. */
const ROUND_MAGIC = "0x1.8p52";
/** Bits of ROUND_MAGIC as a signed i64 (0x4338000000000000). */
const ROUND_MAGIC_BITS = "4843621399236968448";

/** 1/n! for n = 0…13 as exact-as-possible float64 literals (Taylor coefficients of e^r). */
function taylorCoefficients(): string[] {
  const out: string[] = [];
  let f = 1;
  for (let n = 0; n <= 13; n++) {
    if (n > 0) f *= n; // n! is exact in float64 up to 22!
    out.push((1 / f).toPrecision(17));
  }
  return out;
}

/**
 * Inline f64x2 exp of the v128 local `x` into local `out` (uses locals $ex_t $ex_k $ex_r $ex_p
 * $ex_i). Range reduction x = k·ln 2 + r, |r| ≤ ln2/2 (+ rounding), k = round(x·log₂e) via the
 * 1.5·2⁵² trick, r by Cody–Waite; e^r by the degree-13 Taylor polynomial in Horner form (truncation
 * |r|¹⁴/14! ≤ 5e-18, below 0.05 ulp; the evaluation adds ≈ 1 ulp); 2^k built from exponent bits
 * (i64x2 shifts) in two factors 2^⌊k/2⌋·2^(k−⌊k/2⌋) so that results down in the subnormal range
 * are rounded once and correctly. x is clamped to [−746, 710] first: −∞ and anything below
 * −745.2 give exactly 0, anything above 709.79 gives +∞ — never NaN unless x is NaN.
 */
function expInline(x: string, out: string): string[] {
  const c = taylorCoefficients();
  const L: string[] = [];
  const f = (v: string) => `(v128.const f64x2 ${v} ${v})`;
  L.push(`(local.set $ex_r (f64x2.min (f64x2.max (local.get ${x}) ${f("-746")}) ${f("710")}))`);
  L.push(`(local.set $ex_t (f64x2.add (f64x2.mul (local.get $ex_r) ${f("0x1.71547652b82fep0")}) ${f(ROUND_MAGIC)}))`);
  L.push(`(local.set $ex_k (f64x2.sub (local.get $ex_t) ${f(ROUND_MAGIC)}))`);
  L.push(
    `(local.set $ex_r (f64x2.sub (f64x2.sub (local.get $ex_r) (f64x2.mul (local.get $ex_k) ${f(LN2_HI)})) (f64x2.mul (local.get $ex_k) ${f(LN2_LO)})))`,
  );
  L.push(`(local.set $ex_p ${f(c[13])})`);
  for (let n = 12; n >= 0; n--) L.push(`(local.set $ex_p (f64x2.add (f64x2.mul (local.get $ex_p) (local.get $ex_r)) ${f(c[n])}))`);
  // k as an i64: bits(t) − bits(magic); 2^k1 · 2^k2 with k1 = k >> 1, k2 = k − k1 (both in [−538, 512]).
  L.push(`(local.set $ex_i (i64x2.sub (local.get $ex_t) (v128.const i64x2 ${ROUND_MAGIC_BITS} ${ROUND_MAGIC_BITS})))`);
  L.push("(local.set $ex_k (i64x2.shr_s (local.get $ex_i) (i32.const 1)))");
  L.push("(local.set $ex_i (i64x2.sub (local.get $ex_i) (local.get $ex_k)))");
  L.push(
    `(local.set ${out} (f64x2.mul (f64x2.mul (local.get $ex_p) (i64x2.shl (i64x2.add (local.get $ex_k) (v128.const i64x2 1023 1023)) (i32.const 52))) (i64x2.shl (i64x2.add (local.get $ex_i) (v128.const i64x2 1023 1023)) (i32.const 52))))`,
  );
  return L;
}

const EXP_LOCALS = "(local $ex_t v128) (local $ex_k v128) (local $ex_r v128) (local $ex_p v128) (local $ex_i v128)";

/**
 * `exp_f64(src, dst, n)`: dst[i] = exp(src[i]) for n float64s (byte addresses; may alias). The
 * SIMD exp on its own, for the accuracy tests and `simdExp`.
 */
function expFunction(): string {
  const L: string[] = [];
  L.push('(func $exp_f64 (export "exp_f64") (param $src i32) (param $dst i32) (param $n i32)');
  L.push(`(local $x v128) (local $e v128) ${EXP_LOCALS}`);
  L.push("(block $done (loop $lp");
  L.push("(br_if $done (i32.lt_s (local.get $n) (i32.const 2)))");
  L.push("(local.set $x (v128.load (local.get $src)))");
  L.push(...expInline("$x", "$e"));
  L.push("(v128.store (local.get $dst) (local.get $e))");
  L.push("(local.set $src (i32.add (local.get $src) (i32.const 16)))");
  L.push("(local.set $dst (i32.add (local.get $dst) (i32.const 16)))");
  L.push("(local.set $n (i32.sub (local.get $n) (i32.const 2)))");
  L.push("(br $lp)))");
  L.push("(if (i32.eq (local.get $n) (i32.const 1)) (then");
  L.push("(local.set $x (v128.load64_zero (local.get $src)))");
  L.push(...expInline("$x", "$e"));
  L.push("(f64.store (local.get $dst) (f64x2.extract_lane 0 (local.get $e)))))");
  L.push(")");
  return L.join("\n");
}

/**
 * `softmax_rows_f64(sp, rows, cols, ld, mp, lp, yp, ldy, dv)`: the online-softmax update of a tile
 * of logits S (rows × cols at sp, row stride ld) for rows with running max m[r] (mp), normalizer
 * l[r] (lp) and unnormalized output Y[r, 0…dv) (yp, stride ldy), all float64 (FlashAttention's
 * recurrence; the materialized path is the one-tile case m = −∞, l = 0, dv = 0):
 *   t = max_c S[r,c]; m' = max(m, t); if m' = −∞ the row has no allowed key here: S[r,:] ← 0.
 *   else: α = exp(m − m') (0 when m = −∞); l ← α·l; Y[r,:] ← α·Y[r,:] (when m' ≠ m);
 *         S[r,c] ← exp(S[r,c] − m') in place; l ← l + Σ_c S[r,c]; m ← m'.
 * Masked logits must be −∞ (exp gives exactly 0). A NaN or +∞ logit makes l NaN — the caller
 * checks l and reports the overflow. Max and sum run over f64x2 pairs (two partial sums).
 */
function softmaxRowsFunction(): string {
  const L: string[] = [];
  const negInf = "(v128.const f64x2 -inf -inf)";
  L.push(
    '(func $softmax_rows_f64 (export "softmax_rows_f64") (param $sp i32) (param $rows i32) (param $cols i32) (param $ld i32) (param $mp i32) (param $lp i32) (param $yp i32) (param $ldy i32) (param $dv i32)',
  );
  L.push(`(local $r i32) (local $row i32) (local $q i32) (local $n i32) (local $x v128) (local $e v128) (local $vm v128) (local $vs v128) ${EXP_LOCALS}`);
  L.push("(local $t f64) (local $mo f64) (local $mn f64) (local $alpha f64) (local $sum f64) (local $shift v128) (local $ya i32)");
  L.push("(local.set $r (i32.const 0))");
  L.push("(block $rdone (loop $rloop");
  L.push("(br_if $rdone (i32.ge_s (local.get $r) (local.get $rows)))");
  L.push("(local.set $row (i32.add (local.get $sp) (i32.mul (i32.mul (local.get $r) (local.get $ld)) (i32.const 8))))");
  // row max over pairs, then the odd tail
  L.push(`(local.set $vm ${negInf})`);
  L.push("(local.set $q (local.get $row)) (local.set $n (local.get $cols))");
  L.push("(block $mdone (loop $mloop (br_if $mdone (i32.lt_s (local.get $n) (i32.const 2)))");
  L.push("(local.set $vm (f64x2.max (local.get $vm) (v128.load (local.get $q))))");
  L.push("(local.set $q (i32.add (local.get $q) (i32.const 16))) (local.set $n (i32.sub (local.get $n) (i32.const 2))) (br $mloop)))");
  L.push("(local.set $t (f64.max (f64x2.extract_lane 0 (local.get $vm)) (f64x2.extract_lane 1 (local.get $vm))))");
  L.push("(if (i32.eq (local.get $n) (i32.const 1)) (then (local.set $t (f64.max (local.get $t) (f64.load (local.get $q))))))");
  L.push("(local.set $mo (f64.load (i32.add (local.get $mp) (i32.mul (local.get $r) (i32.const 8)))))");
  L.push("(local.set $mn (f64.max (local.get $mo) (local.get $t)))");
  L.push("(if (f64.eq (local.get $mn) (f64.const -inf))");
  L.push("(then (local.set $shift (v128.const f64x2 0 0)))");
  L.push("(else");
  L.push("(local.set $shift (f64x2.splat (local.get $mn)))");
  L.push("(if (f64.ne (local.get $mn) (local.get $mo)) (then");
  L.push("(local.set $x (f64x2.splat (f64.sub (local.get $mo) (local.get $mn))))");
  L.push(...expInline("$x", "$e"));
  L.push("(local.set $alpha (f64x2.extract_lane 0 (local.get $e)))");
  L.push(
    "(f64.store (i32.add (local.get $lp) (i32.mul (local.get $r) (i32.const 8))) (f64.mul (local.get $alpha) (f64.load (i32.add (local.get $lp) (i32.mul (local.get $r) (i32.const 8))))))",
  );
  L.push("(local.set $ya (i32.add (local.get $yp) (i32.mul (i32.mul (local.get $r) (local.get $ldy)) (i32.const 8))))");
  L.push("(local.set $e (f64x2.splat (local.get $alpha)))");
  L.push("(local.set $n (local.get $dv))");
  L.push("(block $ydone (loop $yloop (br_if $ydone (i32.lt_s (local.get $n) (i32.const 2)))");
  L.push("(v128.store (local.get $ya) (f64x2.mul (v128.load (local.get $ya)) (local.get $e)))");
  L.push("(local.set $ya (i32.add (local.get $ya) (i32.const 16))) (local.set $n (i32.sub (local.get $n) (i32.const 2))) (br $yloop)))");
  L.push("(if (i32.eq (local.get $n) (i32.const 1)) (then (f64.store (local.get $ya) (f64.mul (f64.load (local.get $ya)) (local.get $alpha)))))");
  L.push("))");
  L.push("(f64.store (i32.add (local.get $mp) (i32.mul (local.get $r) (i32.const 8))) (local.get $mn))");
  L.push("))");
  // S ← exp(S − shift), summed
  L.push("(local.set $vs (v128.const f64x2 0 0))");
  L.push("(local.set $q (local.get $row)) (local.set $n (local.get $cols))");
  L.push("(block $edone (loop $eloop (br_if $edone (i32.lt_s (local.get $n) (i32.const 2)))");
  L.push("(local.set $x (f64x2.sub (v128.load (local.get $q)) (local.get $shift)))");
  L.push(...expInline("$x", "$e"));
  L.push("(v128.store (local.get $q) (local.get $e))");
  L.push("(local.set $vs (f64x2.add (local.get $vs) (local.get $e)))");
  L.push("(local.set $q (i32.add (local.get $q) (i32.const 16))) (local.set $n (i32.sub (local.get $n) (i32.const 2))) (br $eloop)))");
  L.push("(local.set $sum (f64.add (f64x2.extract_lane 0 (local.get $vs)) (f64x2.extract_lane 1 (local.get $vs))))");
  L.push("(if (i32.eq (local.get $n) (i32.const 1)) (then");
  L.push("(local.set $x (f64x2.sub (v128.load64_zero (local.get $q)) (local.get $shift)))");
  L.push(...expInline("$x", "$e"));
  L.push("(f64.store (local.get $q) (f64x2.extract_lane 0 (local.get $e)))");
  L.push("(local.set $sum (f64.add (local.get $sum) (f64x2.extract_lane 0 (local.get $e))))))");
  L.push("(if (f64.ne (local.get $mn) (f64.const -inf)) (then");
  L.push(
    "(f64.store (i32.add (local.get $lp) (i32.mul (local.get $r) (i32.const 8))) (f64.add (local.get $sum) (f64.load (i32.add (local.get $lp) (i32.mul (local.get $r) (i32.const 8))))))))",
  );
  L.push("(local.set $r (i32.add (local.get $r) (i32.const 1)))");
  L.push("(br $rloop)))");
  L.push(")");
  return L.join("\n");
}

/**
 * The whole kernel module as WAT text: one exported, growable memory (`memory`); the packed
 * macro-kernels `gemm_f64(ap, bp, cp, ldc, mc, nc, kc)` and `gemm_f32(…)`, their row-major-A forms
 * `gemm_f64_ra(ap, lda, bp, cp, ldc, mc, nc, kc, acc)` / `gemm_f32_ra`, the SIMD exponential
 * `exp_f64(src, dst, n)` and the online-softmax tile update `softmax_rows_f64(…)` (byte addresses;
 * strides and sizes in elements). Assembled by `assembleKernels()` (wabt) into the bytes embedded
 * in `kernelBytes.ts`.
 */
export function kernelWat(): string {
  return [
    ";; RandAttn SIMD128 GEMM kernels — generated by packages/core/src/fast/wat.ts; do not edit by hand.",
    "(module",
    '(memory (export "memory") 1)',
    gemmFunction("gemm_f64", "f64", F64_MR, F64_NR),
    gemmFunction("gemm_f32", "f32", F32_MR, F32_NR),
    gemmRowsFunction("gemm_f64_ra", "f64", F64_MR, F64_NR),
    gemmRowsFunction("gemm_f32_ra", "f32", F32_MR, F32_NR),
    expFunction(),
    softmaxRowsFunction(),
    ")",
    "",
  ].join("\n");
}
