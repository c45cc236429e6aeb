/**
 * WAT of the GEMM driver's operand packing (gemm.ts `gemmWasm`) in WebAssembly: a block of a
 * float64 operand is first copied row by row into kernel memory (`Float64Array.set`, a memcpy),
 * then one of these functions writes it into the macro-kernel's panels — rounded to float32 for the
 * float32 kernel — and returns max |x| over the block (NaN when some x is NaN), which the float32
 * products' range check (range32.ts) needs and used to get from a separate scan.
 *
 * Why: JavaScript loops over typed arrays cost ≈ 4 ns per element on the stop-23 host (a plain
 * copy loop 3.98 ms per 2²⁰ elements; packA 3.9; `maxAbsOf` 3.3), a row-wise `set` 1.24 and these
 * SIMD loops a fraction of a nanosecond. At 1024³ in float32 the JavaScript packing and the range
 * scan were ≈ 13 % of the product (issue 14; docs/performance.md, "Stop 23").
 *
 * The panels are exactly the JavaScript packers' (`packA` / `packB` in gemm.ts): float64 values
 * copied, float32 values rounded to nearest-even (`f32.demote_f64`, as a Float32Array store),
 * padding zero — so the products keep their bits (tested against the JavaScript path).
 *
 *  - `pack_rows_<ty>_r<R>(src, ld, rows, kc, dst)`: `rows` rows of `kc` elements (row stride `ld`)
 *    into R-row panels, element (ip·kc + p·R + ii) — op(A) from row-major A (R = MR), op(B) from
 *    Bᵀ's rows (R = NR);
 *  - `pack_cols_<ty>_c<C>(src, ld, kc, nc, dst)`: `kc` rows of `nc` elements into C-column panels,
 *    element (jp·kc + p·C + jj) — op(B) from row-major B (C = NR), op(A) from Aᵀ (C = MR); full
 *    panels in blocks of 8 rows across all panels (the JavaScript `packB`'s L2 reasoning).
 *
 * Addresses in bytes, `ld` in elements of the float64 source.
 */

type Ty = "f64" | "f32";

/** WAT: `op` folded over the expressions as a balanced tree (short dependency chains). */
const tree = (op: string, xs: string[]): string =>
  xs.length === 1 ? xs[0] : `(${op} ${tree(op, xs.slice(0, xs.length >> 1))} ${tree(op, xs.slice(xs.length >> 1))})`;

/**
 * The running max of |v| over one step's vectors into $vm (pmax: one maxpd, NaN dropped there and
 * tracked in $vn by v ≠ v). The step's vectors are reduced as a tree first, so the loop-carried
 * chain is one pmax per step: one pmax per vector made the 4-cycle maxpd latency the loop's bound
 * (≈ 1 ns per element).
 */
const trackVecs = (vs: string[]) =>
  `(local.set $vm (f64x2.pmax (local.get $vm) ${tree(
    "f64x2.pmax",
    vs.map((v) => `(f64x2.abs ${v})`),
  )})) ` +
  `(local.set $vn (v128.or (local.get $vn) ${tree(
    "v128.or",
    vs.map((v) => `(f64x2.ne ${v} ${v})`),
  )}))`;

/** Scalar running max of |x| in $mx (compare and select) and NaN in $nan, as watModel's trackMax. */
const trackScalar = (x: string) =>
  `(local.set $a (f64.abs ${x})) (local.set $mx (select (local.get $a) (local.get $mx) (f64.gt (local.get $a) (local.get $mx)))) (local.set $nan (i32.or (local.get $nan) (f64.ne (local.get $a) (local.get $a))))`;

const MAX_LOCALS = "(local $x f64) (local $a f64) (local $mx f64) (local $nan i32) (local $vm v128) (local $vn v128)";
const MAX_INIT =
  "(local.set $mx (f64.const 0)) (local.set $nan (i32.const 0)) (local.set $vm (v128.const i64x2 0 0)) (local.set $vn (v128.const i64x2 0 0))";
const MAX_RESULT = [
  "(local.set $mx (f64.max (local.get $mx) (f64.max (f64x2.extract_lane 0 (local.get $vm)) (f64x2.extract_lane 1 (local.get $vm)))))",
  "(select (f64.const nan) (local.get $mx) (i32.or (local.get $nan) (v128.any_true (local.get $vn))))",
].join("\n");

/** Stores the float64 value x at byte address addr in `ty` (float32: rounded to nearest-even). */
const storeElem = (ty: Ty, addr: string, x: string) =>
  ty === "f64" ? `(f64.store ${addr} ${x})` : `(f32.store ${addr} (f32.demote_f64 ${x}))`;

/**
 * One element of a partial panel: the float64 at `addr` when `inside`, else 0 (the padding), stored
 * at $d in `ty` (its max tracked only when loaded), $d advanced by one element.
 */
const paddedElement = (ty: Ty, inside: string, addr: string): string[] => [
  "(local.set $x (f64.const 0))",
  `(if ${inside} (then (local.set $x (f64.load ${addr})) ${trackScalar("(local.get $x)")}))`,
  storeElem(ty, "(local.get $d)", "(local.get $x)"),
  `(local.set $d (i32.add (local.get $d) (i32.const ${ty === "f64" ? 8 : 4})))`,
];

/** The lanes 0 of a and b (f64 pairs / f32 pairs), and the lanes 1, as i8x16 shuffle masks. */
const LO64 = "0 1 2 3 4 5 6 7 16 17 18 19 20 21 22 23";
const HI64 = "8 9 10 11 12 13 14 15 24 25 26 27 28 29 30 31";
/** f32 lanes [a0, b0, a1, b1]. */
const ZIP32 = "0 1 2 3 16 17 18 19 4 5 6 7 20 21 22 23";

function packRowsFunction(ty: Ty, R: number): string {
  const es = ty === "f64" ? 8 : 4;
  const name = `pack_rows_${ty}_r${R}`;
  const L: string[] = [];
  L.push(
    `(func $${name} (export "${name}") (param $src i32) (param $ld i32) (param $rows i32) (param $kc i32) (param $dst i32) (result f64)`,
  );
  L.push(
    `(local $ip i32) (local $p i32) (local $q i32) (local $d i32) (local $ldb i32) (local $ii i32) (local $t0 v128) (local $t1 v128) ${MAX_LOCALS}`,
  );
  for (let r = 0; r < R; r++) L.push(`(local $o${r} i32) (local $v${r} v128)${ty === "f32" ? ` (local $e${r} v128)` : ""}`);
  L.push(MAX_INIT);
  L.push("(local.set $ldb (i32.shl (local.get $ld) (i32.const 3)))");
  for (let r = 0; r < R; r++) L.push(`(local.set $o${r} (i32.mul (local.get $ldb) (i32.const ${r})))`);
  L.push("(local.set $ip (i32.const 0))");
  L.push("(block $ipdone (loop $iploop (br_if $ipdone (i32.ge_s (local.get $ip) (local.get $rows)))");
  L.push("(local.set $q (i32.add (local.get $src) (i32.mul (local.get $ip) (local.get $ldb))))");
  L.push(`(local.set $d (i32.add (local.get $dst) (i32.mul (i32.mul (local.get $ip) (local.get $kc)) (i32.const ${es}))))`);
  L.push(`(if (i32.ge_s (i32.sub (local.get $rows) (local.get $ip)) (i32.const ${R})) (then`);
  // A whole panel: two columns (p, p + 1) of the R rows per step, one f64x2 load per row.
  L.push("(local.set $p (i32.const 0))");
  L.push("(block $pdone (loop $ploop (br_if $pdone (i32.gt_s (i32.add (local.get $p) (i32.const 2)) (local.get $kc)))");
  for (let r = 0; r < R; r++) L.push(`(local.set $v${r} (v128.load (i32.add (local.get $q) (local.get $o${r}))))`);
  L.push(trackVecs(Array.from({ length: R }, (_, r) => `(local.get $v${r})`)));
  if (ty === "f64") {
    for (let r = 0; r < R; r += 2) {
      L.push(`(v128.store offset=${r * 8} (local.get $d) (i8x16.shuffle ${LO64} (local.get $v${r}) (local.get $v${r + 1})))`);
      L.push(`(v128.store offset=${(R + r) * 8} (local.get $d) (i8x16.shuffle ${HI64} (local.get $v${r}) (local.get $v${r + 1})))`);
    }
  } else {
    for (let r = 0; r < R; r++) L.push(`(local.set $e${r} (f32x4.demote_f64x2_zero (local.get $v${r})))`);
    for (let r = 0; r < R; r += 4) {
      L.push(`(local.set $t0 (i8x16.shuffle ${ZIP32} (local.get $e${r}) (local.get $e${r + 1})))`);
      L.push(`(local.set $t1 (i8x16.shuffle ${ZIP32} (local.get $e${r + 2}) (local.get $e${r + 3})))`);
      L.push(`(v128.store offset=${r * 4} (local.get $d) (i8x16.shuffle ${LO64} (local.get $t0) (local.get $t1)))`);
      L.push(`(v128.store offset=${(R + r) * 4} (local.get $d) (i8x16.shuffle ${HI64} (local.get $t0) (local.get $t1)))`);
    }
  }
  L.push(`(local.set $d (i32.add (local.get $d) (i32.const ${2 * R * es})))`);
  L.push("(local.set $q (i32.add (local.get $q) (i32.const 16)))");
  L.push("(local.set $p (i32.add (local.get $p) (i32.const 2))) (br $ploop)))");
  // An odd kc: the last column, element by element.
  L.push("(if (i32.lt_s (local.get $p) (local.get $kc)) (then");
  for (let r = 0; r < R; r++) {
    L.push(`(local.set $x (f64.load (i32.add (local.get $q) (local.get $o${r}))))`);
    L.push(trackScalar("(local.get $x)"));
    L.push(storeElem(ty, `(i32.add (local.get $d) (i32.const ${r * es}))`, "(local.get $x)"));
  }
  L.push("))");
  L.push(")(else");
  // The last, partial panel: rows past `rows` are zero.
  L.push("(local.set $p (i32.const 0))");
  L.push("(block $sdone (loop $sloop (br_if $sdone (i32.ge_s (local.get $p) (local.get $kc)))");
  L.push("(local.set $ii (i32.const 0))");
  L.push(`(block $idone (loop $iloop (br_if $idone (i32.ge_s (local.get $ii) (i32.const ${R})))`);
  L.push(
    ...paddedElement(
      ty,
      "(i32.lt_s (local.get $ii) (i32.sub (local.get $rows) (local.get $ip)))",
      "(i32.add (local.get $q) (i32.add (i32.mul (local.get $ii) (local.get $ldb)) (i32.shl (local.get $p) (i32.const 3))))",
    ),
  );
  L.push("(local.set $ii (i32.add (local.get $ii) (i32.const 1))) (br $iloop)))");
  L.push("(local.set $p (i32.add (local.get $p) (i32.const 1))) (br $sloop)))");
  L.push("))");
  L.push(`(local.set $ip (i32.add (local.get $ip) (i32.const ${R}))) (br $iploop)))`);
  L.push(MAX_RESULT);
  L.push(")");
  return L.join("\n");
}

/** Rows of a full-panel block (`packB`'s PACK_B_ROWS): 8 rows × all panels stay in L2. */
const COL_BLOCK_ROWS = 8;

function packColsFunction(ty: Ty, C: number): string {
  const es = ty === "f64" ? 8 : 4;
  const V = C / 2; // f64x2 loads per panel row
  const name = `pack_cols_${ty}_c${C}`;
  const L: string[] = [];
  L.push(
    `(func $${name} (export "${name}") (param $src i32) (param $ld i32) (param $kc i32) (param $nc i32) (param $dst i32) (result f64)`,
  );
  L.push(
    `(local $pb i32) (local $pe i32) (local $jp i32) (local $jfull i32) (local $p i32) (local $s i32) (local $d i32) (local $ldb i32) (local $jj i32) (local $cols i32) ${MAX_LOCALS}`,
  );
  for (let v = 0; v < V; v++) L.push(`(local $v${v} v128)${ty === "f32" ? ` (local $e${v} v128)` : ""}`);
  L.push(MAX_INIT);
  L.push("(local.set $ldb (i32.shl (local.get $ld) (i32.const 3)))");
  L.push(`(local.set $jfull (i32.and (local.get $nc) (i32.const ${-C})))`);
  L.push("(local.set $pb (i32.const 0))");
  L.push("(block $pbdone (loop $pbloop (br_if $pbdone (i32.ge_s (local.get $pb) (local.get $kc)))");
  L.push(
    `(local.set $pe (select (local.get $kc) (i32.add (local.get $pb) (i32.const ${COL_BLOCK_ROWS})) (i32.lt_s (local.get $kc) (i32.add (local.get $pb) (i32.const ${COL_BLOCK_ROWS})))))`,
  );
  L.push("(local.set $jp (i32.const 0))");
  L.push("(block $jdone (loop $jloop (br_if $jdone (i32.ge_s (local.get $jp) (local.get $jfull)))");
  L.push(
    "(local.set $s (i32.add (local.get $src) (i32.shl (i32.add (i32.mul (local.get $pb) (local.get $ld)) (local.get $jp)) (i32.const 3))))",
  );
  L.push(
    `(local.set $d (i32.add (local.get $dst) (i32.mul (i32.add (i32.mul (local.get $jp) (local.get $kc)) (i32.mul (local.get $pb) (i32.const ${C}))) (i32.const ${es}))))`,
  );
  L.push("(local.set $p (local.get $pb))");
  L.push("(block $pdone (loop $ploop (br_if $pdone (i32.ge_s (local.get $p) (local.get $pe)))");
  for (let v = 0; v < V; v++) L.push(`(local.set $v${v} (v128.load offset=${v * 16} (local.get $s)))`);
  L.push(trackVecs(Array.from({ length: V }, (_, v) => `(local.get $v${v})`)));
  if (ty === "f64") {
    for (let v = 0; v < V; v++) L.push(`(v128.store offset=${v * 16} (local.get $d) (local.get $v${v}))`);
  } else {
    for (let v = 0; v < V; v++) L.push(`(local.set $e${v} (f32x4.demote_f64x2_zero (local.get $v${v})))`);
    for (let v = 0; v < V; v += 2) {
      L.push(`(v128.store offset=${v * 8} (local.get $d) (i8x16.shuffle ${LO64} (local.get $e${v}) (local.get $e${v + 1})))`);
    }
  }
  L.push("(local.set $s (i32.add (local.get $s) (local.get $ldb)))");
  L.push(`(local.set $d (i32.add (local.get $d) (i32.const ${C * es})))`);
  L.push("(local.set $p (i32.add (local.get $p) (i32.const 1))) (br $ploop)))");
  L.push(`(local.set $jp (i32.add (local.get $jp) (i32.const ${C}))) (br $jloop)))`);
  L.push("(local.set $pb (local.get $pe)) (br $pbloop)))");
  // The last, partial panel: columns past nc are zero.
  L.push("(if (i32.lt_s (local.get $jfull) (local.get $nc)) (then");
  L.push("(local.set $cols (i32.sub (local.get $nc) (local.get $jfull)))");
  L.push(`(local.set $d (i32.add (local.get $dst) (i32.mul (i32.mul (local.get $jfull) (local.get $kc)) (i32.const ${es}))))`);
  L.push("(local.set $p (i32.const 0))");
  L.push("(block $sdone (loop $sloop (br_if $sdone (i32.ge_s (local.get $p) (local.get $kc)))");
  L.push(
    "(local.set $s (i32.add (local.get $src) (i32.shl (i32.add (i32.mul (local.get $p) (local.get $ld)) (local.get $jfull)) (i32.const 3))))",
  );
  L.push("(local.set $jj (i32.const 0))");
  L.push(`(block $jjdone (loop $jjloop (br_if $jjdone (i32.ge_s (local.get $jj) (i32.const ${C})))`);
  L.push(
    ...paddedElement(
      ty,
      "(i32.lt_s (local.get $jj) (local.get $cols))",
      "(i32.add (local.get $s) (i32.shl (local.get $jj) (i32.const 3)))",
    ),
  );
  L.push("(local.set $jj (i32.add (local.get $jj) (i32.const 1))) (br $jjloop)))");
  L.push("(local.set $p (i32.add (local.get $p) (i32.const 1))) (br $sloop)))");
  L.push("))");
  L.push(MAX_RESULT);
  L.push(")");
  return L.join("\n");
}

/**
 * The packers `gemmWasm` stages float64 operands through: rows → MR-row panels (op(A) from A,
 * both precisions; op(B) from Bᵀ: f64 NR = 4, f32 NR = 8) and columns → panels (op(B) from B:
 * f64 4, f32 8; op(A) from Aᵀ: 4).
 */
export function packKernelFunctions(): string[] {
  return [
    packRowsFunction("f64", 4),
    packRowsFunction("f32", 4),
    packRowsFunction("f32", 8),
    packColsFunction("f64", 4),
    packColsFunction("f32", 4),
    packColsFunction("f32", 8),
  ];
}
