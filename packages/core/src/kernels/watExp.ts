/**
 * WAT generators of the float64 exp (issue 14): Tang's table-driven e^x in f64x2 lanes — the table
 * and its constants, the inline form with its clamp (`expInline`), the fast path for results in the
 * normal range (`expFast`, `expFastPath`) and the `"ys"` argument form of the shifted softmax. Shared
 * by the kernels of wat.ts (exp_f64, the softmax passes) and watModel.ts (SwiGLU), each of which
 * inlines the same code, so every caller's e^x has the same bits.
 */

/** 1.5·2⁵²: adding it rounds a float64 |t| < 2⁵¹ to an integer held in the low mantissa bits. */
export const ROUND_MAGIC = "0x1.8p52";
/** Bits of ROUND_MAGIC as a signed i64 (0x4338000000000000; its low 32 bits are zero). */
const ROUND_MAGIC_BITS = "4843621399236968448";

/**
 * log₂ of the entries of the exp table: x = (2048·e + i)·ln2/2048 + r, |r| ≤ ln2/4096. (128
 * entries needed a degree-5 polynomial, 256 degree 4 with (hi, lo) pairs; 2048 entries of hi only —
 * 16 KiB, half of L1 — make degree 3 enough and y = hi·(1 + p) one add shorter: two fewer adds
 * and one multiply fewer per vector on the add-bound exp pass, one lane load instead of a shuffle.)
 */
const EXP_TABLE_BITS = 11;
/** Entries of the exp table (2^(i/2048), i = 0…2047). */
const EXP_TABLE_SIZE = 1 << EXP_TABLE_BITS;
/**
 * Byte address of the exp's table-index scratch (4 streams × 16 B): the upper half of the 256
 * scratch bytes, beside the edge tiles' 128 (no kernel runs an edge tile and an exp at once).
 */
const EXP_INDEX_SCRATCH = 128;
/**
 * Byte address of `softmax_shift_rows_f64`'s per-row fast-path bound (16 B after the index scratch):
 * loaded once per iteration (1 instruction) rather than kept in a local across the loop, which V8
 * re-derived from a spilled scalar in every iteration (4 instructions per 8 scores).
 */
export const EXP_FL_SCRATCH = 192;
/** Byte address of the exp table in the kernel memory (after the edge-tile scratch). */
export const EXP_TABLE_ADDR = 256;
/**
 * Bytes at the start of the kernel memory the kernels own: the edge-tile scratch (0…255) and the
 * exp table (256…16639, 8 B per entry), rounded up. Drivers place their operands after this.
 */
export const KERNEL_RESERVED_BYTES = 20480;

/**
 * The table of the f64x2 exp (Tang 1989, "Table-driven implementation of the exponential function"):
 * entry i is the pair (hi, lo) of float64s with hi = fl(2^(i/2048)) (correctly rounded) and
 * lo = fl(2^(i/2048) − hi). The kernel memory holds only hi (its 0.5 ulp is in the error bound of
 * `expInline`); lo is returned so the tests can check hi against the exact value. Computed exactly
 * here in 2⁻¹⁶⁰ fixed point with BigInt (ln 2 = Σ 1/(k·2ᵏ), e^y by its Taylor series), so no libm
 * rounding enters the table.
 */
export function expTable(): Float64Array {
  const P = 160n;
  const one = 1n << P;
  let ln2 = 0n;
  for (let k = 1n; k < 200n; k++) ln2 += one / (k << k);
  const out = new Float64Array(2 * EXP_TABLE_SIZE);
  for (let i = 0; i < EXP_TABLE_SIZE; i++) {
    const y = (ln2 * BigInt(i)) >> BigInt(EXP_TABLE_BITS);
    let term = one;
    let sum = one;
    for (let n = 1n; term !== 0n; n++) {
      term = (term * y) / (one * n);
      sum += term;
    }
    // sum ∈ [2¹⁶⁰, 2¹⁶¹): round to 53 significant bits (ties away: no tie occurs for i > 0).
    const sh = P - 52n;
    const mant = (sum + (1n << (sh - 1n))) >> sh;
    out[2 * i] = Number(mant) * 2 ** -52;
    out[2 * i + 1] = Number(sum - (mant << sh)) * 2 ** -Number(P);
  }
  return out;
}

/**
 * The table in the kernel memory as a WAT data-segment string ("\xx" escapes of its little-endian
 * bytes): entry i holds bits(hi_i) − i·2⁴¹ as an i64, so that adding bits(t) << 41 — which is
 * e·2⁵² + i·2⁴¹ (mod 2⁶⁴), t carrying k = 2048e + i in its low bits (see `expPolyTable`) — gives the
 * bits of 2^e·hi_i with one integer add and no mask to clear i (issue 14, sixth pass).
 */
export function expTableData(): string {
  const pairs = expTable();
  const bits = new BigInt64Array(new Float64Array(Array.from({ length: EXP_TABLE_SIZE }, (_, i) => pairs[2 * i])).buffer);
  for (let i = 0; i < EXP_TABLE_SIZE; i++) bits[i] = BigInt.asIntN(64, bits[i] - (BigInt(i) << BigInt(52 - EXP_TABLE_BITS)));
  const bytes = new Uint8Array(bits.buffer);
  let s = "";
  for (const b of bytes) s += `\\${b.toString(16).padStart(2, "0")}`;
  return `(data (i32.const ${EXP_TABLE_ADDR}) "${s}")`;
}

/** The constants of the SIMD exp, as v128 literals. */
function expConstants(): Record<string, string> {
  const f = (v: string) => `(v128.const f64x2 ${v} ${v})`;
  const i64 = (v: string) => `(v128.const i64x2 ${v} ${v})`;
  return {
    lo: f("-746"),
    hi: f("710"),
    // 2048/ln 2, and ln2/2048 as a Cody–Waite pair: l1 = ln2/2048 truncated to 30 significant
    // bits, so k·l1 is exact for |k| < 2²³ (here |k| ≤ 2,204,800), l2 = fl(ln2/2048 − l1), leaving
    // 2.0e-29 (mpmath), i.e. |k|·2.0e-29 < 5e-23 in r.
    inv: f("0x1.71547652b82fep11"),
    l1: f("0x1.62e42fe8p-12"),
    l2: f("0x1.e8e7bcd5e4f1ep-42"),
    magic: f(ROUND_MAGIC),
    magicbits: i64(ROUND_MAGIC_BITS),
    // 2⁻¹²: k/4096 ≈ e/2 for the two-factor scaling.
    quarter: f("0x1p-12"),
    // bits of 1.0 (1023 << 52).
    onebits: i64("4607182418800017408"),
    // e^r − 1 ≈ r + r²·(c2 + r·c3) on |r| ≤ ln2/4096: near-minimax (see `expPolyTable`), close
    // to the Taylor values 1/2, 1/6.
    c2: f("0x1.000000051ff50p-1"),
    c3: f("0x1.555555596ee62p-3"),
    // The `"ys"` form (`ExpArg`): fl(ln2/2048), the linear coefficient of the polynomial in u = s − round(s). Its
    // clamp, [−746, 710] in units of ln2/2048 (−2204161.03, 2097794.01, rounded outwards: −2204200,
    // 2097800), is added to the row shift in `softmax_shift_rows_f64`.
    c: f("0x1.62e42fefa39efp-12"),
    // fl(fl(c2·c)·c) and fl(fl(fl(c3·c)·c)·c) with c = fl(ln2/2048): `expPolyTable`'s Horner form
    // in u = r/c (test/fast/row-shift-bound.test.ts recomputes them from c2, c3 and c).
    c2u: f("0x1.ebfbe00205ae9p-25"),
    c3u: f("0x1.c6b08d75c02bep-38"),
  };
}

/** Streams the inline exp can interleave (locals `$ex_{t,f,r,p,i,a,b}{0…}` are declared for this many). */
const EXP_STREAMS = 4;
/** Declarations of the scratch locals of `expInline`. */
export const EXP_LOCALS = Array.from({ length: EXP_STREAMS }, (_, u) =>
  ["t", "f", "r", "p", "i", "a"].map((n) => `(local $ex_${n}${u} v128)`).join(" "),
).join(" ");

/**
 * The argument forms of `expInline` / `expFast`: `"x"` e^x; `"ys"` 2^((s − m)/2048), s = x·2048/ln 2
 * in units of ln2/2048 (so no Cody–Waite pair is needed), for an integer row shift m held in the function's
 * locals `$cs` = 1.5·2⁵² − m, `$fl` = m − 1976000 (the fast path's lower end), `$cl` = m − 2204200
 * and `$ch` = m + 2097800 (the clamp), so that the shift costs no operation: t = s + $cs rounds s
 * to an integer and carries k = round(s) − m in its low bits, u = s − round(s) = s − (t − $cs) is
 * exact and r = u·ln2/2048 (the polynomial runs in u) — the r and k of y = s − m without forming y
 * (which could round when |s − m| > |s|), on the fast and on the clamped path alike.
 */
type ExpArg = "x" | "ys";

/**
 * The scratch-local helpers of an inline kernel over `n` interleaved streams: `v(name, u)` reads the
 * local `$<prefix>_<name><u>`, `set(name, u, e)` writes it, and `step(f)` pushes f(u) for every
 * stream onto `L` — one operation for all streams, then the next (the order the exp generators emit).
 */
export function streamLocals(L: string[], n: number, prefix: "ex" | "fx") {
  const v = (name: string, u: number) => `(local.get $${prefix}_${name}${u})`;
  const set = (name: string, u: number, e: string) => `(local.set $${prefix}_${name}${u} ${e})`;
  const step = (f: (u: number) => string) => {
    for (let u = 0; u < n; u++) L.push(f(u));
  };
  return { v, set, step };
}

/**
 * Inline f64x2 exp of the v128 locals `xs` into the locals `outs` (up to `EXP_STREAMS` vectors,
 * interleaved stage by stage: each exp is a chain of ≈ 20 dependent operations, so independent
 * chains side by side are what keeps the SIMD units busy). Tang's table-driven method:
 *  - x is clamped to [−746, 710] (−∞ and anything below −745.2 give exactly 0, anything above
 *    709.79 gives +∞; a NaN x stays NaN);
 *  - k = round(x·2048/ln 2) by the 1.5·2⁵² trick, x = k·ln2/2048 + r with r by Cody–Waite
 *    (|r| ≤ ln2/4096 + 2⁻⁶⁰), k = 2048·e + i;
 *  - y = 2^(i/2048)·(1 + p) by `expPolyTable` (degree-3 near-minimax p, 2048-entry table of
 *    hi = fl(2^(i/2048)), y = hi + hi·p): ≤ 0.5 ulp (the final rounding) + 0.5 ulp (hi's rounding;
 *    y ∈ [1, 2) except for i = 0, where hi = 1 is exact) + 0.16 ulp (the polynomial, at most
 *    2·1.71e-17 against ulp(y) = 2⁻⁵² for y ∈ [1, 2), 1.71e-17 against 2⁻⁵³ below 1) + < 0.01 ulp
 *    (hi·p's rounding, the reduction) ≤ 1.17 ulp from the exact e^x in the normal range (the
 *    256-entry (hi, lo), degree-4 form was ≤ 0.6); measured against Math.exp (itself < 1 ulp) in
 *    test/fast/simd-exp.test.ts;
 *  - 2^e built from exponent bits in two factors 2^(e−e₁)·2^e₁, e₁ = round(k/4096) ≈ e/2, so a
 *    subnormal result is rounded once, by the last multiply, and 2^1024 is never formed.
 * ≈ 33 vector operations per two results. The hot loops call `expFast`, which skips the clamp and
 * the two-factor scaling when every lane's result is normal, with identical results.
 */
export function expInline(xs: string[], outs: string[], arg: ExpArg = "x"): string[] {
  const C = expConstants();
  const L: string[] = [];
  const { v, set, step } = streamLocals(L, xs.length, "ex");
  // pmax/pmin (one maxpd/minpd each; V8 needs several instructions for the IEEE min/max) in the
  // operand order that lets a NaN x through: pmax(x, lo) = x < lo ? lo : x.
  if (arg === "ys") {
    step((u) => set("r", u, `(f64x2.pmin (f64x2.pmax (local.get ${xs[u]}) (local.get $cl)) (local.get $ch))`));
    step((u) => set("t", u, `(f64x2.add ${v("r", u)} (local.get $cs))`));
    step((u) => set("f", u, `(f64x2.sub ${v("t", u)} (local.get $cs))`));
    step((u) => set("r", u, `(f64x2.sub ${v("r", u)} ${v("f", u)})`));
    step((u) => set("f", u, `(f64x2.sub ${v("t", u)} ${C.magic})`));
  } else {
    step((u) => set("r", u, `(f64x2.pmin (f64x2.pmax (local.get ${xs[u]}) ${C.lo}) ${C.hi})`));
    step((u) => set("t", u, `(f64x2.add (f64x2.mul ${v("r", u)} ${C.inv}) ${C.magic})`));
    step((u) => set("f", u, `(f64x2.sub ${v("t", u)} ${C.magic})`));
    step((u) => set("r", u, `(f64x2.sub (f64x2.sub ${v("r", u)} (f64x2.mul ${v("f", u)} ${C.l1})) (f64x2.mul ${v("f", u)} ${C.l2}))`));
  }
  // e₁·2⁵² = (bits(k/4096 + magic) − bits(magic)) << 52 into `$ex_f` (k as a float is no longer
  // needed); the table step scales hi by 2^(e − e₁): bits(t) << 41 is e·2⁵² + i·2⁴¹ (mod 2⁶⁴), the
  // table entry bits(hi) − i·2⁴¹, so entry + (bits(t) << 41) − e₁·2⁵² = bits(2^(e−e₁)·hi), normal
  // (|e − e₁| ≤ 540). (i64x2.shr_s has no SSE instruction and V8 emulates it slowly, so only left
  // shifts are used.) y = 2^(e−e₁)·hi·(1 + p) is then 2^(e−e₁) times the unscaled y exactly: the
  // product 2^(e−e₁)·hi·p is normal or, where it underflows (|p| < 2⁻⁴⁸⁰), far below half an ulp of
  // the sum in both forms — the same bits as scaling after the sum.
  step((u) =>
    set("f", u, `(i64x2.shl (i64x2.sub (f64x2.add (f64x2.mul ${v("f", u)} ${C.quarter}) ${C.magic}) ${C.magicbits}) (i32.const 52))`),
  );
  L.push(
    ...expPolyTable(
      xs.length,
      C,
      arg,
      (u) => `(i64x2.sub (i64x2.shl ${v("t", u)} (i32.const ${52 - EXP_TABLE_BITS})) ${v("f", u)})`,
      (u) => `$ex_p${u}`,
    ),
  );
  step((u) => `(local.set ${outs[u]} (f64x2.mul ${v("p", u)} (i64x2.add ${v("f", u)} ${C.onebits})))`);
  return L;
}

/**
 * The shared middle of `expInline` and `expFast`: from the reduced argument r (locals `$ex_r`, and
 * `$ex_t` holding k in its low bits) to y = 2^(i/2048)·(1 + p) in `$ex_p`:
 *  - e^r − 1 ≈ p = r + r²·(c2 + r·c3), a degree-3 near-minimax fit (Chebyshev fit of
 *    (e^r − 1 − r)/r² on |r| ≤ ln2/4096 + 2⁻⁵⁰, mpmath `chebyfit`, checked on 4001 points at 200
 *    bits): absolute error ≤ 1.71e-17 = 0.077·2⁻⁵² (degree-3 Taylor would give 3.4e-17);
 *  - hi = fl(2^(i/2048)) from the 2048-entry table, the two lanes loaded straight into one vector
 *    (`v128.load64_zero`, `v128.load64_lane`; SIMD128 has no gather), scaled by a power of two
 *    h = 2^e'·hi with one integer add of `scale(u)` to its bits (the table holds bits(hi) − i·2⁴¹,
 *    `expTableData`; `scale` is bits(t) << 41 plus any e' − e, see the callers), y = h + h·p into
 *    `dst(u)`: one rounding of the product (≤ 2⁻⁵³·|hi·p| < 0.001 ulp) and one of the sum.
 * Scaling h before the sum (not y after it) leaves t dead right after its index is stored and
 * saves the mask that cleared i from t's bits (issue 14, sixth pass).
 */
function expPolyTable(
  streams: number,
  C: Record<string, string>,
  arg: ExpArg,
  scale: (u: number) => string,
  dst: (u: number) => string,
): string[] {
  const L: string[] = [];
  const { v, set, step: each } = streamLocals(L, streams, "ex");
  // Byte offset of lane `lane`'s entry, (low 11 bits of t)·8, with t read back through the scratch
  // at EXP_INDEX_SCRATCH: one vector store and two scalar loads (integer load ports) instead of two
  // vpextrq, which share the one FP load/store/transfer pipe that bounds this loop (llvm-mca
  // -mcpu=znver3 of V8's code: 38.7 → 35.1 cycles per 8 scores). Same bits.
  each((u) => `(v128.store offset=${EXP_INDEX_SCRATCH + 16 * u} (i32.const 0) ${v("t", u)})`);
  each((u) => set("t", u, scale(u)));
  const index = (u: number, lane: number) =>
    `(i32.shl (i32.and (i32.load offset=${EXP_INDEX_SCRATCH + 16 * u + 8 * lane} (i32.const 0)) (i32.const ${EXP_TABLE_SIZE - 1})) (i32.const 3))`;
  if (arg === "ys") {
    // `$ex_r` holds u = s − round(s) (r = u·ln2/2048 not formed): the same polynomial in u by Horner,
    // p = u·(c + u·(c2·c² + u·c3·c³)) — one multiply fewer than forming r first. The folded
    // coefficients' roundings (2⁻⁵³ relative on terms ≤ 3·10⁻⁸) and Horner's (≤ 2⁻⁵³·|p| each)
    // stay < 0.001 ulp of the result, as r's own two roundings did.
    each((u) => set("a", u, `(f64x2.add (f64x2.mul ${v("r", u)} ${C.c3u}) ${C.c2u})`));
    each((u) => set("a", u, `(f64x2.add (f64x2.mul ${v("a", u)} ${v("r", u)}) ${C.c})`));
    each((u) => set("i", u, `(f64x2.mul ${v("a", u)} ${v("r", u)})`));
  } else {
    each((u) => set("p", u, `(f64x2.mul ${v("r", u)} ${v("r", u)})`));
    each((u) => set("a", u, `(f64x2.add ${C.c2} (f64x2.mul ${v("r", u)} ${C.c3}))`));
    each((u) => set("i", u, `(f64x2.add ${v("r", u)} (f64x2.mul ${v("p", u)} ${v("a", u)}))`));
  }
  each((u) => set("a", u, `(v128.load64_zero offset=${EXP_TABLE_ADDR} ${index(u, 0)})`));
  each((u) => set("a", u, `(v128.load64_lane offset=${EXP_TABLE_ADDR} 1 ${index(u, 1)} ${v("a", u)})`));
  each((u) => set("a", u, `(i64x2.add ${v("a", u)} ${v("t", u)})`));
  each((u) => `(local.set ${dst(u)} (f64x2.add ${v("a", u)} (f64x2.mul ${v("a", u)} ${v("i", u)})))`);
  return L;
}

/**
 * Bounds of the fast path of `expFast`: for x in [−669, 709] the result e^x = 2^e·y (y ∈ [0.99, 2))
 * is a normal float64 (e ∈ [−966, 1022]), so 2^e can be added to the exponent bits of the table
 * entry with one integer add instead of the two-factor multiply `expInline` needs for subnormal
 * results. The lower end keeps 2^e·hi·p's rounding that of hi·p scaled: where the product is below
 * 2⁻¹⁰²² (subnormal, rounded to 2⁻¹⁰⁷⁴) it is also below a quarter ulp of 2^e·hi for e ≥ −967, so
 * the sum is 2^e·hi either way (at −707 nats, the bound before the sixth pass, e = −1020 would not
 * guarantee that). Softmax weights below e^−669 relative to the row's shift take the clamped path.
 */
const EXP_FAST_LO = "-669";
const EXP_FAST_HI = "709";
/** The fast path's lower end in the `"ys"` form's units (y = x·2048/ln 2), rounded inwards: −668.84 (e ≥ −965). */
export const EXP2_FAST_LO = "-1976000";
/**
 * Largest row shift m (units of ln2/2048; 334.1 nats) for which `softmax_shift_rows_f64` runs a row
 * without the per-group range test when the caller promises |S| ≤ m: then S − m ≥ −2m ≥
 * `EXP2_FAST_LO` + 2000, i.e. k = round(S) − m ≥ −1974000 > −1976000 (m is an integer), the fast path's own
 * condition with 2000 units (0.68 nats) to spare.
 */
export const SHIFT_CHECK_FREE_MAX = "987000";

/**
 * f64x2 exp of `xs` into `outs` with a rare-path split (the hot loop of the softmax and `exp_f64`).
 * Every lane of every vector is compared with [−669, 709] (only with −669 when `upper` is false:
 * softmax logits x − m′ are ≤ 0); if all lie inside (a NaN fails the compare), the fast path runs —
 * `expInline`'s reduction, polynomial and table without the clamp, with 2^e added to the exponent
 * bits of the table entry, y = 2^e·hi + 2^e·hi·p (exact scalings, see `EXP_FAST_LO`, so this equals
 * `expInline`'s two-factor scaling bit for bit). Otherwise the whole group takes `expInline` (clamp,
 * subnormals rounded once, 0, ∞, NaN). So every input gets the same bits whichever path its group
 * takes, and the fast path saves the clamp (2 ops) and the two-factor scaling (5 ops) per vector
 * (masked −∞ logits, e.g. a causal row, take the slow path).
 */
export function expFast(xs: string[], outs: string[], upper: boolean, arg: ExpArg = "x"): string[] {
  const L: string[] = [];
  const lo = `(v128.const f64x2 ${EXP_FAST_LO} ${EXP_FAST_LO})`;
  const hi = `(v128.const f64x2 ${EXP_FAST_HI} ${EXP_FAST_HI})`;
  const inside = (u: number) =>
    arg === "ys"
      ? `(f64x2.ge (local.get ${xs[u]}) (local.get $fl))`
      : upper
        ? `(v128.and (f64x2.ge (local.get ${xs[u]}) ${lo}) (f64x2.le (local.get ${xs[u]}) ${hi}))`
        : `(f64x2.ge (local.get ${xs[u]}) ${lo})`;
  let all = inside(0);
  for (let u = 1; u < xs.length; u++) all = `(v128.and ${all} ${inside(u)})`;
  if (arg === "ys") L.push(`(local.set $fl (v128.load offset=${EXP_FL_SCRATCH} (i32.const 0)))`);
  L.push(`(if (i32.eq (i64x2.bitmask ${all}) (i32.const 3)) (then`);
  L.push(...expFastPath(xs, outs, arg));
  L.push(")(else");
  L.push(...expInline(xs, outs, arg));
  L.push("))");
  return L;
}

/**
 * The fast path of `expFast` alone: valid (same bits as `expInline`) when every lane of `xs` lies in
 * the fast range — the caller has checked it, or (`softmax_shift_rows_f64`'s check-free loop) knows
 * it for the whole row.
 */
export function expFastPath(xs: string[], outs: string[], arg: ExpArg): string[] {
  const C = expConstants();
  const L: string[] = [];
  const { v, set, step } = streamLocals(L, xs.length, "ex");
  if (arg === "ys") {
    // 3 FP operations from the stored logit to u where `"x"` takes 8 to r (the shift, the multiply by
    // 2048/ln 2 and the Cody–Waite pair k·l1, k·l2): t = s + (magic − m) rounds s (|s| < 2²³ ≪ 2⁵¹)
    // with k = round(s) − m in t's low bits, round(s) = t − (magic − m), and s − round(s) is exact
    // (Sterbenz, or round(s) = 0); `$ex_r` keeps u = s − round(s) and `expPolyTable` works in u.
    step((u) => set("t", u, `(f64x2.add (local.get ${xs[u]}) (local.get $cs))`));
    step((u) => set("f", u, `(f64x2.sub ${v("t", u)} (local.get $cs))`));
    step((u) => set("r", u, `(f64x2.sub (local.get ${xs[u]}) ${v("f", u)})`));
  } else {
    step((u) => set("t", u, `(f64x2.add (f64x2.mul (local.get ${xs[u]}) ${C.inv}) ${C.magic})`));
    step((u) => set("f", u, `(f64x2.sub ${v("t", u)} ${C.magic})`));
    step((u) =>
      set("r", u, `(f64x2.sub (f64x2.sub (local.get ${xs[u]}) (f64x2.mul ${v("f", u)} ${C.l1})) (f64x2.mul ${v("f", u)} ${C.l2}))`),
    );
  }
  // bits(t) = bits(magic) + k exactly and bits(magic) has 51 trailing zeros, so bits(t) << 41 is
  // k·2⁴¹ = e·2⁵² + i·2⁴¹ (mod 2⁶⁴): added to the table entry bits(hi) − i·2⁴¹ it gives 2^e·hi.
  L.push(
    ...expPolyTable(
      xs.length,
      C,
      arg,
      (u) => `(i64x2.shl ${v("t", u)} (i32.const ${52 - EXP_TABLE_BITS}))`,
      (u) => outs[u],
    ),
  );
  return L;
}

export const X4 = ["$x0", "$x1", "$x2", "$x3"];
export const E4 = ["$e0", "$e1", "$e2", "$e3"];
export const V4_LOCALS = [...X4, ...E4].map((n) => `(local ${n} v128)`).join(" ");
