/**
 * One-row products on packed panels (issue 14: a decoded token's projections). A decoding step
 * multiplies ONE row x (1 × k) by each weight W of the model; the scalar few-rows kernels of
 * linalg/matmul.ts stream W once in JavaScript, and that was 25–48 % of a decoding step. Here the
 * same products run in SIMD128 on W's panels already resident in the model's kernel arena
 * (pretrained/residentGemv.ts) — with the SAME sums in the SAME order as the JavaScript kernels,
 * so a decoded token's logits keep their bits:
 *
 * - `gemv_f64_g4` / `gemv_f32_g4`: c_j = Σ over groups of four p of (((x_p·W[p,j] + x_{p+1}·W[p+1,j])
 *   + x_{p+2}·W[p+2,j]) + x_{p+3}·W[p+3,j]), each group added to c_j from 0 in order of p, then the
 *   k mod 4 last terms one by one — `smallRowsMatmul` (C = A B, m = 1).
 * - `gemv_f64_seq` / `gemv_f32_seq`: c_j = ((0 + x_0·W[0,j]) + x_1·W[1,j]) + …, one term at a
 *   time — `smallRowsMatmulTransB` (C = A Bᵀ, m = 1; W here is the packed Bᵀ).
 *
 * Operands (byte addresses): x, k float64 (under float32 the caller stores x rounded to float32, as
 * `project` rounds it); W in NR-column panels of depth k (`packB`'s layout: panel q holds columns
 * q·NR … q·NR + NR − 1 row after row; NR = 4 float64 or 8 float32 — 32 bytes a row either way);
 * c, panels · NR float64 (the padding columns of the last panel included). The float32 panels are
 * widened to float64 (exact) and every product and sum is float64, as the scalar kernels compute
 * on float32-rounded operands; the caller rounds c to float32 afterwards. No FMA: each lane is the
 * scalar IEEE expression.
 */

/** Bytes of one panel row: 4 float64 or 8 float32. */
const ROW_BYTES = 32;

/** The expression loading lanes 2v, 2v + 1 of panel row r (relative to $bp) as f64x2. */
function panelPair(elem: "f64" | "f32", r: number, v: number, bp = "$bp"): string {
  return elem === "f64"
    ? `(v128.load offset=${r * ROW_BYTES + v * 16} (local.get ${bp}))`
    : `(f64x2.promote_low_f32x4 (v128.load64_zero offset=${r * ROW_BYTES + v * 8} (local.get ${bp})))`;
}

/**
 * `name(x, b, c, k, panels)`. `order` "g4": smallRowsMatmul's grouping; "seq": one term at a time.
 * "seq" runs two panels side by side (its sums are one dependent chain per lane, so two panels'
 * chains keep the adder busy); "g4" adds once per four terms and runs one panel at a time.
 */
function gemvFunction(name: string, elem: "f64" | "f32", order: "g4" | "seq"): string {
  const lanes = elem === "f64" ? 2 : 4; // f64x2 accumulators per panel
  const perStep = order === "seq" ? 2 : 1; // panels per pass
  const panelBytes = (k: string) => `(i32.shl ${k} (i32.const 5))`; // k rows × 32 bytes
  const L: string[] = [];
  L.push(`(func $${name} (export "${name}") (param $x i32) (param $b i32) (param $c i32) (param $k i32) (param $panels i32)`);
  const accs: string[] = [];
  for (let s = 0; s < perStep; s++) for (let v = 0; v < lanes; v++) accs.push(`$a${s}_${v}`);
  L.push(
    `(local $q i32) (local $p i32) (local $k4 i32) (local $xp i32) (local $bp i32) (local $bp1 i32) (local $stride i32) (local $x0 v128) (local $x1 v128) (local $x2 v128) (local $x3 v128) ${accs
      .map((a) => `(local ${a} v128)`)
      .join(" ")}`,
  );
  L.push(`(local.set $stride ${panelBytes("(local.get $k)")})`);
  L.push("(local.set $k4 (i32.and (local.get $k) (i32.const -4)))");
  L.push("(local.set $q (i32.const 0))");
  const zero = (s: number) => Array.from({ length: lanes }, (_, v) => `(local.set $a${s}_${v} (v128.const i64x2 0 0))`).join(" ");
  // Panel q's float64 outputs start at c + q·NR·8 = c + q·32 (f64, NR = 4) or c + q·64 (f32, NR = 8).
  const cShift = elem === "f64" ? 5 : 6;
  const storeAt = (s: number) =>
    Array.from(
      { length: lanes },
      (_, v) =>
        `(v128.store offset=${s * lanes * 16 + v * 16} (i32.add (local.get $c) (i32.shl (local.get $q) (i32.const ${cShift}))) (local.get $a${s}_${v}))`,
    ).join(" ");
  const bpOf = (s: number) => (s === 0 ? "$bp" : "$bp1");
  const body = (steps: number) => {
    const B: string[] = [];
    B.push("(local.set $xp (local.get $x))");
    B.push("(local.set $p (i32.const 0))");
    if (order === "g4") {
      B.push("(block $gdone (loop $gloop (br_if $gdone (i32.ge_s (local.get $p) (local.get $k4)))");
      for (let r = 0; r < 4; r++) B.push(`(local.set $x${r} (v128.load64_splat offset=${r * 8} (local.get $xp)))`);
      for (let s = 0; s < steps; s++) {
        for (let v = 0; v < lanes; v++) {
          const term = (r: number) => `(f64x2.mul (local.get $x${r}) ${panelPair(elem, r, v, bpOf(s))})`;
          const group = `(f64x2.add (f64x2.add (f64x2.add ${term(0)} ${term(1)}) ${term(2)}) ${term(3)})`;
          B.push(`(local.set $a${s}_${v} (f64x2.add (local.get $a${s}_${v}) ${group}))`);
        }
      }
      for (let s = 0; s < steps; s++) B.push(`(local.set ${bpOf(s)} (i32.add (local.get ${bpOf(s)}) (i32.const ${4 * ROW_BYTES})))`);
      B.push("(local.set $xp (i32.add (local.get $xp) (i32.const 32)))");
      B.push("(local.set $p (i32.add (local.get $p) (i32.const 4))) (br $gloop)))");
    }
    // One term at a time: all of "seq", the k mod 4 last terms of "g4".
    B.push("(block $tdone (loop $tloop (br_if $tdone (i32.ge_s (local.get $p) (local.get $k)))");
    B.push("(local.set $x0 (v128.load64_splat (local.get $xp)))");
    for (let s = 0; s < steps; s++) {
      for (let v = 0; v < lanes; v++) {
        B.push(`(local.set $a${s}_${v} (f64x2.add (local.get $a${s}_${v}) (f64x2.mul (local.get $x0) ${panelPair(elem, 0, v, bpOf(s))})))`);
      }
    }
    for (let s = 0; s < steps; s++) B.push(`(local.set ${bpOf(s)} (i32.add (local.get ${bpOf(s)}) (i32.const ${ROW_BYTES})))`);
    B.push("(local.set $xp (i32.add (local.get $xp) (i32.const 8)))");
    B.push("(local.set $p (i32.add (local.get $p) (i32.const 1))) (br $tloop)))");
    return B.join("\n");
  };
  const pass = (steps: number, label: string) => {
    L.push(
      `(block $${label}done (loop $${label}loop (br_if $${label}done (i32.gt_s (i32.add (local.get $q) (i32.const ${steps})) (local.get $panels)))`,
    );
    L.push(`(local.set $bp (i32.add (local.get $b) (i32.mul (local.get $q) (local.get $stride))))`);
    if (steps > 1) L.push("(local.set $bp1 (i32.add (local.get $bp) (local.get $stride)))");
    for (let s = 0; s < steps; s++) L.push(zero(s));
    L.push(body(steps));
    // Panel q + s: its outputs at c + (q + s)·NR·8 — written relative to q with offset s·NR·8.
    for (let s = 0; s < steps; s++) L.push(storeAt(s));
    L.push(`(local.set $q (i32.add (local.get $q) (i32.const ${steps}))) (br $${label}loop)))`);
  };
  pass(perStep, "pair");
  if (perStep > 1) pass(1, "one");
  L.push(")");
  return L.join("\n");
}

/** The four one-row kernels, in module order (appended at the end of `kernelWat()`). */
export function gemvFunctions(): string[] {
  return [
    gemvFunction("gemv_f64_g4", "f64", "g4"),
    gemvFunction("gemv_f64_seq", "f64", "seq"),
    gemvFunction("gemv_f32_g4", "f32", "g4"),
    gemvFunction("gemv_f32_seq", "f32", "seq"),
  ];
}
