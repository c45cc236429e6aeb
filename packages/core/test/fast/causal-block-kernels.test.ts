import { KernelArena } from "@randattn/core/internal";
import seedrandom from "seedrandom";
import { describe, expect, it } from "vitest";

// wat.ts softmax_prefix_f64 (the causal block's exp pass with per-row limits, no −∞ written) must
// give exactly the bits of softmax_rows_f64 on a fresh tile (m = −∞, l = 0) whose entries past each
// row's limit were set to −∞ — the prefix path it replaces: S, m and l alike, for limits on and off
// every group boundary (8 lanes, pairs, the odd tail), rows with no key, garbage (huge, NaN) past
// the limit, a NaN or −∞ logit inside it. Fails on any lane mask, group or summation order that
// differs. softmax_prefix_f32 (since stop 20: logits in units of ln 2, w = 2^(S − m)) is checked
// against the formula below, over the same cases.
describe("softmax_prefix_f64 equals softmax_rows_f64 on the −∞-masked tile, bit for bit", () => {
  const rng = seedrandom("softmax-prefix");
  const arena = new KernelArena();
  const k = arena.k;
  const same = (a: ArrayLike<number>, b: ArrayLike<number>) => a.length === b.length && Array.from(a).every((x, i) => Object.is(x, b[i]));
  for (const f32 of [false]) {
    for (const cols of [1, 2, 3, 5, 8, 13, 16, 17, 31, 32, 48, 61, 64]) {
      it(`${f32 ? "float32" : "float64"}, ${cols} columns`, () => {
        const ld = cols + 3;
        const rows = cols + 3;
        const es = f32 ? 4 : 8;
        const [S1, S2, M1, L1, M2, L2, Y] = arena.frame([rows * ld * es, rows * ld * es, rows * 8, rows * 8, rows * 8, rows * 8, 64]);
        const mem = f32 ? k.f32 : k.f64; // after frame(), which may grow the memory
        const s = Float64Array.from({ length: rows * ld }, () => 6 * (rng() - 0.5));
        // Limits 0 … cols (every boundary), one past cols (clamped).
        const lim = Int32Array.from({ length: rows }, (_, r) => Math.min(r, cols + 1));
        for (let r = 0; r < rows; r++) {
          // Past the limit: what S = Q Kᵀ computed for later keys, here garbage the kernel must ignore.
          if (lim[r] < cols) s[r * ld + lim[r]] = r % 3 === 0 ? Number.NaN : 1e300;
          if (r === 5 && cols > 2) s[r * ld + 1] = Number.NaN; // inside: l must come out NaN on both
          if (r === 7 && cols > 4) s[r * ld + 2] = Number.NEGATIVE_INFINITY; // inside: weight exactly 0
          // A zero maximum met as −0 and +0 in a different order by the 8-column prelude's chains
          // than by the 4s (rows 17, 18: since stop 25 the kernel rescans such a row in the old order).
          if ((r === 17 || r === 18) && lim[r] >= 16) {
            for (let c = 0; c < lim[r]; c++) s[r * ld + c] = -1 - rng();
            s[r * ld + 4] = r === 17 ? -0 : 0;
            s[r * ld + 8] = r === 17 ? 0 : -0;
          }
        }
        mem.set(s, S1 / es);
        mem.set(s, S2 / es);
        for (let r = 0; r < rows; r++) {
          const o = S1 / es + r * ld;
          mem.fill(Number.NEGATIVE_INFINITY, o + Math.min(lim[r], cols), o + cols);
        }
        k.f64.fill(Number.NEGATIVE_INFINITY, M1 / 8, M1 / 8 + rows);
        k.f64.fill(0, L1 / 8, L1 / 8 + rows);
        (f32 ? k.softmax_rows_f32 : k.softmax_rows_f64)(S1, rows, cols, ld, M1, L1, Y, 0, 0);
        k.f64.set(Float64Array.from(lim), M2 / 8);
        k.f64.fill(7, L2 / 8, L2 / 8 + rows); // overwritten
        (f32 ? k.softmax_prefix_f32 : k.softmax_prefix_f64)(S2, rows, cols, ld, M2, L2);
        const tile = (p: number) => {
          const out: number[] = [];
          for (let r = 0; r < rows; r++) out.push(...mem.subarray(p / es + r * ld, p / es + r * ld + cols));
          return out;
        };
        expect(same(tile(S2), tile(S1))).toBe(true);
        expect(same(k.f64.subarray(M2 / 8, M2 / 8 + rows), k.f64.subarray(M1 / 8, M1 / 8 + rows))).toBe(true);
        expect(same(k.f64.subarray(L2 / 8, L2 / 8 + rows), k.f64.subarray(L1 / 8, L1 / 8 + rows))).toBe(true);
        // The case the comparison covers: a row with no key (m = −∞, l = 0) and real weights elsewhere.
        expect(k.f64[M2 / 8]).toBe(Number.NEGATIVE_INFINITY);
        expect(k.f64[L2 / 8]).toBe(0);
        expect(k.f64[L2 / 8 + 1]).toBe(1); // one key: weight exp(0)
        if (cols >= 2) expect(k.f64[L2 / 8 + 2]).toBeGreaterThan(1);
      });
    }
  }
});

describe("softmax_prefix_f32: m = the row max over c < lim, w = 2^fl32(S − m) (0 below 2⁻¹²⁵), l = Σ w", () => {
  const rng = seedrandom("softmax-prefix-f32");
  const arena = new KernelArena();
  const k = arena.k;
  const ulp32 = (y: number) => 2 ** (Math.floor(Math.log2(y)) - 23);
  for (const cols of [1, 2, 3, 5, 8, 13, 16, 17, 31, 32, 48, 61, 64, 203]) {
    it(`${cols} columns: the max exact, each weight within 1.5 ulp of float32 or 0, zeros past the limit, l to float32 pair sums`, () => {
      const ld = cols + 3;
      const rows = Math.min(cols, 64) + 3;
      const [S, M, L] = arena.frame([rows * ld * 4, rows * 8, rows * 8]);
      const mem = k.f32;
      // Logits in units of ln 2 spread over ±200 on some rows, so weights below 2⁻¹²⁵ occur.
      const s = Float32Array.from({ length: rows * ld }, (_, i) => Math.fround((Math.floor(i / ld) % 4 === 3 ? 400 : 9) * (rng() - 0.5)));
      const lim = Int32Array.from({ length: rows }, (_, r) => Math.min(r, cols + 1));
      for (let r = 0; r < rows; r++) {
        if (lim[r] < cols) s[r * ld + lim[r]] = r % 3 === 0 ? Number.NaN : 1e30; // past the limit: ignored
        if (r === 5 && cols > 2) s[r * ld + 1] = Number.NaN; // inside: l NaN
        if (r === 7 && cols > 4) s[r * ld + 2] = Number.NEGATIVE_INFINITY; // inside: weight 0
        // A zero maximum met as −0 and +0 in one order by the 16-column prelude's four chains and
        // in the other by the single chain of 4s (rows 40, 41; since stop 25 rescanned in the old order).
        if ((r === 40 || r === 41) && lim[r] >= 32) {
          for (let c = 0; c < lim[r]; c++) s[r * ld + c] = Math.fround(-1 - rng());
          s[r * ld + 4] = r === 40 ? 0 : -0;
          s[r * ld + 16] = r === 40 ? -0 : 0;
        }
      }
      mem.set(s, S / 4);
      k.f64.set(Float64Array.from(lim), M / 8);
      k.f64.fill(7, L / 8, L / 8 + rows);
      k.softmax_prefix_f32(S, rows, cols, ld, M, L);
      let worst = 0;
      for (let r = 0; r < rows; r++) {
        const n = Math.min(lim[r], cols);
        const row = s.subarray(r * ld, r * ld + n);
        const w = mem.subarray(S / 4 + r * ld, S / 4 + r * ld + cols);
        for (let c = n; c < cols; c++) expect(w[c]).toBe(0);
        const m = k.f64[M / 8 + r];
        const l = k.f64[L / 8 + r];
        if (n === 0) {
          expect(m).toBe(Number.NEGATIVE_INFINITY);
          expect(l).toBe(0);
          continue;
        }
        if (row.some(Number.isNaN)) {
          expect(l).toBeNaN();
          continue;
        }
        let top = Number.NEGATIVE_INFINITY;
        for (const x of row) top = Math.max(top, x);
        expect(m === top).toBe(true);
        // …and its sign of zero that of the kernel's original order: f32x4.pmax lanes (column c in
        // lane c mod 4, the first of equal values kept) over the 4s, f32.max across the lanes, then
        // f64.max with the single columns past cols & −4.
        const c4 = cols & -4;
        const lanes = [Number.NEGATIVE_INFINITY, Number.NEGATIVE_INFINITY, Number.NEGATIVE_INFINITY, Number.NEGATIVE_INFINITY];
        for (let c = 0; c < Math.min(n, c4); c++) if (lanes[c % 4] < row[c]) lanes[c % 4] = row[c];
        let ref = Math.max(Math.max(lanes[0], lanes[1]), Math.max(lanes[2], lanes[3]));
        for (let c = c4; c < n; c++) ref = Math.max(ref, row[c]);
        expect(Object.is(m, ref)).toBe(true);
        if (r === 40 || r === 41) expect(m === 0).toBe(true); // the case is really a zero maximum
        let sum = 0;
        for (let c = 0; c < n; c++) {
          const z = Math.fround(row[c] - Math.fround(m)); // the kernel's float32 shift
          if (z <= -125) expect(w[c]).toBe(0);
          else {
            const ref = 2 ** z;
            worst = Math.max(worst, Math.abs(w[c] - ref) / ulp32(ref));
          }
          sum += w[c];
        }
        expect(Math.abs(l - sum)).toBeLessThanOrEqual((2 ** -24 + n * 2 ** -52) * sum);
        if (n === 1) expect(l).toBe(1); // one key: 2⁰ exactly
      }
      expect(worst).toBeLessThanOrEqual(1.5);
      if (cols > 4) expect(mem[S / 4 + 7 * ld + 2]).toBe(0);
    });
  }
});
