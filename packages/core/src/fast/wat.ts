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
 * The whole kernel module as WAT text: one exported, growable memory (`memory`) and the two
 * macro-kernels `gemm_f64(ap, bp, cp, ldc, mc, nc, kc)` and `gemm_f32(…)` (byte addresses; `ldc`,
 * `mc`, `nc`, `kc` in elements). Assembled by `assembleKernels()` (wabt) into the bytes embedded
 * in `kernelBytes.ts`.
 */
export function kernelWat(): string {
  return [
    ";; RandAttn SIMD128 GEMM kernels — generated by packages/core/src/fast/wat.ts; do not edit by hand.",
    "(module",
    '(memory (export "memory") 1)',
    gemmFunction("gemm_f64", "f64", F64_MR, F64_NR),
    gemmFunction("gemm_f32", "f32", F32_MR, F32_NR),
    ")",
    "",
  ].join("\n");
}
