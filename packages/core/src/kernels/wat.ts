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
 * `f64x2.mul`, `f64x2.add`, …): relaxed-SIMD (fused multiply-add) needs a flag in Node 20. The
 * opt-in fused forms of the same macro-kernels (`fmaKernelWat`, issue 14 stop 27) live in a second,
 * small module that imports this one's memory; `gemm.ts` swaps them in under
 * `setKernelArithmetic("fma")`.
 * Edge tiles (i + MR > mc or j + NR > nc) are written to a scratch tile at address 0 and the
 * valid part is added to C by a scalar loop, so C is never written out of bounds.
 */
import { boundPassFunctions } from "./watBounds.js";
import { sqDistRowsFunction } from "./watDistance.js";
import { divideRowsFunction, panelColumnSumsFunction, rowsSumSqFunction } from "./watFeatures.js";
import { gemvFunctions } from "./watGemv.js";
import { symMaxEigFunction } from "./watJacobi.js";
import { planeOpsFunction } from "./watPlane.js";
import { packKernelFunctions } from "./watPack.js";
import { modelKernelFunctions } from "./watModel.js";
import {
  E4,
  EXP2_FAST_LO,
  EXP_FL_SCRATCH,
  EXP_LOCALS,
  expFast,
  expFastPath,
  expInline,
  expTableData,
  ROUND_MAGIC,
  SHIFT_CHECK_FREE_MAX,
  streamLocals,
  V4_LOCALS,
  X4,
} from "./watExp.js";

// The exp table's layout and the kernel memory it reserves, for the drivers that import them from here.
export { EXP_TABLE_ADDR, KERNEL_RESERVED_BYTES, expTable } from "./watExp.js";

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

/** Element size, vector type and splat of a precision; NRV = vectors per NR-wide tile row. */
function tileShape(ty: Precision, NR: number) {
  const lanes = ty === "f64" ? 2 : 4;
  return {
    es: ty === "f64" ? 8 : 4,
    NRV: NR / lanes,
    vt: ty === "f64" ? "f64x2" : "f32x4",
    splat: ty === "f64" ? "v128.load64_splat" : "v128.load32_splat",
  };
}

/** Accumulator local of tile row i, vector v. */
const acc = (i: number, v: number) => `$c${i}_${v}`;

/**
 * One tile update c + a·b: `vt.add(c, vt.mul(a, b))` — two roundings, the same bits on every
 * engine — or, for the fused forms, `vt.relaxed_madd(a, b, c)`, which an engine computes with one
 * rounding where the CPU has FMA (V8 on x86-64 with FMA3, every arm64) and as the two-rounding pair
 * elsewhere: the relaxed-SIMD proposal lets the result depend on the machine, so these forms are
 * opt-in and never the default.
 */
function mulAdd(vt: string, fma: boolean, a: string, b: string, c: string): string {
  return fma ? `(${vt}.relaxed_madd ${a} ${b} ${c})` : `(${vt}.add ${c} (${vt}.mul ${a} ${b}))`;
}

/** `$c` ← byte address of C[i + row, j + col] (row, col: WAT i32 expressions). */
function cAddress(row: string, col: string, es: number): string {
  return `(local.set $c (i32.add (local.get $cp) (i32.mul (i32.add (i32.mul (i32.add (local.get $i) ${row}) (local.get $ldc)) ${col}) (i32.const ${es}))))`;
}

/**
 * Edge tile (i + MR > mc or j + NR > nc): spill the accumulators to the scratch at address 0 and
 * run `store` (which writes C[i + ii, j + jj] from the scratch, `$c` set) over the valid mr × nr part.
 */
function edgeTile(L: string[], MR: number, NR: number, NRV: number, es: number, store: string[]): void {
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
  L.push(cAddress("(local.get $ii)", "(i32.add (local.get $j) (local.get $jj))", es));
  L.push(...store);
  L.push("(local.set $jj (i32.add (local.get $jj) (i32.const 1))) (br $ejloop)))");
  L.push("(local.set $ii (i32.add (local.get $ii) (i32.const 1))) (br $eiloop)))");
}

function gemmFunction(name: string, ty: Precision, MR: number, NR: number, fma = false): string {
  const { es, NRV, vt, splat } = tileShape(ty, NR);
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
  // The loop runs on the B pointer against its end (no separate counter): the kernel is bound by
  // instruction dispatch rather than by the mul/add units (V8 emits ≈ 29 instructions per step for
  // 16 vector mul/adds, including its back-edge interrupt check), so each loop instruction counts.
  // (Unrolling the p loop was measured 25 % slower: V8 hoists the loads of both steps and spills.)
  L.push(`(local.set $p (i32.add (local.get $b) (i32.mul (local.get $kc) (i32.const ${NR * es}))))`);
  L.push("(block $pdone (loop $ploop");
  L.push("(br_if $pdone (i32.ge_u (local.get $b) (local.get $p)))");
  for (let v = 0; v < NRV; v++) L.push(`(local.set $b${v} (v128.load offset=${v * 16} (local.get $b)))`);
  for (let i = 0; i < MR; i++) {
    L.push(`(local.set $av (${splat} offset=${i * es} (local.get $a)))`);
    for (let v = 0; v < NRV; v++) {
      L.push(`(local.set ${acc(i, v)} ${mulAdd(vt, fma, "(local.get $av)", `(local.get $b${v})`, `(local.get ${acc(i, v)})`)})`);
    }
  }
  L.push(`(local.set $a (i32.add (local.get $a) (i32.const ${MR * es})))`);
  L.push(`(local.set $b (i32.add (local.get $b) (i32.const ${NR * es})))`);
  L.push("(br $ploop)))");
  // Full tile: C += acc with vector loads/stores.
  L.push(
    `(if (i32.and (i32.le_s (i32.add (local.get $i) (i32.const ${MR})) (local.get $mc)) (i32.le_s (i32.add (local.get $j) (i32.const ${NR})) (local.get $nc)))`,
  );
  L.push("(then");
  for (let i = 0; i < MR; i++) {
    L.push(cAddress(`(i32.const ${i})`, "(local.get $j)", es));
    for (let v = 0; v < NRV; v++) {
      L.push(
        `(v128.store offset=${v * 16} (local.get $c) (${vt}.add (v128.load offset=${v * 16} (local.get $c)) (local.get ${acc(i, v)})))`,
      );
    }
  }
  L.push(")(else");
  // Edge tile: spill to the scratch at address 0, add the valid mr × nr part to C.
  edgeTile(L, MR, NR, NRV, es, [
    `(${ty}.store (local.get $c) (${ty}.add (${ty}.load (local.get $c)) (${ty}.load (i32.mul (i32.add (i32.mul (local.get $ii) (i32.const ${NR})) (local.get $jj)) (i32.const ${es})))))`,
  ]);
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
 * 1 adds to it (so C needs no zeroing pass). B panels are NR columns wide and `ldb` deep (elements;
 * `kc` of them used), so a slice of a panel-major operand packed once for all its rows — K for
 * S = Q Kᵀ, V for P V — is addressed in place.
 *
 * `fixedLda` (the `gemm_*_ra<lda>` forms, see `RA_FIXED_LDA`): A's leading dimension is a constant
 * of the code, so the tile's four rows are one pointer and four constant load offsets instead of
 * four pointers each advanced per step. The p loop is bound by instruction dispatch (V8 unrolls it
 * twice: 44 vector instructions and, with four row pointers, 10 pointer adds per two steps), so the
 * three adds less per step take 3–11 % off the product's time (median of 31 alternating pairs per
 * shape, f64 and f32: S = QKᵀ 128×256·k 64, P·V 128×64·k 256, a model projection 128×128·k 64, a
 * causal head's S 16×128·k 16; `--print-wasm-code` for the loop). These forms take no `lda` parameter and compute only whole row tiles (mc a multiple
 * of MR; `newKernelInstance` runs a remainder through the general form); every C entry is the same
 * sum in the same order, so the bits are those of the general form.
 */
function gemmRowsFunction(name: string, ty: Precision, MR: number, NR: number, fixedLda?: number, fma = false): string {
  const { es, NRV, vt, splat } = tileShape(ty, NR);
  const fixed = fixedLda !== undefined;
  const L: string[] = [];
  L.push(
    `(func $${name} (export "${name}") (param $ap i32)${fixed ? "" : " (param $lda i32)"} (param $bp i32) (param $ldb i32) (param $cp i32) (param $ldc i32) (param $mc i32) (param $nc i32) (param $kc i32) (param $acc i32)`,
  );
  L.push("(local $i i32) (local $j i32) (local $p i32) (local $b i32) (local $c i32) (local $av v128) (local $r i32)");
  L.push("(local $ii i32) (local $jj i32) (local $mr i32) (local $nr i32) (local $t i32)");
  for (let i = 0; i < (fixed ? 1 : MR); i++) L.push(`(local $a${i} i32)`);
  for (let v = 0; v < NRV; v++) L.push(`(local $b${v} v128)`);
  for (let i = 0; i < MR; i++) for (let v = 0; v < NRV; v++) L.push(`(local ${acc(i, v)} v128)`);
  L.push("(local.set $j (i32.const 0))");
  L.push("(block $jdone (loop $jloop");
  L.push("(br_if $jdone (i32.ge_s (local.get $j) (local.get $nc)))");
  L.push("(local.set $i (i32.const 0))");
  L.push("(block $idone (loop $iloop");
  // The fixed form runs whole row tiles only: i + MR ≤ mc.
  L.push(`(br_if $idone (i32.ge_s (local.get $i) ${fixed ? `(i32.sub (local.get $mc) (i32.const ${MR - 1}))` : "(local.get $mc)"}))`);
  if (fixed) {
    L.push(`(local.set $a0 (i32.add (local.get $ap) (i32.mul (local.get $i) (i32.const ${fixedLda * es}))))`);
  } else {
    for (let i = 0; i < MR; i++) {
      // row min(i + ii, mc − 1)
      L.push(`(local.set $r (i32.add (local.get $i) (i32.const ${i})))`);
      L.push("(local.set $r (select (local.get $r) (i32.sub (local.get $mc) (i32.const 1)) (i32.lt_s (local.get $r) (local.get $mc))))");
      L.push(`(local.set $a${i} (i32.add (local.get $ap) (i32.mul (i32.mul (local.get $r) (local.get $lda)) (i32.const ${es}))))`);
    }
  }
  L.push(`(local.set $b (i32.add (local.get $bp) (i32.mul (local.get $j) (i32.mul (local.get $ldb) (i32.const ${es})))))`);
  for (let i = 0; i < MR; i++) for (let v = 0; v < NRV; v++) L.push(`(local.set ${acc(i, v)} (v128.const i64x2 0 0))`);
  // Loop on the B pointer against its end, as in `gemmFunction`.
  L.push(`(local.set $p (i32.add (local.get $b) (i32.mul (local.get $kc) (i32.const ${NR * es}))))`);
  L.push("(block $pdone (loop $ploop");
  L.push("(br_if $pdone (i32.ge_u (local.get $b) (local.get $p)))");
  for (let v = 0; v < NRV; v++) L.push(`(local.set $b${v} (v128.load offset=${v * 16} (local.get $b)))`);
  for (let i = 0; i < MR; i++) {
    L.push(
      fixed ? `(local.set $av (${splat} offset=${i * fixedLda * es} (local.get $a0)))` : `(local.set $av (${splat} (local.get $a${i})))`,
    );
    for (let v = 0; v < NRV; v++) {
      L.push(`(local.set ${acc(i, v)} ${mulAdd(vt, fma, "(local.get $av)", `(local.get $b${v})`, `(local.get ${acc(i, v)})`)})`);
    }
    if (!fixed) L.push(`(local.set $a${i} (i32.add (local.get $a${i}) (i32.const ${es})))`);
  }
  if (fixed) L.push(`(local.set $a0 (i32.add (local.get $a0) (i32.const ${es})))`);
  L.push(`(local.set $b (i32.add (local.get $b) (i32.const ${NR * es})))`);
  L.push("(br $ploop)))");
  const fullRows = `(i32.le_s (i32.add (local.get $i) (i32.const ${MR})) (local.get $mc))`;
  const fullCols = `(i32.le_s (i32.add (local.get $j) (i32.const ${NR})) (local.get $nc))`;
  L.push(`(if ${fixed ? fullCols : `(i32.and ${fullRows} ${fullCols})`}`);
  L.push("(then");
  L.push("(if (local.get $acc) (then");
  for (let i = 0; i < MR; i++) {
    L.push(cAddress(`(i32.const ${i})`, "(local.get $j)", es));
    for (let v = 0; v < NRV; v++) {
      L.push(
        `(v128.store offset=${v * 16} (local.get $c) (${vt}.add (v128.load offset=${v * 16} (local.get $c)) (local.get ${acc(i, v)})))`,
      );
    }
  }
  L.push(")(else");
  for (let i = 0; i < MR; i++) {
    L.push(cAddress(`(i32.const ${i})`, "(local.get $j)", es));
    for (let v = 0; v < NRV; v++) L.push(`(v128.store offset=${v * 16} (local.get $c) (local.get ${acc(i, v)}))`);
  }
  L.push("))");
  L.push(")(else");
  edgeTile(L, MR, NR, NRV, es, [
    `(local.set $t (i32.mul (i32.add (i32.mul (local.get $ii) (i32.const ${NR})) (local.get $jj)) (i32.const ${es})))`,
    `(${ty}.store (local.get $c) (select (${ty}.add (${ty}.load (local.get $c)) (${ty}.load (local.get $t))) (${ty}.load (local.get $t)) (local.get $acc)))`,
  ]);
  L.push("))");
  L.push(`(local.set $i (i32.add (local.get $i) (i32.const ${MR})))`);
  L.push("(br $iloop)))");
  L.push(`(local.set $j (i32.add (local.get $j) (i32.const ${NR})))`);
  L.push("(br $jloop)))");
  L.push(")");
  return L.join("\n");
}

/**
 * The leading dimensions of A with a fixed-stride row-major kernel `gemm_f64_ra<lda>` /
 * `gemm_f32_ra<lda>`: the head widths and the fused drivers' score-tile strides in use (d = 16,
 * 32, 64, 128; `BOUND_KEY_CHUNK` = KC = 256) and the shipped models' FFN width (intermediate_size
 * 192: the down projection's A is the N × 192 SwiGLU output). Other strides take the general form.
 */
export const RA_FIXED_LDA = [16, 32, 64, 128, 192, 256] as const;

/** 1.5·2²³ and its bits: adding it rounds a float32 |t| < 2²² to an integer in the low mantissa bits. */
const ROUND_MAGIC_F32 = "0x1.8p23";
const ROUND_MAGIC_F32_BITS = 0x4b400000;

/** The constants of the f32x4 exp. */
function expConstantsF32(): Record<string, string> {
  const f = (v: string) => `(v128.const f32x4 ${v} ${v} ${v} ${v})`;
  const i32 = (v: number) => `(v128.const i32x4 ${v} ${v} ${v} ${v})`;
  return {
    lo: f("-110"),
    hi: f("89"),
    log2e: f("0x1.715476p0"),
    magic: f(ROUND_MAGIC_F32),
    half: f("0.5"),
    // Cody–Waite pair of Cephes' expf: C1 = 0.693359375 has 9 significant bits (k·C1 exact for |k| < 2¹⁵).
    l1: f("0.693359375"),
    l2: f("-2.12194440e-4"),
    // bits(magic) − 127: bits(h) minus it is k₁ + 127, the biased exponent of 2^k₁.
    k1bias: i32(ROUND_MAGIC_F32_BITS - 127),
    // bits(magic) − 254: bits(t) − (k₁ + 127) minus it is k − k₁ + 127.
    k2bias: i32(ROUND_MAGIC_F32_BITS - 254),
    one: f("1"),
    // Cephes expf's minimax polynomial (S. L. Moshier): e^r ≈ 1 + r + r²·P(r), P of degree 5.
    p0: f("1.9875691500e-4"),
    p1: f("1.3981999507e-3"),
    p2: f("8.3334519073e-3"),
    p3: f("4.1665795894e-2"),
    p4: f("1.6666665459e-1"),
    p5: f("5.0000001201e-1"),
  };
}

/** Streams `expInlineF32` can interleave. */
const EXP32_STREAMS = 4;
/** Declarations of the scratch locals of `expInlineF32`. */
const EXP32_LOCALS = Array.from({ length: EXP32_STREAMS }, (_, u) =>
  ["t", "f", "r", "p", "q"].map((n) => `(local $fx_${n}${u} v128)`).join(" "),
).join(" ");

/**
 * Inline f32x4 exp of the v128 locals `xs` into `outs` (up to `EXP32_STREAMS`, interleaved), in
 * float32 throughout — four results per vector, the exp of the float32 attention path:
 *  - x clamped to [−110, 89] (−∞ and anything below −103.98 give exactly 0, above 88.73 +∞, NaN stays NaN);
 *  - k = round(x·log₂e) by the 1.5·2²³ trick, r = x − k·ln 2 by Cephes' two-term Cody–Waite split
 *    (x − k·C1 is exact by Sterbenz), |r| ≤ ln2/2 + 2⁻²⁴;
 *  - e^r = 1 + r + r²·P(r), Cephes' degree-5 minimax P (degree 7 in all), Horner form;
 *  - 2^k from exponent bits in two factors 2^(k−k₁)·2^k₁, k₁ = round(k/2), so subnormal results
 *    are rounded once and 2^128 is never formed.
 * Accuracy: ≤ 2 ulp of float32 from the correctly rounded e^x over [−103, 88] (tested against
 * Math.fround(Math.exp(x)); the measured maximum is stated in the test). ≈ 32 vector operations per
 * four results (the float64 exp takes ≈ 27 per two on its fast path).
 */
function expInlineF32(xs: string[], outs: string[]): string[] {
  const C = expConstantsF32();
  const L: string[] = [];
  const { v, set, step } = streamLocals(L, xs.length, "fx");
  step((u) => set("r", u, `(f32x4.pmin (f32x4.pmax (local.get ${xs[u]}) ${C.lo}) ${C.hi})`));
  step((u) => set("t", u, `(f32x4.add (f32x4.mul ${v("r", u)} ${C.log2e}) ${C.magic})`));
  step((u) => set("f", u, `(f32x4.sub ${v("t", u)} ${C.magic})`));
  step((u) => set("r", u, `(f32x4.sub (f32x4.sub ${v("r", u)} (f32x4.mul ${v("f", u)} ${C.l1})) (f32x4.mul ${v("f", u)} ${C.l2}))`));
  step((u) => set("p", u, `(f32x4.add (f32x4.mul ${C.p0} ${v("r", u)}) ${C.p1})`));
  for (const c of ["p2", "p3", "p4", "p5"]) step((u) => set("p", u, `(f32x4.add (f32x4.mul ${v("p", u)} ${v("r", u)}) ${C[c]})`));
  step((u) => set("p", u, `(f32x4.add (f32x4.add (f32x4.mul ${v("p", u)} (f32x4.mul ${v("r", u)} ${v("r", u)})) ${v("r", u)}) ${C.one})`));
  // q = k₁ + 127 (biased), then 2^(k−k₁) and 2^k₁ as bits (left shifts only).
  step((u) => set("q", u, `(i32x4.sub (f32x4.add (f32x4.mul ${v("f", u)} ${C.half}) ${C.magic}) ${C.k1bias})`));
  step(
    (u) =>
      `(local.set ${outs[u]} (f32x4.mul (f32x4.mul ${v("p", u)} (i32x4.shl (i32x4.sub (i32x4.sub ${v("t", u)} ${v("q", u)}) ${C.k2bias}) (i32.const 23))) (i32x4.shl ${v("q", u)} (i32.const 23))))`,
  );
  return L;
}

/**
 * 2^f on [−½, ½] for `expShiftInlineF32`: 1 + f·(c1 + f·(c2 + … + f·c6)), a degree-6 relative-error
 * near-minimax fit (iteratively reweighted least squares on 2000 Chebyshev nodes, NumPy) with the
 * coefficients rounded to float32: approximation error 2.0e-9 relative (0.017 ulp of float32);
 * evaluated by Horner in float32, ≤ 1.20 ulp from the exact 2^f over 2·10⁶ random points (mean 0.27).
 * Degree 5 would leave 0.9 ulp to the approximation alone.
 */
const EXP2_F32_COEFFS = ["0x1.62e430p-1", "0x1.ebfbdcp-3", "0x1.c6aee8p-5", "0x1.3b2d4cp-7", "0x1.5f3e4cp-10", "0x1.41fd0ap-13"];

/**
 * Inline f32x4 2^(x − M) of the v128 locals `xs` into `outs` (up to `EXP32_STREAMS`), x in units
 * of log₂ (the logits scaled by log₂e) and M the row's integer shift, whose bits(magic) + M the
 * caller keeps splatted in `$cm`: t = x + 1.5·2²³ rounds x to n = t − 1.5·2²³ exactly (|x| < 2²²),
 * f = x − n is exact (|f| ≤ ½), 2^f by `EXP2_F32_COEFFS`, and 2^(n − M) joins it as an integer add
 * of (bits(t) − bits(magic) − M) << 23 to its exponent bits. No range test: the caller guarantees
 * n − M ≥ −124 (`softmax_shift_rows_f32`: |x| ≤ M ≤ 62, so n − M ≥ −2M), where the result, ≥ 2^−124.5,
 * is a normal float32 — so it is exactly 2^(n − M) times the polynomial, within the polynomial's
 * 1.20 ulp of e^((x − M)·ln 2). 18 vector operations per four results (`expInlineF32`: 32).
 * `clamp` (`softmax_prefix_f32`, M = 0 after a float32 max shift, so x ≤ 0 of any size): x is
 * first raised to −125, where the result is set to 0 — weights below 2⁻¹²⁵ (e^−86.6) of the row's
 * largest are flushed to 0 and −∞ gives 0; NaN stays NaN. 21 operations.
 */
function expShiftInlineF32(xs: string[], outs: string[], clamp = false): string[] {
  const f = (v: string) => `(v128.const f32x4 ${v} ${v} ${v} ${v})`;
  const magic = f(ROUND_MAGIC_F32);
  const lo = f("-125");
  const L: string[] = [];
  const { v, set, step } = streamLocals(L, xs.length, "fx");
  if (clamp) step((u) => `(local.set ${xs[u]} (f32x4.pmax (local.get ${xs[u]}) ${lo}))`);
  step((u) => set("t", u, `(f32x4.add (local.get ${xs[u]}) ${magic})`));
  step((u) => set("f", u, `(f32x4.sub (local.get ${xs[u]}) (f32x4.sub ${v("t", u)} ${magic}))`));
  const c = EXP2_F32_COEFFS;
  step((u) => set("p", u, `(f32x4.add (f32x4.mul ${f(c[5])} ${v("f", u)}) ${f(c[4])})`));
  for (let i = 3; i >= 0; i--) step((u) => set("p", u, `(f32x4.add (f32x4.mul ${v("p", u)} ${v("f", u)}) ${f(c[i])})`));
  step((u) => set("p", u, `(f32x4.add (f32x4.mul ${v("p", u)} ${v("f", u)}) ${f("1")})`));
  step((u) => `(local.set ${outs[u]} (i32x4.add ${v("p", u)} (i32x4.shl (i32x4.sub ${v("t", u)} (local.get $cm)) (i32.const 23))))`);
  // Clamped: a lane at exactly −125 (every argument below it, and −∞) gives 0; NaN stays NaN (≠).
  if (clamp) step((u) => `(local.set ${outs[u]} (v128.and (local.get ${outs[u]}) (f32x4.ne (local.get ${xs[u]}) ${lo})))`);
  return L;
}

/**
 * Largest row shift (units of log₂: 62 bits, 43 nats) `softmax_shift_rows_f32` takes: with |x| ≤ M
 * every weight is 2^(x − M) ≥ 2^−124, a normal float32 (the driver recomputes rows above it with the
 * row max).
 */
export const SHIFT_F32_MAX = 62;

/**
 * `softmax_shift_rows_f32(sp, rows, cols, ld, mp, lp)`: the float32 exp pass of the `rowShift:
 * "bound"` form — `softmax_shift_rows_f64`'s role for a float32 tile of logits in units of log₂.
 * Row r (stride ld floats) with the integer shift M = m[r] (float64 at mp, 0 ≤ M ≤ SHIFT_F32_MAX, and
 * |S[r, c]| ≤ M promised by the caller): S ← 2^(S − M) by `expShiftInlineF32` in 16s (four
 * interleaved vectors), then 4s, then single columns (splatted, so every column gets the same
 * arithmetic), and l[r] += Σ_c S[r, c] (float64 at lp: pairs of weight vectors added in float32,
 * their sums widened to float64, as `softmax_rows_f32`). No max pass, no rescaling: M is fixed.
 */
function softmaxShiftRowsF32Function(): string {
  const L: string[] = [];
  const hi = "(i8x16.shuffle 8 9 10 11 12 13 14 15 0 1 2 3 4 5 6 7";
  const widen = (x: string) => `(f64x2.add (f64x2.promote_low_f32x4 ${x}) (f64x2.promote_low_f32x4 ${hi} ${x} ${x})))`;
  L.push(
    '(func $softmax_shift_rows_f32 (export "softmax_shift_rows_f32") (param $sp i32) (param $rows i32) (param $cols i32) (param $ld i32) (param $mp i32) (param $lp i32)',
  );
  L.push(
    `(local $r i32) (local $q i32) (local $end i32) (local $cm v128) (local $vs v128) (local $vm v128) (local $a v128) (local $b v128) ${V4_LOCALS} ${EXP32_LOCALS}`,
  );
  L.push("(local $sum f64) (local $lq i32)");
  L.push("(local.set $r (i32.const 0))");
  L.push("(block $rdone (loop $rloop (br_if $rdone (i32.ge_s (local.get $r) (local.get $rows)))");
  L.push("(local.set $q (i32.add (local.get $sp) (i32.mul (i32.mul (local.get $r) (local.get $ld)) (i32.const 4))))");
  L.push(
    `(local.set $cm (i32x4.splat (i32.add (i32.const ${ROUND_MAGIC_F32_BITS}) (i32.trunc_sat_f64_s (f64.load (i32.add (local.get $mp) (i32.mul (local.get $r) (i32.const 8))))))))`,
  );
  L.push("(local.set $vs (v128.const f64x2 0 0)) (local.set $vm (v128.const f64x2 0 0))");
  L.push("(local.set $end (i32.add (local.get $q) (i32.mul (i32.and (local.get $cols) (i32.const -16)) (i32.const 4))))");
  L.push("(block $g16done (loop $g16loop (br_if $g16done (i32.ge_u (local.get $q) (local.get $end)))");
  for (let u = 0; u < 4; u++) L.push(`(local.set ${X4[u]} (v128.load offset=${u * 16} (local.get $q)))`);
  L.push(...expShiftInlineF32(X4, E4));
  for (let u = 0; u < 4; u++) L.push(`(v128.store offset=${u * 16} (local.get $q) (local.get ${E4[u]}))`);
  L.push("(local.set $a (f32x4.add (local.get $e0) (local.get $e1))) (local.set $b (f32x4.add (local.get $e2) (local.get $e3)))");
  L.push(`(local.set $vs (f64x2.add (local.get $vs) ${widen("(local.get $a)")}))`);
  L.push(`(local.set $vm (f64x2.add (local.get $vm) ${widen("(local.get $b)")}))`);
  L.push("(local.set $q (i32.add (local.get $q) (i32.const 64))) (br $g16loop)))");
  L.push("(local.set $end (i32.add (local.get $end) (i32.mul (i32.and (local.get $cols) (i32.const 12)) (i32.const 4))))");
  L.push("(block $g4done (loop $g4loop (br_if $g4done (i32.ge_u (local.get $q) (local.get $end)))");
  L.push("(local.set $x0 (v128.load (local.get $q)))");
  L.push(...expShiftInlineF32(["$x0"], ["$e0"]));
  L.push("(v128.store (local.get $q) (local.get $e0))");
  L.push(`(local.set $vs (f64x2.add (local.get $vs) ${widen("(local.get $e0)")}))`);
  L.push("(local.set $q (i32.add (local.get $q) (i32.const 16))) (br $g4loop)))");
  L.push("(local.set $vs (f64x2.add (local.get $vs) (local.get $vm)))");
  L.push("(local.set $sum (f64.add (f64x2.extract_lane 0 (local.get $vs)) (f64x2.extract_lane 1 (local.get $vs))))");
  L.push("(local.set $end (i32.add (local.get $end) (i32.mul (i32.and (local.get $cols) (i32.const 3)) (i32.const 4))))");
  L.push("(block $g1done (loop $g1loop (br_if $g1done (i32.ge_u (local.get $q) (local.get $end)))");
  L.push("(local.set $x0 (f32x4.splat (f32.load (local.get $q))))");
  L.push(...expShiftInlineF32(["$x0"], ["$e0"]));
  L.push("(f32.store (local.get $q) (f32x4.extract_lane 0 (local.get $e0)))");
  L.push("(local.set $sum (f64.add (local.get $sum) (f64.promote_f32 (f32x4.extract_lane 0 (local.get $e0)))))");
  L.push("(local.set $q (i32.add (local.get $q) (i32.const 4))) (br $g1loop)))");
  L.push("(local.set $lq (i32.add (local.get $lp) (i32.mul (local.get $r) (i32.const 8))))");
  L.push("(f64.store (local.get $lq) (f64.add (f64.load (local.get $lq)) (local.get $sum)))");
  L.push("(local.set $r (i32.add (local.get $r) (i32.const 1)))");
  L.push("(br $rloop)))");
  L.push(")");
  return L.join("\n");
}

/**
 * `exp_f32(src, dst, n)`: dst[i] = exp(src[i]) for n float32s with the f32x4 exp (may alias): 16
 * per iteration (four interleaved vectors), then 4, then the tail one by one (splatted), so every
 * element gets the same arithmetic. For the accuracy tests and `simdExp32`.
 */
function expF32Function(): string {
  const L: string[] = [];
  L.push('(func $exp_f32 (export "exp_f32") (param $src i32) (param $dst i32) (param $n i32)');
  L.push(`${V4_LOCALS} ${EXP32_LOCALS}`);
  L.push("(block $done16 (loop $lp16 (br_if $done16 (i32.lt_s (local.get $n) (i32.const 16)))");
  for (let u = 0; u < 4; u++) L.push(`(local.set ${X4[u]} (v128.load offset=${u * 16} (local.get $src)))`);
  L.push(...expInlineF32(X4, E4));
  for (let u = 0; u < 4; u++) L.push(`(v128.store offset=${u * 16} (local.get $dst) (local.get ${E4[u]}))`);
  L.push("(local.set $src (i32.add (local.get $src) (i32.const 64))) (local.set $dst (i32.add (local.get $dst) (i32.const 64)))");
  L.push("(local.set $n (i32.sub (local.get $n) (i32.const 16))) (br $lp16)))");
  L.push("(block $done4 (loop $lp4 (br_if $done4 (i32.lt_s (local.get $n) (i32.const 4)))");
  L.push("(local.set $x0 (v128.load (local.get $src)))");
  L.push(...expInlineF32(["$x0"], ["$e0"]));
  L.push("(v128.store (local.get $dst) (local.get $e0))");
  L.push("(local.set $src (i32.add (local.get $src) (i32.const 16))) (local.set $dst (i32.add (local.get $dst) (i32.const 16)))");
  L.push("(local.set $n (i32.sub (local.get $n) (i32.const 4))) (br $lp4)))");
  L.push("(block $done1 (loop $lp1 (br_if $done1 (i32.eqz (local.get $n)))");
  L.push("(local.set $x0 (f32x4.splat (f32.load (local.get $src))))");
  L.push(...expInlineF32(["$x0"], ["$e0"]));
  L.push("(f32.store (local.get $dst) (f32x4.extract_lane 0 (local.get $e0)))");
  L.push("(local.set $src (i32.add (local.get $src) (i32.const 4))) (local.set $dst (i32.add (local.get $dst) (i32.const 4)))");
  L.push("(local.set $n (i32.sub (local.get $n) (i32.const 1))) (br $lp1)))");
  L.push(")");
  return L.join("\n");
}

/**
 * `exp_f64(src, dst, n)`: dst[i] = exp(src[i]) for n float64s (byte addresses; may alias). The
 * SIMD exp on its own, for the accuracy tests and `simdExp`. Eight elements per iteration (four
 * interleaved vectors), then pairs, then the odd one.
 */
function expFunction(): string {
  const L: string[] = [];
  L.push('(func $exp_f64 (export "exp_f64") (param $src i32) (param $dst i32) (param $n i32)');
  L.push(`${V4_LOCALS} ${EXP_LOCALS}`);
  L.push("(block $done8 (loop $lp8");
  L.push("(br_if $done8 (i32.lt_s (local.get $n) (i32.const 8)))");
  for (let u = 0; u < 4; u++) L.push(`(local.set ${X4[u]} (v128.load offset=${u * 16} (local.get $src)))`);
  L.push(...expFast(X4, E4, true));
  for (let u = 0; u < 4; u++) L.push(`(v128.store offset=${u * 16} (local.get $dst) (local.get ${E4[u]}))`);
  L.push("(local.set $src (i32.add (local.get $src) (i32.const 64)))");
  L.push("(local.set $dst (i32.add (local.get $dst) (i32.const 64)))");
  L.push("(local.set $n (i32.sub (local.get $n) (i32.const 8)))");
  L.push("(br $lp8)))");
  L.push("(block $done (loop $lp");
  L.push("(br_if $done (i32.lt_s (local.get $n) (i32.const 2)))");
  L.push("(local.set $x0 (v128.load (local.get $src)))");
  L.push(...expInline(["$x0"], ["$e0"]));
  L.push("(v128.store (local.get $dst) (local.get $e0))");
  L.push("(local.set $src (i32.add (local.get $src) (i32.const 16)))");
  L.push("(local.set $dst (i32.add (local.get $dst) (i32.const 16)))");
  L.push("(local.set $n (i32.sub (local.get $n) (i32.const 2)))");
  L.push("(br $lp)))");
  L.push("(if (i32.eq (local.get $n) (i32.const 1)) (then");
  L.push("(local.set $x0 (v128.load64_zero (local.get $src)))");
  L.push(...expInline(["$x0"], ["$e0"]));
  L.push("(f64.store (local.get $dst) (f64x2.extract_lane 0 (local.get $e0)))))");
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
 * checks l and reports the overflow. Max and exp run over f64x2 vectors, four at a time.
 */
function softmaxRowsFunction(): string {
  const L: string[] = [];
  const negInf = "(v128.const f64x2 -inf -inf)";
  L.push(
    '(func $softmax_rows_f64 (export "softmax_rows_f64") (param $sp i32) (param $rows i32) (param $cols i32) (param $ld i32) (param $mp i32) (param $lp i32) (param $yp i32) (param $ldy i32) (param $dv i32)',
  );
  L.push(`(local $r i32) (local $row i32) (local $q i32) (local $n i32) (local $vm v128) (local $vs v128) ${V4_LOCALS} ${EXP_LOCALS}`);
  L.push("(local $t f64) (local $mo f64) (local $mn f64) (local $alpha f64) (local $sum f64) (local $shift v128) (local $ya i32)");
  L.push("(local.set $r (i32.const 0))");
  L.push("(block $rdone (loop $rloop");
  L.push("(br_if $rdone (i32.ge_s (local.get $r) (local.get $rows)))");
  L.push("(local.set $row (i32.add (local.get $sp) (i32.mul (i32.mul (local.get $r) (local.get $ld)) (i32.const 8))))");
  // Row max over pairs, then the odd tail. pmax (one maxpd) skips a NaN logit here, but the NaN
  // then reaches the exp and the sum, where the caller's finiteness check of l reports it.
  L.push(`(local.set $vm ${negInf}) (local.set $vs ${negInf})`);
  L.push("(local.set $q (local.get $row)) (local.set $n (local.get $cols))");
  L.push("(block $m4done (loop $m4loop (br_if $m4done (i32.lt_s (local.get $n) (i32.const 4)))");
  L.push("(local.set $vm (f64x2.pmax (local.get $vm) (v128.load (local.get $q))))");
  L.push("(local.set $vs (f64x2.pmax (local.get $vs) (v128.load offset=16 (local.get $q))))");
  L.push("(local.set $q (i32.add (local.get $q) (i32.const 32))) (local.set $n (i32.sub (local.get $n) (i32.const 4))) (br $m4loop)))");
  L.push("(local.set $vm (f64x2.pmax (local.get $vm) (local.get $vs)))");
  L.push("(block $mdone (loop $mloop (br_if $mdone (i32.lt_s (local.get $n) (i32.const 2)))");
  L.push("(local.set $vm (f64x2.pmax (local.get $vm) (v128.load (local.get $q))))");
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
  L.push("(local.set $x0 (f64x2.splat (f64.sub (local.get $mo) (local.get $mn))))");
  L.push(...expInline(["$x0"], ["$e0"]));
  L.push("(local.set $alpha (f64x2.extract_lane 0 (local.get $e0)))");
  L.push(
    "(f64.store (i32.add (local.get $lp) (i32.mul (local.get $r) (i32.const 8))) (f64.mul (local.get $alpha) (f64.load (i32.add (local.get $lp) (i32.mul (local.get $r) (i32.const 8))))))",
  );
  L.push("(local.set $ya (i32.add (local.get $yp) (i32.mul (i32.mul (local.get $r) (local.get $ldy)) (i32.const 8))))");
  L.push("(local.set $e0 (f64x2.splat (local.get $alpha)))");
  L.push("(local.set $n (local.get $dv))");
  L.push("(block $ydone (loop $yloop (br_if $ydone (i32.lt_s (local.get $n) (i32.const 2)))");
  L.push("(v128.store (local.get $ya) (f64x2.mul (v128.load (local.get $ya)) (local.get $e0)))");
  L.push("(local.set $ya (i32.add (local.get $ya) (i32.const 16))) (local.set $n (i32.sub (local.get $n) (i32.const 2))) (br $yloop)))");
  L.push(
    "(if (i32.eq (local.get $n) (i32.const 1)) (then (f64.store (local.get $ya) (f64.mul (f64.load (local.get $ya)) (local.get $alpha)))))",
  );
  L.push("))");
  L.push("(f64.store (i32.add (local.get $mp) (i32.mul (local.get $r) (i32.const 8))) (local.get $mn))");
  L.push("))");
  // S ← exp(S − shift), summed: 8 per iteration (4 interleaved vectors), then pairs, then the odd one.
  L.push("(local.set $vs (v128.const f64x2 0 0)) (local.set $vm (v128.const f64x2 0 0))");
  L.push("(local.set $q (local.get $row)) (local.set $n (local.get $cols))");
  L.push("(block $e8done (loop $e8loop (br_if $e8done (i32.lt_s (local.get $n) (i32.const 8)))");
  for (let u = 0; u < 4; u++) L.push(`(local.set ${X4[u]} (f64x2.sub (v128.load offset=${u * 16} (local.get $q)) (local.get $shift)))`);
  L.push(...expFast(X4, E4, false));
  for (let u = 0; u < 4; u++) L.push(`(v128.store offset=${u * 16} (local.get $q) (local.get ${E4[u]}))`);
  L.push("(local.set $vs (f64x2.add (local.get $vs) (f64x2.add (local.get $e0) (local.get $e1))))");
  L.push("(local.set $vm (f64x2.add (local.get $vm) (f64x2.add (local.get $e2) (local.get $e3))))");
  L.push("(local.set $q (i32.add (local.get $q) (i32.const 64))) (local.set $n (i32.sub (local.get $n) (i32.const 8))) (br $e8loop)))");
  L.push("(local.set $vs (f64x2.add (local.get $vs) (local.get $vm)))");
  L.push("(block $edone (loop $eloop (br_if $edone (i32.lt_s (local.get $n) (i32.const 2)))");
  L.push("(local.set $x0 (f64x2.sub (v128.load (local.get $q)) (local.get $shift)))");
  L.push(...expInline(["$x0"], ["$e0"]));
  L.push("(v128.store (local.get $q) (local.get $e0))");
  L.push("(local.set $vs (f64x2.add (local.get $vs) (local.get $e0)))");
  L.push("(local.set $q (i32.add (local.get $q) (i32.const 16))) (local.set $n (i32.sub (local.get $n) (i32.const 2))) (br $eloop)))");
  L.push("(local.set $sum (f64.add (f64x2.extract_lane 0 (local.get $vs)) (f64x2.extract_lane 1 (local.get $vs))))");
  L.push("(if (i32.eq (local.get $n) (i32.const 1)) (then");
  L.push("(local.set $x0 (f64x2.sub (v128.load64_zero (local.get $q)) (local.get $shift)))");
  L.push(...expInline(["$x0"], ["$e0"]));
  L.push("(f64.store (local.get $q) (f64x2.extract_lane 0 (local.get $e0)))");
  L.push("(local.set $sum (f64.add (local.get $sum) (f64x2.extract_lane 0 (local.get $e0))))))");
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
 * `softmax_shift_rows_f64(sp, rows, cols, ld, mp, lp, sym)`: the exp pass of a tile of logits held in
 * units of ln2/2048 — S = y = x·2048/ln 2, rows × cols at sp, row stride ld — under a row shift
 * m[r] (mp, same units) fixed in advance: an upper bound of the row (the fused driver's bound,
 * `softmaxWasm.ts`), not its max, so no max pass runs and no rescaling is needed between key chunks:
 *   S[r,c] ← 2^((S[r,c] − m[r])/2048) = exp(x − m_x) in place;  l[r] ← l[r] + Σ_c S[r,c].
 * m[r] must be an integer (|m| < 2²²; the driver rounds its bound up). The driver folds 2048/ln 2
 * into the query scale (as FlashAttention folds log₂e into its exp2), so the exp's reduction needs
 * no Cody–Waite pair, and the integer shift folds into the rounding constant (`ExpArg` "ys"): 3 FP
 * operations from the stored logit to u = s − round(s) where `softmax_rows_f64` takes 8 to r (x = s − m,
 * x·2048/ln 2 + magic, k·l1, k·l2), and the polynomial runs in u (`expPolyTable`). The rest is as in `expInline` / `expFast`: error ≤ 1.17 ulp from the
 * exact 2^((s − m)/2048) in the normal range (the reduction's 2 roundings add ≤ 2⁻⁵²·|r| ≤ 4e-20
 * relative, < 0.001 ulp), subnormals rounded once, −∞ → 0, NaN → NaN; the fast path checks only
 * s − m ≥ −668.84 nats (its inputs are ≤ 0), and fast and clamped paths give the same bits. 8 per
 * iteration, then pairs, then the odd one. `sym` ≠ 0 is the caller's promise that |S[r,c]| ≤ m[r]
 * for every row whose results it keeps (the driver's bound bounds |s|, not only s: softmaxWasm.ts `boundSlack`):
 * a row with m ≤ `SHIFT_CHECK_FREE_MAX` (334 nats) then runs the 8-wide loop without the range test
 * (4 compares, 3 ands, a bitmask and a branch per 8 scores, and the registers the clamped path held),
 * with the same bits, since all of S − m lies in [−2m, 0], inside the fast range. (A row that breaks
 * the promise gets wrong values there but nothing outside the row and its table reads is touched.)
 */
function softmaxShiftRowsFunction(): string {
  const L: string[] = [];
  L.push(
    '(func $softmax_shift_rows_f64 (export "softmax_shift_rows_f64") (param $sp i32) (param $rows i32) (param $cols i32) (param $ld i32) (param $mp i32) (param $lp i32) (param $sym i32)',
  );
  L.push(`(local $r i32) (local $row i32) (local $q i32) (local $n i32) (local $vm v128) (local $vs v128) ${V4_LOCALS} ${EXP_LOCALS}`);
  L.push("(local $sum f64) (local $m f64) (local $cs v128) (local $fl v128) (local $cl v128) (local $ch v128) (local $qe i32)");
  L.push("(local.set $r (i32.const 0))");
  L.push("(block $rdone (loop $rloop");
  L.push("(br_if $rdone (i32.ge_s (local.get $r) (local.get $rows)))");
  L.push("(local.set $row (i32.add (local.get $sp) (i32.mul (i32.mul (local.get $r) (local.get $ld)) (i32.const 8))))");
  L.push("(local.set $m (f64.load (i32.add (local.get $mp) (i32.mul (local.get $r) (i32.const 8)))))");
  L.push(`(local.set $cs (f64x2.splat (f64.sub (f64.const ${ROUND_MAGIC}) (local.get $m))))`);
  L.push(`(v128.store offset=${EXP_FL_SCRATCH} (i32.const 0) (f64x2.splat (f64.add (local.get $m) (f64.const ${EXP2_FAST_LO}))))`);
  L.push("(local.set $cl (f64x2.splat (f64.add (local.get $m) (f64.const -2204200))))");
  L.push("(local.set $ch (f64x2.splat (f64.add (local.get $m) (f64.const 2097800))))");
  L.push("(local.set $vs (v128.const f64x2 0 0))");
  L.push("(local.set $q (local.get $row)) (local.set $n (local.get $cols))");
  // One accumulator: (e0 + e1) + (e2 + e3) added to it (4 adds per 8, one live vector fewer than two accumulators).
  const sum4 =
    "(local.set $vs (f64x2.add (local.get $vs) (f64x2.add (f64x2.add (local.get $e0) (local.get $e1)) (f64x2.add (local.get $e2) (local.get $e3)))))";
  const next8 = "(local.set $q (i32.add (local.get $q) (i32.const 64))) (local.set $n (i32.sub (local.get $n) (i32.const 8)))";
  // The check-free loop: with |S[r,c]| ≤ m (the caller's promise, $sym) and m ≤ SHIFT_CHECK_FREE_MAX,
  // every S − m lies in [−2m, 0] ⊂ the fast range, so no group needs the test (issue 14, sixth pass).
  L.push(`(if (i32.and (local.get $sym) (f64.le (local.get $m) (f64.const ${SHIFT_CHECK_FREE_MAX}))) (then`);
  // One induction variable (q runs to the end of the row's whole groups of 8; n is set after): one
  // instruction fewer per 8 scores than counting n down beside q.
  L.push("(local.set $qe (i32.add (local.get $q) (i32.shl (i32.and (local.get $n) (i32.const -8)) (i32.const 3))))");
  L.push("(block $c8done (loop $c8loop (br_if $c8done (i32.ge_u (local.get $q) (local.get $qe)))");
  for (let u = 0; u < 4; u++) L.push(`(local.set ${X4[u]} (v128.load offset=${u * 16} (local.get $q)))`);
  L.push(...expFastPath(X4, E4, "ys"));
  for (let u = 0; u < 4; u++) L.push(`(v128.store offset=${u * 16} (local.get $q) (local.get ${E4[u]}))`);
  L.push(sum4, "(local.set $q (i32.add (local.get $q) (i32.const 64)))", "(br $c8loop)))");
  L.push("(local.set $n (i32.and (local.get $n) (i32.const 7)))");
  L.push(")(else");
  L.push("(block $e8done (loop $e8loop (br_if $e8done (i32.lt_s (local.get $n) (i32.const 8)))");
  for (let u = 0; u < 4; u++) L.push(`(local.set ${X4[u]} (v128.load offset=${u * 16} (local.get $q)))`);
  L.push(...expFast(X4, E4, false, "ys"));
  for (let u = 0; u < 4; u++) L.push(`(v128.store offset=${u * 16} (local.get $q) (local.get ${E4[u]}))`);
  L.push(sum4, next8, "(br $e8loop)))");
  L.push("))");
  L.push("(block $edone (loop $eloop (br_if $edone (i32.lt_s (local.get $n) (i32.const 2)))");
  L.push("(local.set $x0 (v128.load (local.get $q)))");
  L.push(...expInline(["$x0"], ["$e0"], "ys"));
  L.push("(v128.store (local.get $q) (local.get $e0))");
  L.push("(local.set $vs (f64x2.add (local.get $vs) (local.get $e0)))");
  L.push("(local.set $q (i32.add (local.get $q) (i32.const 16))) (local.set $n (i32.sub (local.get $n) (i32.const 2))) (br $eloop)))");
  L.push("(local.set $sum (f64.add (f64x2.extract_lane 0 (local.get $vs)) (f64x2.extract_lane 1 (local.get $vs))))");
  L.push("(if (i32.eq (local.get $n) (i32.const 1)) (then");
  L.push("(local.set $x0 (v128.load64_zero (local.get $q)))");
  L.push(...expInline(["$x0"], ["$e0"], "ys"));
  L.push("(f64.store (local.get $q) (f64x2.extract_lane 0 (local.get $e0)))");
  L.push("(local.set $sum (f64.add (local.get $sum) (f64x2.extract_lane 0 (local.get $e0))))))");
  L.push(
    "(f64.store (i32.add (local.get $lp) (i32.mul (local.get $r) (i32.const 8))) (f64.add (local.get $sum) (f64.load (i32.add (local.get $lp) (i32.mul (local.get $r) (i32.const 8))))))",
  );
  L.push("(local.set $r (i32.add (local.get $r) (i32.const 1)))");
  L.push("(br $rloop)))");
  L.push(")");
  return L.join("\n");
}

/**
 * `softmax_rows_f32(sp, rows, cols, ld, mp, lp, yp, ldy, dv)`: `softmax_rows_f64` for a float32 tile
 * S and float32 Y (the float32 attention path), with m and l still float64: the logits are widened
 * max-shifted in float32 (the max is one of the row's float32 logits, so the shift is exact) and
 * exponentiated by the f32x4 exp (`expInlineF32`, ≤ 2 ulp of float32), four weights per vector; the
 * normalizer l is the float64 sum of the stored float32 weights (pairs added in float32 first). The
 * rescaling factor α = exp(m − m′) of the online form stays float64 (one per row and key block).
 * Error model: `float32AttentionErrorBound` in attention/fast.ts.
 */
function softmaxRowsF32Function(): string {
  const L: string[] = [];
  const hi = "(i8x16.shuffle 8 9 10 11 12 13 14 15 0 1 2 3 4 5 6 7";
  L.push(
    '(func $softmax_rows_f32 (export "softmax_rows_f32") (param $sp i32) (param $rows i32) (param $cols i32) (param $ld i32) (param $mp i32) (param $lp i32) (param $yp i32) (param $ldy i32) (param $dv i32)',
  );
  L.push(
    `(local $r i32) (local $row i32) (local $q i32) (local $n i32) (local $vm v128) (local $vs v128) (local $a v128) (local $b v128) (local $sh32 v128) ${V4_LOCALS} ${EXP_LOCALS} ${EXP32_LOCALS}`,
  );
  L.push(
    "(local $t f64) (local $mo f64) (local $mn f64) (local $alpha f64) (local $sum f64) (local $shift v128) (local $ya i32) (local $al32 v128)",
  );
  L.push("(local.set $r (i32.const 0))");
  L.push("(block $rdone (loop $rloop");
  L.push("(br_if $rdone (i32.ge_s (local.get $r) (local.get $rows)))");
  L.push("(local.set $row (i32.add (local.get $sp) (i32.mul (i32.mul (local.get $r) (local.get $ld)) (i32.const 4))))");
  L.push("(local.set $vm (v128.const f32x4 -inf -inf -inf -inf))");
  L.push("(local.set $q (local.get $row)) (local.set $n (local.get $cols))");
  L.push("(block $mdone (loop $mloop (br_if $mdone (i32.lt_s (local.get $n) (i32.const 4)))");
  L.push("(local.set $vm (f32x4.pmax (local.get $vm) (v128.load (local.get $q))))");
  L.push("(local.set $q (i32.add (local.get $q) (i32.const 16))) (local.set $n (i32.sub (local.get $n) (i32.const 4))) (br $mloop)))");
  L.push(
    "(local.set $t (f64.promote_f32 (f32.max (f32.max (f32x4.extract_lane 0 (local.get $vm)) (f32x4.extract_lane 1 (local.get $vm))) (f32.max (f32x4.extract_lane 2 (local.get $vm)) (f32x4.extract_lane 3 (local.get $vm))))))",
  );
  L.push("(block $tdone (loop $tloop (br_if $tdone (i32.eqz (local.get $n)))");
  L.push("(local.set $t (f64.max (local.get $t) (f64.promote_f32 (f32.load (local.get $q)))))");
  L.push("(local.set $q (i32.add (local.get $q) (i32.const 4))) (local.set $n (i32.sub (local.get $n) (i32.const 1))) (br $tloop)))");
  L.push("(local.set $mo (f64.load (i32.add (local.get $mp) (i32.mul (local.get $r) (i32.const 8)))))");
  L.push("(local.set $mn (f64.max (local.get $mo) (local.get $t)))");
  L.push("(if (f64.eq (local.get $mn) (f64.const -inf))");
  L.push("(then (local.set $shift (v128.const f64x2 0 0)))");
  L.push("(else");
  L.push("(local.set $shift (f64x2.splat (local.get $mn)))");
  L.push("(if (f64.ne (local.get $mn) (local.get $mo)) (then");
  L.push("(local.set $x0 (f64x2.splat (f64.sub (local.get $mo) (local.get $mn))))");
  L.push(...expInline(["$x0"], ["$e0"]));
  L.push("(local.set $alpha (f64x2.extract_lane 0 (local.get $e0)))");
  L.push(
    "(f64.store (i32.add (local.get $lp) (i32.mul (local.get $r) (i32.const 8))) (f64.mul (local.get $alpha) (f64.load (i32.add (local.get $lp) (i32.mul (local.get $r) (i32.const 8))))))",
  );
  L.push("(local.set $ya (i32.add (local.get $yp) (i32.mul (i32.mul (local.get $r) (local.get $ldy)) (i32.const 4))))");
  L.push("(local.set $al32 (f32x4.splat (f32.demote_f64 (local.get $alpha))))");
  L.push("(local.set $n (local.get $dv))");
  L.push("(block $ydone (loop $yloop (br_if $ydone (i32.lt_s (local.get $n) (i32.const 4)))");
  L.push("(v128.store (local.get $ya) (f32x4.mul (v128.load (local.get $ya)) (local.get $al32)))");
  L.push("(local.set $ya (i32.add (local.get $ya) (i32.const 16))) (local.set $n (i32.sub (local.get $n) (i32.const 4))) (br $yloop)))");
  L.push("(block $y1done (loop $y1loop (br_if $y1done (i32.eqz (local.get $n)))");
  L.push("(f32.store (local.get $ya) (f32.mul (f32.load (local.get $ya)) (f32x4.extract_lane 0 (local.get $al32))))");
  L.push("(local.set $ya (i32.add (local.get $ya) (i32.const 4))) (local.set $n (i32.sub (local.get $n) (i32.const 1))) (br $y1loop)))");
  L.push("))");
  L.push("(f64.store (i32.add (local.get $mp) (i32.mul (local.get $r) (i32.const 8))) (local.get $mn))");
  L.push("))");
  // S ← exp32(S − shift) (the f32x4 exp), 16 floats per iteration (4 streams); pairs of weight
  // vectors are added in float32 (one rounding, ≤ u relative) and the pair sums in float64, so l is
  // the sum of exactly the stored weights to (1 + u) relative. Then 4 at a time, then the tail.
  L.push("(local.set $vs (v128.const f64x2 0 0)) (local.set $vm (v128.const f64x2 0 0))");
  L.push("(local.set $sh32 (f32x4.splat (f32.demote_f64 (f64x2.extract_lane 0 (local.get $shift)))))");
  L.push("(local.set $q (local.get $row)) (local.set $n (local.get $cols))");
  L.push("(block $e16done (loop $e16loop (br_if $e16done (i32.lt_s (local.get $n) (i32.const 16)))");
  for (let u = 0; u < 4; u++) L.push(`(local.set ${X4[u]} (f32x4.sub (v128.load offset=${u * 16} (local.get $q)) (local.get $sh32)))`);
  L.push(...expInlineF32(X4, E4));
  for (let u = 0; u < 4; u++) L.push(`(v128.store offset=${u * 16} (local.get $q) (local.get ${E4[u]}))`);
  L.push("(local.set $a (f32x4.add (local.get $e0) (local.get $e1))) (local.set $b (f32x4.add (local.get $e2) (local.get $e3)))");
  L.push(
    `(local.set $vs (f64x2.add (local.get $vs) (f64x2.add (f64x2.promote_low_f32x4 (local.get $a)) (f64x2.promote_low_f32x4 ${hi} (local.get $a) (local.get $a))))))`,
  );
  L.push(
    `(local.set $vm (f64x2.add (local.get $vm) (f64x2.add (f64x2.promote_low_f32x4 (local.get $b)) (f64x2.promote_low_f32x4 ${hi} (local.get $b) (local.get $b))))))`,
  );
  L.push("(local.set $q (i32.add (local.get $q) (i32.const 64))) (local.set $n (i32.sub (local.get $n) (i32.const 16))) (br $e16loop)))");
  L.push("(block $e4done (loop $e4loop (br_if $e4done (i32.lt_s (local.get $n) (i32.const 4)))");
  L.push("(local.set $x0 (f32x4.sub (v128.load (local.get $q)) (local.get $sh32)))");
  L.push(...expInlineF32(["$x0"], ["$e0"]));
  L.push("(v128.store (local.get $q) (local.get $e0))");
  L.push(
    `(local.set $vs (f64x2.add (local.get $vs) (f64x2.add (f64x2.promote_low_f32x4 (local.get $e0)) (f64x2.promote_low_f32x4 ${hi} (local.get $e0) (local.get $e0))))))`,
  );
  L.push("(local.set $q (i32.add (local.get $q) (i32.const 16))) (local.set $n (i32.sub (local.get $n) (i32.const 4))) (br $e4loop)))");
  L.push("(local.set $vs (f64x2.add (local.get $vs) (local.get $vm)))");
  L.push("(local.set $sum (f64.add (f64x2.extract_lane 0 (local.get $vs)) (f64x2.extract_lane 1 (local.get $vs))))");
  L.push("(block $e1done (loop $e1loop (br_if $e1done (i32.eqz (local.get $n)))");
  L.push("(local.set $x0 (f32x4.sub (f32x4.splat (f32.load (local.get $q))) (local.get $sh32)))");
  L.push(...expInlineF32(["$x0"], ["$e0"]));
  L.push("(f32.store (local.get $q) (f32x4.extract_lane 0 (local.get $e0)))");
  L.push("(local.set $sum (f64.add (local.get $sum) (f64.promote_f32 (f32x4.extract_lane 0 (local.get $e0)))))");
  L.push("(local.set $q (i32.add (local.get $q) (i32.const 4))) (local.set $n (i32.sub (local.get $n) (i32.const 1))) (br $e1loop)))");
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
 * `gemm_f64_ra(ap, lda, bp, ldb, cp, ldc, mc, nc, kc, acc)` / `gemm_f32_ra`, the SIMD exponential
 * `exp_f64(src, dst, n)`, the online-softmax tile updates `softmax_rows_f64(…)`, its fixed-shift
 * exp pass `softmax_shift_rows_f64(…)`, its float32 form `softmax_shift_rows_f32(…)` and
 * `softmax_rows_f32(…)` (byte addresses;
 * strides and sizes in elements). Assembled by `assembleKernels()` (wabt) into the bytes embedded
 * in `kernelBytes.ts`.
 */
export function kernelWat(): string {
  return [
    ";; RandAttn SIMD128 GEMM kernels — generated by packages/core/src/kernels/wat.ts; do not edit by hand.",
    "(module",
    '(memory (export "memory") 1)',
    expTableData(),
    ...gemmMacroKernels(false),
    expFunction(),
    expF32Function(),
    softmaxRowsFunction(),
    softmaxShiftRowsFunction(),
    softmaxShiftRowsF32Function(),
    softmaxRowsF32Function(),
    rowsMaxFunction(),
    rowsAffineExpFunction(),
    rowsAffineExpPanelsFunction(),
    ...modelKernelFunctions(),
    softmaxPrefixRowsFunction(),
    softmaxPrefixRowsF32Function(),
    symMaxEigFunction(),
    ...packKernelFunctions(),
    ...boundPassFunctions(),
    panelColumnSumsFunction(),
    rowsSumSqFunction(),
    divideRowsFunction(),
    sqDistRowsFunction(),
    ...gemvFunctions(),
    planeOpsFunction(),
    ")",
    "",
  ].join("\n");
}

/** The GEMM macro-kernels every `Kernels` object swaps together (`gemm.ts` `gemmSet`), mul+add or fused. */
function gemmMacroKernels(fma: boolean): string[] {
  return [
    gemmFunction("gemm_f64", "f64", F64_MR, F64_NR, fma),
    gemmFunction("gemm_f32", "f32", F32_MR, F32_NR, fma),
    gemmRowsFunction("gemm_f64_ra", "f64", F64_MR, F64_NR, undefined, fma),
    gemmRowsFunction("gemm_f32_ra", "f32", F32_MR, F32_NR, undefined, fma),
    ...RA_FIXED_LDA.map((lda) => gemmRowsFunction(`gemm_f64_ra${lda}`, "f64", F64_MR, F64_NR, lda, fma)),
    ...RA_FIXED_LDA.map((lda) => gemmRowsFunction(`gemm_f32_ra${lda}`, "f32", F32_MR, F32_NR, lda, fma)),
  ];
}

/**
 * The fused-multiply-add module (relaxed SIMD, opt-in: `setKernelArithmetic("fma")`): the same GEMM
 * macro-kernels as `kernelWat` — same names, tiles, blockings and order of the p loop — with each
 * tile update c + a·b one `relaxed_madd`, so every C entry is Σ_p in the same order with one rounding
 * per term instead of two. It imports the main module's memory (`kernels.memory`), so one instance
 * of it serves one `Kernels` object and reads the panels its drivers packed. Why: SIMD128 without
 * FMA issues a mul and an add per term; on the Intel host a register-only relaxed_madd probe runs
 * 1.5× the mul+add probe (30 against 19.7 GFLOP/s f64, 60 against 39 f32), and matmul, attention and
 * the models' forwards take 0.82–0.88× the time with these kernels (performance.md, "Stop 27").
 */
export function fmaKernelWat(): string {
  return [
    ";; RandAttn relaxed-SIMD (fused multiply-add) GEMM kernels — generated by packages/core/src/kernels/wat.ts; do not edit by hand.",
    "(module",
    '(import "kernels" "memory" (memory 1))',
    ...gemmMacroKernels(true),
    ")",
    "",
  ].join("\n");
}

/**
 * `rows_max_f64(src, ld, rows, cols, mxp, abs)`: mxp[r] = max_l src[r·ld + l] (max |src| when `abs`
 * ≠ 0) for each of `rows` rows (byte addresses, ld in elements) — the row maxima of random-feature
 * maps over their projection (sketch features/maps.ts) and of |Q_h| for the models' float32 range
 * check (pretrained/). The result is Math.max's over the row from −∞: NaN when the row holds a NaN,
 * +0 over −0 (−0 only when every zero at the maximum is −0), −∞ for an empty row.
 *
 * Why not f64x2.max (the form before stop 24): its NaN and ±0 rules take V8 ≈ 8 x64 instructions
 * per f64x2, on the loop-carried chain, so the pass ran at ≈ 1.2 ns per element on the Intel host
 * (6 % of random-feature attention at N = 16,384, more than its exp). Now eight elements a step:
 * NaNs are flagged off the chain (f64x2.ne v v, or-ed into $vn), the value is a tree of
 * f64x2.pmax (one maxpd each: a < b ? b : a, so a NaN in b is dropped; the chain only ever takes
 * non-NaN values) with one pmax per step on the chain; then the ≤ 7 tail elements in scalar the same
 * way. The maximum is exact, so this order gives the same number; only a zero maximum's sign depends
 * on the order, so that row alone is scanned again for a +0 (i64 bits 0).
 */
function rowsMaxFunction(): string {
  const L: string[] = [];
  L.push(
    '(func $rows_max_f64 (export "rows_max_f64") (param $src i32) (param $ld i32) (param $rows i32) (param $cols i32) (param $mxp i32) (param $abs i32)',
  );
  L.push(
    "(local $r i32) (local $row i32) (local $p i32) (local $end i32) (local $vm v128) (local $vn v128) (local $v0 v128) (local $v1 v128) (local $v2 v128) (local $v3 v128) (local $m f64) (local $x f64) (local $nan i32)",
  );
  // One step of 8 elements at $p, |x| when `abs`: NaN flags into $vn, the pmax tree into $vm.
  const step = (abs: boolean): string => {
    const ld = (o: number) => (abs ? `(f64x2.abs (v128.load offset=${o} (local.get $p)))` : `(v128.load offset=${o} (local.get $p))`);
    const nan = (v: string) => `(f64x2.ne (local.get ${v}) (local.get ${v}))`;
    const pmax = (a: string, b: string) => `(f64x2.pmax ${a} ${b})`;
    return [
      `(local.set $v0 ${ld(0)}) (local.set $v1 ${ld(16)}) (local.set $v2 ${ld(32)}) (local.set $v3 ${ld(48)})`,
      `(local.set $vn (v128.or (local.get $vn) (v128.or (v128.or ${nan("$v0")} ${nan("$v1")}) (v128.or ${nan("$v2")} ${nan("$v3")}))))`,
      `(local.set $vm ${pmax("(local.get $vm)", pmax(pmax("(local.get $v0)", "(local.get $v1)"), pmax("(local.get $v2)", "(local.get $v3)")))})`,
      "(local.set $p (i32.add (local.get $p) (i32.const 64)))",
    ].join(" ");
  };
  const x = "(if (local.get $abs) (then (local.set $x (f64.abs (local.get $x)))))";
  L.push("(local.set $r (i32.const 0))");
  L.push("(block $rdone (loop $rloop (br_if $rdone (i32.ge_s (local.get $r) (local.get $rows)))");
  L.push("(local.set $row (i32.add (local.get $src) (i32.mul (i32.mul (local.get $r) (local.get $ld)) (i32.const 8))))");
  L.push("(local.set $p (local.get $row))");
  L.push("(local.set $end (i32.add (local.get $p) (i32.mul (i32.and (local.get $cols) (i32.const -8)) (i32.const 8))))");
  L.push("(local.set $vm (v128.const f64x2 -inf -inf)) (local.set $vn (v128.const i64x2 0 0))");
  L.push("(if (local.get $abs) (then");
  L.push(`(block $adone (loop $aloop (br_if $adone (i32.ge_u (local.get $p) (local.get $end))) ${step(true)} (br $aloop)))`);
  L.push(") (else");
  L.push(`(block $vdone (loop $vloop (br_if $vdone (i32.ge_u (local.get $p) (local.get $end))) ${step(false)} (br $vloop)))`);
  L.push("))");
  // The two lanes (pmax's rule again), then the tail: m < x ? x : m, NaN flagged.
  L.push("(local.set $m (f64x2.extract_lane 0 (local.get $vm))) (local.set $x (f64x2.extract_lane 1 (local.get $vm)))");
  L.push("(local.set $m (select (local.get $x) (local.get $m) (f64.lt (local.get $m) (local.get $x))))");
  L.push("(local.set $nan (v128.any_true (local.get $vn)))");
  L.push("(local.set $end (i32.add (local.get $end) (i32.mul (i32.and (local.get $cols) (i32.const 7)) (i32.const 8))))");
  L.push("(block $tdone (loop $tloop (br_if $tdone (i32.ge_u (local.get $p) (local.get $end)))");
  L.push(`(local.set $x (f64.load (local.get $p))) ${x}`);
  L.push("(local.set $nan (i32.or (local.get $nan) (f64.ne (local.get $x) (local.get $x))))");
  L.push("(local.set $m (select (local.get $x) (local.get $m) (f64.lt (local.get $m) (local.get $x))))");
  L.push("(local.set $p (i32.add (local.get $p) (i32.const 8))) (br $tloop)))");
  // A zero maximum: +0 when the row holds a +0 (|−0| = +0 under `abs`), else −0.
  L.push("(if (f64.eq (local.get $m) (f64.const 0)) (then");
  L.push("(local.set $m (f64.const -0)) (local.set $p (local.get $row))");
  L.push("(local.set $end (i32.add (local.get $row) (i32.mul (local.get $cols) (i32.const 8))))");
  L.push("(block $zdone (loop $zloop (br_if $zdone (i32.ge_u (local.get $p) (local.get $end)))");
  L.push(`(local.set $x (f64.load (local.get $p))) ${x}`);
  L.push("(if (i64.eqz (i64.reinterpret_f64 (local.get $x))) (then (local.set $m (f64.const 0)) (br $zdone)))");
  L.push("(local.set $p (i32.add (local.get $p) (i32.const 8))) (br $zloop)))");
  L.push("))");
  L.push("(if (local.get $nan) (then (local.set $m (f64.const nan))))");
  L.push("(f64.store (i32.add (local.get $mxp) (i32.mul (local.get $r) (i32.const 8))) (local.get $m))");
  L.push("(local.set $r (i32.add (local.get $r) (i32.const 1))) (br $rloop)))");
  L.push(")");
  return L.join("\n");
}

/**
 * `rows_affine_exp_f64(src, ld, dst, ldd, rows, cols, s, mxp, ep)`: dst[r·ldd + l] =
 * exp((src[r·ld + l]·s − mxp[r]) + ep[r]) — the positive random features' exponents (the same
 * operations in the same order as the JavaScript loop, so the same bits) written and exponentiated
 * row by row by `exp_f64` while the row is in L1, instead of an exponent pass and an exp pass.
 */
function rowsAffineExpFunction(): string {
  const L: string[] = [];
  L.push(
    '(func $rows_affine_exp_f64 (export "rows_affine_exp_f64") (param $src i32) (param $ld i32) (param $dst i32) (param $ldd i32) (param $rows i32) (param $cols i32) (param $s f64) (param $mxp i32) (param $ep i32)',
  );
  L.push(
    "(local $r i32) (local $p i32) (local $q i32) (local $end i32) (local $vs v128) (local $vm v128) (local $ve v128) (local $mx f64) (local $e f64)",
  );
  L.push("(local.set $vs (f64x2.splat (local.get $s)))");
  L.push("(local.set $r (i32.const 0))");
  L.push("(block $rdone (loop $rloop (br_if $rdone (i32.ge_s (local.get $r) (local.get $rows)))");
  L.push("(local.set $mx (f64.load (i32.add (local.get $mxp) (i32.mul (local.get $r) (i32.const 8)))))");
  L.push("(local.set $e (f64.load (i32.add (local.get $ep) (i32.mul (local.get $r) (i32.const 8)))))");
  L.push("(local.set $vm (f64x2.splat (local.get $mx))) (local.set $ve (f64x2.splat (local.get $e)))");
  L.push("(local.set $p (i32.add (local.get $src) (i32.mul (i32.mul (local.get $r) (local.get $ld)) (i32.const 8))))");
  L.push("(local.set $q (i32.add (local.get $dst) (i32.mul (i32.mul (local.get $r) (local.get $ldd)) (i32.const 8))))");
  L.push("(local.set $end (i32.add (local.get $p) (i32.mul (i32.and (local.get $cols) (i32.const -2)) (i32.const 8))))");
  L.push("(block $vdone (loop $vloop (br_if $vdone (i32.ge_u (local.get $p) (local.get $end)))");
  L.push(
    "(v128.store (local.get $q) (f64x2.add (f64x2.sub (f64x2.mul (v128.load (local.get $p)) (local.get $vs)) (local.get $vm)) (local.get $ve)))",
  );
  L.push("(local.set $p (i32.add (local.get $p) (i32.const 16))) (local.set $q (i32.add (local.get $q) (i32.const 16))) (br $vloop)))");
  L.push("(if (i32.and (local.get $cols) (i32.const 1)) (then");
  L.push(
    "(f64.store (local.get $q) (f64.add (f64.sub (f64.mul (f64.load (local.get $p)) (local.get $s)) (local.get $mx)) (local.get $e)))))",
  );
  L.push("(local.set $q (i32.add (local.get $dst) (i32.mul (i32.mul (local.get $r) (local.get $ldd)) (i32.const 8))))");
  L.push("(call $exp_f64 (local.get $q) (local.get $q) (local.get $cols))");
  L.push("(local.set $r (i32.add (local.get $r) (i32.const 1))) (br $rloop)))");
  L.push(")");
  return L.join("\n");
}

/**
 * `rows_affine_exp_panels_f64(src, ld, dst, kb, rows, cols, s, mxp, ep, tmp)`: the positive random
 * features of the keys, exp((src[r·ld + l]·s − mxp[r]) + ep[r]), written into 4-column panels of
 * depth `kb` (entry (r, l) at dst + (⌊l/4⌋·kb·4 + r·4 + l mod 4) elements: the packed operand of the
 * GEMM kernels). Eight rows at a time: `rows_affine_exp_f64` forms and exponentiates them into the
 * contiguous scratch at `tmp` (8·cols floats, in L1), then each panel receives the eight rows' 32
 * bytes as one 256-byte run. Stop 30: the former two passes — the exponents stored row by row
 * straight into the panels (`rows_affine_panels_f64`), then `exp_f64` over the block — took 7.4 +
 * 7.2 ms for 16,384 × 256 keys against 5.3 ms for the rows form: each row's 32-byte pieces land
 * kb·32 bytes apart (8 KiB at kb = 256: one L1 set), half a cache line each, so every line was
 * evicted before its second half came. The same operations on every entry as those two passes,
 * so the same bits. `cols` a multiple of 4.
 */
function rowsAffineExpPanelsFunction(): string {
  const L: string[] = [];
  L.push(
    '(func $rows_affine_exp_panels_f64 (export "rows_affine_exp_panels_f64") (param $src i32) (param $ld i32) (param $dst i32) (param $kb i32) (param $rows i32) (param $cols i32) (param $s f64) (param $mxp i32) (param $ep i32) (param $tmp i32)',
  );
  L.push("(local $r i32) (local $n i32) (local $g i32) (local $j i32) (local $p i32) (local $q i32) (local $st i32) (local $rs i32)");
  L.push("(local.set $st (i32.mul (local.get $kb) (i32.const 32)))");
  L.push("(local.set $rs (i32.mul (local.get $cols) (i32.const 8)))");
  L.push("(local.set $r (i32.const 0))");
  L.push("(block $rdone (loop $rloop (br_if $rdone (i32.ge_s (local.get $r) (local.get $rows)))");
  L.push("(local.set $n (i32.sub (local.get $rows) (local.get $r)))");
  L.push("(if (i32.gt_s (local.get $n) (i32.const 8)) (then (local.set $n (i32.const 8))))");
  L.push(
    "(call $rows_affine_exp_f64 (i32.add (local.get $src) (i32.mul (i32.mul (local.get $r) (local.get $ld)) (i32.const 8))) (local.get $ld) (local.get $tmp) (local.get $cols) (local.get $n) (local.get $cols) (local.get $s) (i32.add (local.get $mxp) (i32.mul (local.get $r) (i32.const 8))) (i32.add (local.get $ep) (i32.mul (local.get $r) (i32.const 8))))",
  );
  // Panel j, rows r … r + n − 1: 32 bytes each from the scratch rows, one contiguous run.
  L.push("(local.set $j (i32.const 0))");
  L.push("(block $jdone (loop $jloop (br_if $jdone (i32.ge_s (local.get $j) (local.get $cols)))");
  L.push("(local.set $p (i32.add (local.get $tmp) (i32.mul (local.get $j) (i32.const 8))))");
  L.push(
    "(local.set $q (i32.add (i32.add (local.get $dst) (i32.mul (i32.shr_u (local.get $j) (i32.const 2)) (local.get $st))) (i32.mul (local.get $r) (i32.const 32))))",
  );
  L.push("(local.set $g (i32.const 0))");
  L.push("(block $gdone (loop $gloop (br_if $gdone (i32.ge_s (local.get $g) (local.get $n)))");
  L.push("(v128.store (local.get $q) (v128.load (local.get $p)))");
  L.push("(v128.store offset=16 (local.get $q) (v128.load offset=16 (local.get $p)))");
  L.push("(local.set $p (i32.add (local.get $p) (local.get $rs))) (local.set $q (i32.add (local.get $q) (i32.const 32)))");
  L.push("(local.set $g (i32.add (local.get $g) (i32.const 1))) (br $gloop)))");
  L.push("(local.set $j (i32.add (local.get $j) (i32.const 4))) (br $jloop)))");
  L.push("(local.set $r (i32.add (local.get $r) (local.get $n))) (br $rloop)))");
  L.push(")");
  return L.join("\n");
}

/**
 * The exp loop of `softmax_prefix_*` over the groups of `W` columns below `cEnd` (a local; from c =
 * 0, row start `$row`): the groups wholly below the row's limit `$lim` by `body(false)` in a loop
 * with no other test (the loop of `softmax_rows_*`), then the one group straddling the limit by
 * `body(true)` (its lanes ≥ lim cleared), then zero stores for the groups past it. `body` reads
 * and writes 64 bytes at `$q`; `$c` and `$q` advance by W columns per group.
 */
function groupLoops(L: string[], W: number, cEnd: string, zero: string, body: (masked: boolean) => string[]): void {
  L.push(`(local.set $full (i32.and (local.get $lim) (i32.const ${-W})))`);
  L.push(`(if (i32.gt_s (local.get $full) (local.get ${cEnd})) (then (local.set $full (local.get ${cEnd}))))`);
  L.push("(local.set $q (local.get $row))");
  const next = `(local.set $q (i32.add (local.get $q) (i32.const 64))) (local.set $c (i32.add (local.get $c) (i32.const ${W})))`;
  L.push(`(block $g${W}done (loop $g${W}loop (br_if $g${W}done (i32.ge_s (local.get $c) (local.get $full)))`);
  L.push(...body(false));
  L.push(`${next} (br $g${W}loop)))`);
  L.push(`(if (i32.and (i32.lt_s (local.get $c) (local.get ${cEnd})) (i32.lt_s (local.get $c) (local.get $lim))) (then`);
  L.push(...body(true));
  L.push(`${next}))`);
  L.push(`(block $z${W}done (loop $z${W}loop (br_if $z${W}done (i32.ge_s (local.get $c) (local.get ${cEnd})))`);
  for (let u = 0; u < 4; u++) L.push(`(v128.store offset=${u * 16} (local.get $q) ${zero})`);
  L.push(`${next} (br $z${W}loop)))`);
}

/** Lane offsets (as floats) of the four vectors of an 8-wide f64 group / 16-wide f32 group. */
const laneIndex = (ty: "f64" | "f32", u: number) =>
  ty === "f64" ? `(v128.const f64x2 ${2 * u} ${2 * u + 1})` : `(v128.const f32x4 ${4 * u} ${4 * u + 1} ${4 * u + 2} ${4 * u + 3})`;

/**
 * The first part of the causal exp passes' row max (`softmax_prefix_f64` / `_f32`, since stop 25):
 * the groups of four vectors (8 float64 / 16 float32 columns) wholly below the row's limit `$lim`,
 * from `$row`, into the four running maxima `$pm0` … `$pm3` (pmax with the loaded value second, so
 * a NaN is dropped as in the single chains), `$c` left at the first column not covered. Four chains
 * instead of the kernels' one or two: a pmax has a 4-cycle latency, and one maxpd per vector on a
 * single chain was ≈ 1 cycle per logit of the pass's ≈ 5. Each lane of a chain holds the columns of
 * one lane of the kernels' own chains (column c in lane c mod 4 of f64's vm | vs, of f32's vm), so
 * combining the chains lane-wise gives the same maxima (up to the sign of a zero, which the kernels
 * rescan for). Uses the locals `$q`, `$full`, `$c` and `$pm0` … `$pm3`.
 */
function fourChainMax(L: string[], vt: "f64x2" | "f32x4", negInf: string): void {
  const cols = vt === "f64x2" ? 8 : 16;
  const sh = vt === "f64x2" ? 3 : 2;
  L.push(`(local.set $pm0 ${negInf}) (local.set $pm1 ${negInf}) (local.set $pm2 ${negInf}) (local.set $pm3 ${negInf})`);
  L.push(`(local.set $c (i32.and (local.get $lim) (i32.const -${cols})))`);
  L.push(`(local.set $q (local.get $row)) (local.set $full (i32.add (local.get $row) (i32.shl (local.get $c) (i32.const ${sh}))))`);
  L.push("(block $pmdone (loop $pmloop (br_if $pmdone (i32.ge_u (local.get $q) (local.get $full)))");
  for (let u = 0; u < 4; u++) L.push(`(local.set $pm${u} (${vt}.pmax (local.get $pm${u}) (v128.load offset=${16 * u} (local.get $q))))`);
  L.push("(local.set $q (i32.add (local.get $q) (i32.const 64))) (br $pmloop)))");
}

/**
 * The row max's one-vector loop of the prefix kernels: while c < lim and a whole vector of `step`
 * columns fits below `bound` (a local), load it at `at`, set its lanes ≥ lim to −∞ (`keep`: the
 * lane mask) when it straddles lim, pmax it into `$vm`, and step c. `label` names the block/loop.
 */
function maskedMaxLoop(
  L: string[],
  label: string,
  vt: "f64x2" | "f32x4",
  step: number,
  bound: string,
  at: string,
  negInf: string,
  keep: string,
): void {
  L.push(
    `(block $${label}done (loop $${label}loop (br_if $${label}done (i32.or (i32.ge_s (local.get $c) (local.get $lim)) (i32.gt_s (i32.add (local.get $c) (i32.const ${step})) (local.get ${bound}))))`,
  );
  L.push(`(local.set $x0 (v128.load ${at}))`);
  L.push(
    `(if (i32.gt_s (i32.add (local.get $c) (i32.const ${step})) (local.get $lim)) (then (local.set $x0 (v128.bitselect (local.get $x0) ${negInf} ${keep}))))`,
  );
  L.push(`(local.set $vm (${vt}.pmax (local.get $vm) (local.get $x0)))`);
  L.push(`(local.set $c (i32.add (local.get $c) (i32.const ${step}))) (br $${label}loop)))`);
}

/**
 * `softmax_prefix_f64(sp, rows, cols, ld, mp, lp)`: the exp pass of one block of a prefix-masked
 * (causal, padding) materialized attention without writing a single −∞ (issue 14): row r of the
 * logit tile S (rows × cols at sp, row stride ld) allows the keys c < lim[r], lim[r] read from
 * mp[r] (an integer-valued float64, clamped to [0, cols]); then
 *   m[r] ← max_{c < lim} S[r,c];  S[r,c] ← exp(S[r,c] − m[r]) for c < lim, 0 for lim ≤ c < cols;
 *   l[r] ← Σ_c S[r,c]   (m = −∞, l = 0 and a zero row where no allowed logit is finite).
 * The same bits as `softmax_rows_f64` on a fresh tile (m = −∞, l = 0) whose masked logits were set
 * to −∞ — the former prefix path — by construction: the same groups from column 0 (the max in 4s,
 * pairs, the odd one; the exp in 8s through `expFast`, pairs and the odd one through `expInline`,
 * the same two accumulators), a group that straddles lim computed whole with its lanes ≥ lim
 * cleared afterwards (exp(−∞) = +0 there before; a cleared lane, whatever its logit, adds the
 * same +0), and the groups past lim skipped and stored as zeros (adding +0 vectors left the sums
 * unchanged). What is saved: the JavaScript −∞ fills (one per row), the max over and the exp of
 * the masked entries (a causal 16-row block's rows average 8 masked columns, 32-row blocks 16),
 * and the slow exp path every group holding a −∞ took.
 */
function softmaxPrefixRowsFunction(): string {
  const L: string[] = [];
  const negInf = "(v128.const f64x2 -inf -inf)";
  const zero = "(v128.const f64x2 0 0)";
  const at = () => "(i32.add (local.get $row) (i32.shl (local.get $c) (i32.const 3)))";
  const keep = (u: number) =>
    `(f64x2.lt (f64x2.add (f64x2.splat (f64.convert_i32_s (local.get $c))) ${laneIndex("f64", u)}) (local.get $limv))`;
  L.push(
    '(func $softmax_prefix_f64 (export "softmax_prefix_f64") (param $sp i32) (param $rows i32) (param $cols i32) (param $ld i32) (param $mp i32) (param $lp i32)',
  );
  L.push(
    `(local $r i32) (local $row i32) (local $c i32) (local $q i32) (local $full i32) (local $lim i32) (local $c8 i32) (local $c4 i32) (local $c2 i32) (local $vm v128) (local $vs v128) (local $limv v128) ${V4_LOCALS} ${EXP_LOCALS}`,
  );
  L.push("(local $t f64) (local $sum f64) (local $shift v128) (local $pm0 v128) (local $pm1 v128) (local $pm2 v128) (local $pm3 v128)");
  L.push("(local.set $c8 (i32.and (local.get $cols) (i32.const -8)))");
  L.push("(local.set $c4 (i32.and (local.get $cols) (i32.const -4)))");
  L.push("(local.set $c2 (i32.and (local.get $cols) (i32.const -2)))");
  L.push("(local.set $r (i32.const 0))");
  L.push("(block $rdone (loop $rloop");
  L.push("(br_if $rdone (i32.ge_s (local.get $r) (local.get $rows)))");
  L.push("(local.set $row (i32.add (local.get $sp) (i32.mul (i32.mul (local.get $r) (local.get $ld)) (i32.const 8))))");
  L.push("(local.set $lim (i32.trunc_sat_f64_s (f64.load (i32.add (local.get $mp) (i32.mul (local.get $r) (i32.const 8))))))");
  L.push("(if (i32.lt_s (local.get $lim) (i32.const 0)) (then (local.set $lim (i32.const 0))))");
  L.push("(if (i32.gt_s (local.get $lim) (local.get $cols)) (then (local.set $lim (local.get $cols))))");
  L.push("(local.set $limv (f64x2.splat (f64.convert_i32_s (local.get $lim))))");
  // Row max over c < lim: 4s (two running maxima), pairs, the odd last column — softmax_rows_f64's
  // groups, a straddling group's lanes ≥ lim replaced by −∞ (pmax skips a NaN logit as there).
  // `fast`: first the 8s wholly below lim into four running maxima (issue 14, stop 25: the two
  // pmax chains, one maxpd per 2 logits each with a 4-cycle latency, were ≈ 1 cycle per logit of the
  // ≈ 5 the pass takes). The maximum of the same numbers is the same number in any order — except
  // the sign of a zero maximum (pmax keeps the first of −0, +0 it meets) — so a row whose maximum is
  // ±0 is scanned again in the original order (`fast` false): the same m bit for bit.
  const maxPass = (fast: boolean) => {
    const x = fast ? "f" : "s";
    L.push(`(local.set $vm ${negInf}) (local.set $vs ${negInf}) (local.set $c (i32.const 0))`);
    if (fast) {
      fourChainMax(L, "f64x2", negInf);
      L.push(
        "(local.set $vm (f64x2.pmax (local.get $pm0) (local.get $pm2))) (local.set $vs (f64x2.pmax (local.get $pm1) (local.get $pm3)))",
      );
    }
    L.push(
      `(block $m4done_${x} (loop $m4loop_${x} (br_if $m4done_${x} (i32.or (i32.ge_s (local.get $c) (local.get $lim)) (i32.gt_s (i32.add (local.get $c) (i32.const 4)) (local.get $c4))))`,
    );
    L.push(`(local.set $x0 (v128.load ${at()})) (local.set $x1 (v128.load offset=16 ${at()}))`);
    L.push("(if (i32.gt_s (i32.add (local.get $c) (i32.const 4)) (local.get $lim)) (then");
    L.push(`(local.set $x0 (v128.bitselect (local.get $x0) ${negInf} ${keep(0)}))`);
    L.push(`(local.set $x1 (v128.bitselect (local.get $x1) ${negInf} ${keep(1)}))))`);
    L.push("(local.set $vm (f64x2.pmax (local.get $vm) (local.get $x0))) (local.set $vs (f64x2.pmax (local.get $vs) (local.get $x1)))");
    L.push(`(local.set $c (i32.add (local.get $c) (i32.const 4))) (br $m4loop_${x})))`);
    L.push("(local.set $vm (f64x2.pmax (local.get $vm) (local.get $vs)))");
    maskedMaxLoop(L, `m2_${x}`, "f64x2", 2, "$c2", at(), negInf, keep(0));
    L.push("(local.set $t (f64.max (f64x2.extract_lane 0 (local.get $vm)) (f64x2.extract_lane 1 (local.get $vm))))");
    // Only an odd cols leaves c < lim here (c = cols − 1): softmax_rows_f64's f64.max of the last column.
    L.push(`(if (i32.lt_s (local.get $c) (local.get $lim)) (then (local.set $t (f64.max (local.get $t) (f64.load ${at()})))))`);
  };
  maxPass(true);
  L.push("(if (f64.eq (local.get $t) (f64.const 0)) (then");
  maxPass(false);
  L.push("))");
  L.push("(f64.store (i32.add (local.get $mp) (i32.mul (local.get $r) (i32.const 8))) (local.get $t))");
  L.push(
    `(if (f64.eq (local.get $t) (f64.const -inf)) (then (local.set $shift ${zero})) (else (local.set $shift (f64x2.splat (local.get $t)))))`,
  );
  // S ← exp(S − m) over c < lim, zeros after: 8s, pairs, the odd one, as softmax_rows_f64.
  L.push(`(local.set $vs ${zero}) (local.set $vm ${zero}) (local.set $c (i32.const 0))`);
  groupLoops(L, 8, "$c8", zero, (masked) => {
    const G: string[] = [];
    for (let u = 0; u < 4; u++) G.push(`(local.set ${X4[u]} (f64x2.sub (v128.load offset=${u * 16} (local.get $q)) (local.get $shift)))`);
    G.push(...expFast(X4, E4, false));
    if (masked) for (let u = 0; u < 4; u++) G.push(`(local.set ${E4[u]} (v128.and (local.get ${E4[u]}) ${keep(u)}))`);
    for (let u = 0; u < 4; u++) G.push(`(v128.store offset=${u * 16} (local.get $q) (local.get ${E4[u]}))`);
    G.push("(local.set $vs (f64x2.add (local.get $vs) (f64x2.add (local.get $e0) (local.get $e1))))");
    G.push("(local.set $vm (f64x2.add (local.get $vm) (f64x2.add (local.get $e2) (local.get $e3))))");
    return G;
  });
  L.push("(local.set $vs (f64x2.add (local.get $vs) (local.get $vm)))");
  L.push("(block $e2done (loop $e2loop (br_if $e2done (i32.gt_s (i32.add (local.get $c) (i32.const 2)) (local.get $c2)))");
  L.push(`(if (i32.ge_s (local.get $c) (local.get $lim)) (then (v128.store ${at()} ${zero})) (else`);
  L.push(`(local.set $x0 (f64x2.sub (v128.load ${at()}) (local.get $shift)))`);
  L.push(...expInline(["$x0"], ["$e0"]));
  L.push(
    `(if (i32.gt_s (i32.add (local.get $c) (i32.const 2)) (local.get $lim)) (then (local.set $e0 (v128.and (local.get $e0) ${keep(0)}))))`,
  );
  L.push(`(v128.store ${at()} (local.get $e0))`);
  L.push("(local.set $vs (f64x2.add (local.get $vs) (local.get $e0)))))");
  L.push("(local.set $c (i32.add (local.get $c) (i32.const 2))) (br $e2loop)))");
  L.push("(local.set $sum (f64.add (f64x2.extract_lane 0 (local.get $vs)) (f64x2.extract_lane 1 (local.get $vs))))");
  L.push("(if (i32.lt_s (local.get $c) (local.get $cols)) (then");
  L.push(`(if (i32.lt_s (local.get $c) (local.get $lim)) (then`);
  L.push(`(local.set $x0 (f64x2.sub (v128.load64_zero ${at()}) (local.get $shift)))`);
  L.push(...expInline(["$x0"], ["$e0"]));
  L.push(`(f64.store ${at()} (f64x2.extract_lane 0 (local.get $e0)))`);
  L.push("(local.set $sum (f64.add (local.get $sum) (f64x2.extract_lane 0 (local.get $e0)))))");
  L.push(`(else (f64.store ${at()} (f64.const 0))))))`);
  // l = Σ + 0 as softmax_rows_f64 adds the sum to the fresh l = 0 (no row: l stays 0).
  L.push(
    "(f64.store (i32.add (local.get $lp) (i32.mul (local.get $r) (i32.const 8))) (select (f64.const 0) (f64.add (local.get $sum) (f64.const 0)) (f64.eq (local.get $t) (f64.const -inf))))",
  );
  L.push("(local.set $r (i32.add (local.get $r) (i32.const 1)))");
  L.push("(br $rloop)))");
  L.push(")");
  return L.join("\n");
}

/**
 * `softmax_prefix_f32(sp, rows, cols, ld, mp, lp)`: `softmax_prefix_f64` for a float32 tile of
 * logits in units of ln 2 (the float32 causal path scales its queries by scale·log₂e; since stop 20),
 * m and l float64: the row max over c < lim in f32x4 4s, then the single columns; S ← 2^(S − m) with
 * the float32 shift S − m and `expShiftInlineF32`'s clamped form (weights below 2⁻¹²⁵ of the row's
 * largest are 0) in 16s and 4s, then the singles; pairs of weight vectors added in float32, their sums
 * in float64; a straddling group's lanes ≥ lim set to −∞ for the max and cleared after the exp, the
 * groups past lim stored as zeros. (Before stop 20: the nats form with `expInlineF32`, 32 operations
 * per four weights where this takes 21.)
 */
function softmaxPrefixRowsF32Function(): string {
  const L: string[] = [];
  const hi = "(i8x16.shuffle 8 9 10 11 12 13 14 15 0 1 2 3 4 5 6 7";
  const negInf = "(v128.const f32x4 -inf -inf -inf -inf)";
  const zero = "(v128.const f32x4 0 0 0 0)";
  const at = () => "(i32.add (local.get $row) (i32.shl (local.get $c) (i32.const 2)))";
  const keep = (u: number) =>
    `(f32x4.lt (f32x4.add (f32x4.splat (f32.convert_i32_s (local.get $c))) ${laneIndex("f32", u)}) (local.get $limv))`;
  const widen = (v: string) => `(f64x2.add (f64x2.promote_low_f32x4 ${v}) (f64x2.promote_low_f32x4 ${hi} ${v} ${v})))`;
  L.push(
    '(func $softmax_prefix_f32 (export "softmax_prefix_f32") (param $sp i32) (param $rows i32) (param $cols i32) (param $ld i32) (param $mp i32) (param $lp i32)',
  );
  L.push(
    `(local $r i32) (local $row i32) (local $c i32) (local $q i32) (local $full i32) (local $lim i32) (local $c16 i32) (local $c4 i32) (local $vm v128) (local $vs v128) (local $a v128) (local $b v128) (local $limv v128) (local $sh32 v128) (local $cm v128) ${V4_LOCALS} ${EXP32_LOCALS}`,
  );
  L.push("(local $t f64) (local $sum f64) (local $pm0 v128) (local $pm1 v128) (local $pm2 v128) (local $pm3 v128)");
  L.push(`(local.set $cm (i32x4.splat (i32.const ${ROUND_MAGIC_F32_BITS})))`);
  L.push("(local.set $c16 (i32.and (local.get $cols) (i32.const -16)))");
  L.push("(local.set $c4 (i32.and (local.get $cols) (i32.const -4)))");
  L.push("(local.set $r (i32.const 0))");
  L.push("(block $rdone (loop $rloop");
  L.push("(br_if $rdone (i32.ge_s (local.get $r) (local.get $rows)))");
  L.push("(local.set $row (i32.add (local.get $sp) (i32.mul (i32.mul (local.get $r) (local.get $ld)) (i32.const 4))))");
  L.push("(local.set $lim (i32.trunc_sat_f64_s (f64.load (i32.add (local.get $mp) (i32.mul (local.get $r) (i32.const 8))))))");
  L.push("(if (i32.lt_s (local.get $lim) (i32.const 0)) (then (local.set $lim (i32.const 0))))");
  L.push("(if (i32.gt_s (local.get $lim) (local.get $cols)) (then (local.set $lim (local.get $cols))))");
  L.push("(local.set $limv (f32x4.splat (f32.convert_i32_s (local.get $lim))))");
  // Row max: f32x4 4s over c < lim (a straddling group's lanes ≥ lim → −∞), then single columns.
  // `fast`: first the 16s wholly below lim into four running maxima, as softmax_prefix_f64 (one
  // pmax chain was ≈ 1 cycle per logit); a row whose maximum is ±0 is scanned again in the original
  // order (`fast` false), so m keeps its bits (only a zero maximum's sign depends on the order).
  const maxPass = (fast: boolean) => {
    const x = fast ? "f" : "s";
    L.push(`(local.set $vm ${negInf}) (local.set $c (i32.const 0))`);
    if (fast) {
      fourChainMax(L, "f32x4", negInf);
      L.push("(local.set $vm (f32x4.pmax (f32x4.pmax (local.get $pm0) (local.get $pm1)) (f32x4.pmax (local.get $pm2) (local.get $pm3))))");
    }
    maskedMaxLoop(L, `m4_${x}`, "f32x4", 4, "$c4", at(), negInf, keep(0));
    L.push(
      "(local.set $t (f64.promote_f32 (f32.max (f32.max (f32x4.extract_lane 0 (local.get $vm)) (f32x4.extract_lane 1 (local.get $vm))) (f32.max (f32x4.extract_lane 2 (local.get $vm)) (f32x4.extract_lane 3 (local.get $vm))))))",
    );
    L.push(`(block $tdone_${x} (loop $tloop_${x} (br_if $tdone_${x} (i32.ge_s (local.get $c) (local.get $lim)))`);
    L.push(`(local.set $t (f64.max (local.get $t) (f64.promote_f32 (f32.load ${at()}))))`);
    L.push(`(local.set $c (i32.add (local.get $c) (i32.const 1))) (br $tloop_${x})))`);
  };
  maxPass(true);
  L.push("(if (f64.eq (local.get $t) (f64.const 0)) (then");
  maxPass(false);
  L.push("))");
  L.push("(f64.store (i32.add (local.get $mp) (i32.mul (local.get $r) (i32.const 8))) (local.get $t))");
  L.push(
    `(if (f64.eq (local.get $t) (f64.const -inf)) (then (local.set $sh32 ${zero})) (else (local.set $sh32 (f32x4.splat (f32.demote_f64 (local.get $t))))))`,
  );
  // S ← exp32(S − m) over c < lim, zeros after: 16s, 4s, singles, as softmax_rows_f32.
  L.push("(local.set $vs (v128.const f64x2 0 0)) (local.set $vm (v128.const f64x2 0 0)) (local.set $c (i32.const 0))");
  groupLoops(L, 16, "$c16", zero, (masked) => {
    const G: string[] = [];
    for (let u = 0; u < 4; u++) G.push(`(local.set ${X4[u]} (f32x4.sub (v128.load offset=${u * 16} (local.get $q)) (local.get $sh32)))`);
    G.push(...expShiftInlineF32(X4, E4, true));
    if (masked) for (let u = 0; u < 4; u++) G.push(`(local.set ${E4[u]} (v128.and (local.get ${E4[u]}) ${keep(u)}))`);
    for (let u = 0; u < 4; u++) G.push(`(v128.store offset=${u * 16} (local.get $q) (local.get ${E4[u]}))`);
    G.push("(local.set $a (f32x4.add (local.get $e0) (local.get $e1))) (local.set $b (f32x4.add (local.get $e2) (local.get $e3)))");
    G.push(`(local.set $vs (f64x2.add (local.get $vs) ${widen("(local.get $a)")}))`);
    G.push(`(local.set $vm (f64x2.add (local.get $vm) ${widen("(local.get $b)")}))`);
    return G;
  });
  L.push("(block $e4done (loop $e4loop (br_if $e4done (i32.gt_s (i32.add (local.get $c) (i32.const 4)) (local.get $c4)))");
  L.push(`(if (i32.ge_s (local.get $c) (local.get $lim)) (then (v128.store ${at()} ${zero})) (else`);
  L.push(`(local.set $x0 (f32x4.sub (v128.load ${at()}) (local.get $sh32)))`);
  L.push(...expShiftInlineF32(["$x0"], ["$e0"], true));
  L.push(
    `(if (i32.gt_s (i32.add (local.get $c) (i32.const 4)) (local.get $lim)) (then (local.set $e0 (v128.and (local.get $e0) ${keep(0)}))))`,
  );
  L.push(`(v128.store ${at()} (local.get $e0))`);
  L.push(`(local.set $vs (f64x2.add (local.get $vs) ${widen("(local.get $e0)")}))))`);
  L.push("(local.set $c (i32.add (local.get $c) (i32.const 4))) (br $e4loop)))");
  L.push("(local.set $vs (f64x2.add (local.get $vs) (local.get $vm)))");
  L.push("(local.set $sum (f64.add (f64x2.extract_lane 0 (local.get $vs)) (f64x2.extract_lane 1 (local.get $vs))))");
  L.push("(block $e1done (loop $e1loop (br_if $e1done (i32.ge_s (local.get $c) (local.get $cols)))");
  L.push(`(if (i32.ge_s (local.get $c) (local.get $lim)) (then (f32.store ${at()} (f32.const 0))) (else`);
  L.push(`(local.set $x0 (f32x4.sub (f32x4.splat (f32.load ${at()})) (local.get $sh32)))`);
  L.push(...expShiftInlineF32(["$x0"], ["$e0"], true));
  L.push(`(f32.store ${at()} (f32x4.extract_lane 0 (local.get $e0)))`);
  L.push("(local.set $sum (f64.add (local.get $sum) (f64.promote_f32 (f32x4.extract_lane 0 (local.get $e0)))))))");
  L.push("(local.set $c (i32.add (local.get $c) (i32.const 1))) (br $e1loop)))");
  L.push(
    "(f64.store (i32.add (local.get $lp) (i32.mul (local.get $r) (i32.const 8))) (select (f64.const 0) (f64.add (local.get $sum) (f64.const 0)) (f64.eq (local.get $t) (f64.const -inf))))",
  );
  L.push("(local.set $r (i32.add (local.get $r) (i32.const 1)))");
  L.push("(br $rloop)))");
  L.push(")");
  return L.join("\n");
}
