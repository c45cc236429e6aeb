// The opt-in fused-multiply-add GEMM kernels (issue 14, stop 27: `setKernelArithmetic("fma")`, relaxed
// SIMD). What must hold: every macro-kernel is swapped (a product whose value depends on the one
// rounding tells fused from mul+add), on the shared instance and on arenas made before or during the
// switch; the sums stay within the bound of a k-term sum; switching back gives the default bits; the
// typed errors; and one attention call over two workers stays bit-identical to one thread under "fma".
import {
  Matrix,
  ValueError,
  attention,
  getKernelArithmetic,
  matmul,
  matmul32,
  relaxedSimdAvailable,
  setKernelArithmetic,
  withKernelArithmetic,
  withKernelBackend,
} from "@randattn/core";
import { KernelArena, type Kernels } from "@randattn/core/internal";
import { attentionParallel, closeAttentionWorkers, enableRelaxedSimd, loadPretrained } from "@randattn/core/node";
import { existsSync, readFileSync } from "node:fs";
import { setFlagsFromString } from "node:v8";
import { fileURLToPath } from "node:url";
import { runInNewContext } from "node:vm";
import wabtInit from "wabt";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { fixtureDir, reference, relError } from "../pretrained/helpers.js";
import { literalProduct, rnd } from "./helpers.js";

afterEach(() => {
  setKernelArithmetic("mul-add");
});
afterAll(async () => {
  await closeAttentionWorkers();
});

/** Does this machine's relaxed_madd fuse? (The proposal allows either; V8 fuses where the CPU has FMA.) */
let hostFuses = false;

beforeAll(async () => {
  expect(enableRelaxedSimd()).toBe(true);
  const wabt = await wabtInit();
  const mod = wabt.parseWat(
    "probe.wat",
    `(module (func (export "f") (param f64 f64 f64) (result f64)
      (f64x2.extract_lane 0 (f64x2.relaxed_madd (f64x2.splat (local.get 0)) (f64x2.splat (local.get 1)) (f64x2.splat (local.get 2))))))`,
    { simd: true, relaxed_simd: true },
  );
  const bytes = mod.toBinary({}).buffer;
  mod.destroy();
  const { instance } = await WebAssembly.instantiate(bytes);
  const f = instance.exports.f as (a: number, b: number, c: number) => number;
  hostFuses = f(1 + 2 ** -30, 1 - 2 ** -30, -1) !== 0;
  // On x86-64 Linux with FMA3 V8 must fuse: otherwise the "fma" setting would only be slower.
  if (process.arch === "x64" && existsSync("/proc/cpuinfo") && /\bfma\b/.test(readFileSync("/proc/cpuinfo", "utf8"))) {
    expect(hostFuses).toBe(true);
  }
});

// a·b = 1 − 2⁻⁶⁰ (f64) rounds to 1, so −1 + fl(a·b) = 0, while fma(a, b, −1) = −2⁻⁶⁰ exactly. In
// float32 the same with 2⁻¹³: −2⁻²⁶ or 0. Each C entry is the 2-term sum (−1)·1 + a·b.
const F64_TERMS = { a: 1 + 2 ** -30, b: 1 - 2 ** -30, fused: -(2 ** -60) };
const F32_TERMS = { a: 1 + 2 ** -13, b: 1 - 2 ** -13, fused: -(2 ** -26) };

type Form = "packed" | "rows" | "rows-fixed";

/**
 * Runs one 4×NR tile of `form` (gemm_* on packed A, gemm_*_ra with lda 2, gemm_*_ra at the fixed
 * lda 16 through its dispatch) on an arena's kernels and returns the C entries.
 */
function tile(k: Kernels, arena: KernelArena, f32: boolean, form: Form): number[] {
  const { a, b } = f32 ? F32_TERMS : F64_TERMS;
  const es = f32 ? 4 : 8;
  const NR = f32 ? 8 : 4;
  const lda = form === "rows-fixed" ? 16 : 2;
  const [ap, bp, cp] = arena.frame([4 * 16 * es, 2 * NR * es, 4 * NR * es]);
  const view = f32 ? k.f32 : k.f64;
  view.fill(0, ap / es, ap / es + 4 * 16);
  for (let i = 0; i < 4; i++) {
    if (form === "packed") {
      view[ap / es + i] = -1; // Apack[p·MR + i], p = 0
      view[ap / es + 4 + i] = a; // p = 1
    } else {
      view[ap / es + i * lda] = -1;
      view[ap / es + i * lda + 1] = a;
    }
  }
  for (let j = 0; j < NR; j++) {
    view[bp / es + j] = 1; // Bpack[p·NR + j]
    view[bp / es + NR + j] = b;
  }
  view.fill(0, cp / es, cp / es + 4 * NR);
  if (form === "packed") (f32 ? k.gemm_f32 : k.gemm_f64)(ap, bp, cp, NR, 4, NR, 2);
  else (f32 ? k.gemm_f32_ra : k.gemm_f64_ra)(ap, lda, bp, 2, cp, NR, 4, NR, 2, 0);
  return Array.from(view.subarray(cp / es, cp / es + 4 * NR));
}

const FORMS: Form[] = ["packed", "rows", "rows-fixed"];

describe('setKernelArithmetic("fma")', () => {
  it("swaps every GEMM macro-kernel of an arena made before, and of one made during, the switch", () => {
    const before = new KernelArena();
    setKernelArithmetic("fma");
    const during = new KernelArena();
    for (const arena of [before, during]) {
      for (const f32 of [false, true]) {
        const want = hostFuses ? (f32 ? F32_TERMS : F64_TERMS).fused : 0;
        for (const form of FORMS)
          expect(tile(arena.k, arena, f32, form), `${form} f32=${f32}`).toEqual(new Array(f32 ? 32 : 16).fill(want));
      }
    }
    setKernelArithmetic("mul-add");
    for (const arena of [before, during]) {
      for (const f32 of [false, true])
        for (const form of FORMS) expect(tile(arena.k, arena, f32, form)).toEqual(new Array(f32 ? 32 : 16).fill(0));
    }
  });

  it("reaches matmul and matmul32 on the shared instance, and the scope restores the default bits", () => {
    const A = new Matrix(1, 2, Float64Array.from([-1, F64_TERMS.a]));
    const B = new Matrix(2, 1, Float64Array.from([1, F64_TERMS.b]));
    const run = () => withKernelBackend("wasm", () => matmul(A, B).data[0]);
    expect(run()).toBe(0);
    expect(withKernelArithmetic("fma", run)).toBe(hostFuses ? F64_TERMS.fused : 0);
    expect(getKernelArithmetic()).toBe("mul-add");
    expect(run()).toBe(0);
    const A32 = new Matrix(1, 2, Float64Array.from([-1, F32_TERMS.a]));
    const B32 = new Matrix(2, 1, Float64Array.from([1, F32_TERMS.b]));
    const run32 = () => withKernelBackend("wasm", () => matmul32(A32, B32).data[0]);
    expect(run32()).toBe(0);
    expect(withKernelArithmetic("fma", run32)).toBe(hostFuses ? F32_TERMS.fused : 0);
  });

  it("keeps every entry within the k-term sum bound γ_k Σ|a_p b_p| (f64 and f32, edge tiles, k across two KC slices)", () => {
    // Reference: each product exact (Dekker's TwoProduct) and the sum compensated (TwoSum), so its
    // error is O(u²); the bound is the one every ordering of a k-term sum meets.
    const [m, k, n] = [67, 301, 53];
    const a = rnd(m, k, "fma-a");
    const b = rnd(k, n, "fma-b");
    const split = (x: number): [number, number] => {
      const c = 134217729 * x;
      const hi = c - (c - x);
      return [hi, x - hi];
    };
    const ref = new Float64Array(m * n);
    const mag = new Float64Array(m * n);
    for (let i = 0; i < m; i++) {
      for (let j = 0; j < n; j++) {
        let s = 0;
        let comp = 0;
        let abs = 0;
        for (let p = 0; p < k; p++) {
          const x = a.data[i * k + p];
          const y = b.data[p * n + j];
          const prod = x * y;
          const [xh, xl] = split(x);
          const [yh, yl] = split(y);
          const err = xl * yl - (prod - xh * yh - xl * yh - xh * yl);
          const t = s + prod;
          const bb = t - s;
          comp += s - (t - bb) + (prod - bb) + err;
          s = t;
          abs += Math.abs(prod);
        }
        ref[i * n + j] = s + comp;
        mag[i * n + j] = abs;
      }
    }
    const fused = withKernelArithmetic("fma", () => matmul(a, b));
    const u = 2 ** -53;
    const gamma = (k * u) / (1 - k * u);
    let worst = 0;
    let differ = 0;
    const plain = matmul(a, b);
    for (let e = 0; e < m * n; e++) {
      worst = Math.max(worst, Math.abs(fused.data[e] - ref[e]) / (gamma * mag[e]));
      if (!Object.is(fused.data[e], plain.data[e])) differ++;
    }
    expect(worst).toBeLessThanOrEqual(1);
    if (hostFuses) expect(differ).toBeGreaterThan((m * n) / 2); // one rounding less per term moves most sums
    // float32: inputs rounded to float32, products exact in float64, so the literal float64 sum is the reference to O(2⁻⁵³k).
    const round32 = (x: Matrix) => new Matrix(x.rows, x.cols, Float64Array.from(x.data, Math.fround));
    const lit = literalProduct(round32(a), round32(b));
    const f32 = withKernelArithmetic("fma", () => matmul32(a, b));
    const gamma32 = (k * 2 ** -24) / (1 - k * 2 ** -24);
    let worst32 = 0;
    for (let e = 0; e < m * n; e++) worst32 = Math.max(worst32, Math.abs(f32.data[e] - lit.c[e]) / (gamma32 * lit.abs[e] + 2 ** -149));
    expect(worst32).toBeLessThanOrEqual(1);
  });

  it("one attention call over two workers is bit-identical to one thread under fma, both precisions", async () => {
    const q = rnd(600, 16, "fma-q");
    const kk = rnd(300, 16, "fma-k");
    const v = rnd(300, 8, "fma-v");
    for (const precision of ["float64", "float32"] as const) {
      const plain = attention(q, kk, v, { precision });
      setKernelArithmetic("fma");
      const one = attention(q, kk, v, { precision });
      const two = await attentionParallel(q, kk, v, { precision, workers: 2 });
      setKernelArithmetic("mul-add");
      expect(
        two.data.every((x, i) => Object.is(x, one.data[i])),
        precision,
      ).toBe(true);
      if (hostFuses)
        expect(
          one.data.some((x, i) => !Object.is(x, plain.data[i])),
          precision,
        ).toBe(true);
      // And the workers follow the caller back to mul+add.
      const back = await attentionParallel(q, kk, v, { precision, workers: 2 });
      expect(
        back.data.every((x, i) => Object.is(x, plain.data[i])),
        precision,
      ).toBe(true);
    }
  });

  it("keeps no dropped arena alive: its memory (a model's placed weights) is collected, fused instance and all", async () => {
    // The registry of instances that the switch walks must be weak, and so must the GEMM sets it
    // keeps per instance (their exported functions hold the instance, which holds the memory).
    setFlagsFromString("--expose-gc");
    const gc = runInNewContext("gc") as () => void;
    const memories: WeakRef<object>[] = [];
    const make = () => {
      const arena = new KernelArena();
      arena.place(new Float64Array(1 << 16));
      memories.push(new WeakRef(arena.k.memory));
    };
    for (let i = 0; i < 6; i++) make();
    setKernelArithmetic("fma"); // each live arena gets its fused instance on the same memory
    for (let i = 0; i < 6; i++) make();
    setKernelArithmetic("mul-add");
    await new Promise((r) => setTimeout(r, 0)); // WeakRef targets are kept to the end of the job that made them
    gc();
    await new Promise((r) => setTimeout(r, 0));
    gc();
    expect(memories.filter((r) => r.deref() !== undefined).length).toBe(0);
  });

  it("real checkpoints under fma: every fixture family within torch's 1e-12, and a prefill + decode of the shipped Llama", () => {
    // The bound of torch-fixtures.test.ts (≈ 2e-14 at worst for these reductions, ×50 margin) holds for
    // any order and rounding count of the same sums, so it holds under fma too.
    for (const name of ["llama-tied-llama3", "qwen2-bias-f16", "gpt2-sharded", "deepseek-moe-bf16", "deepseek-yarn"]) {
      const ref = reference(name);
      const ids = Array.from(ref.get("ids")!.data);
      const m = loadPretrained(fixtureDir(name));
      const logits = withKernelArithmetic("fma", () => m.forward(ids).logits);
      expect(relError(logits.data, ref.get("logits")!.data), name).toBeLessThan(1e-12);
    }
    // 64 prompt tokens (resident prefill on the fused GEMMs), then 8 decoded tokens; against mul+add.
    const llama = loadPretrained(fileURLToPath(new URL("../../../../models/llama-gqa-fortunes", import.meta.url)));
    const ids = Array.from({ length: 72 }, (_, i) => (i * 37) % 1000);
    const run = () => {
      const state = llama.createState();
      const pre = llama.step(state, ids.slice(0, 64)).logits;
      const steps = ids.slice(64).map((id) => llama.step(state, [id]).logits);
      return [pre, ...steps];
    };
    const plain = run();
    const fused = withKernelArithmetic("fma", run);
    for (let s = 0; s < plain.length; s++) expect(relError(fused[s].data, plain[s].data), `step ${s}`).toBeLessThan(1e-12);
    if (hostFuses) expect(fused[0].data.some((x, i) => !Object.is(x, plain[0].data[i]))).toBe(true);
  });

  it("refuses an unknown arithmetic with a typed error naming the argument", () => {
    expect(relaxedSimdAvailable()).toBe(true);
    const err = (() => {
      try {
        setKernelArithmetic("fused" as never);
      } catch (e) {
        return e;
      }
    })();
    expect(err).toBeInstanceOf(ValueError);
    expect((err as ValueError).argument).toBe("arithmetic");
    expect((err as ValueError).expected).toContain('"fma"');
    expect(getKernelArithmetic()).toBe("mul-add");
    expect(() => withKernelArithmetic("fma", () => Promise.resolve(1))).toThrow(ValueError);
    expect(getKernelArithmetic()).toBe("mul-add");
  });
});
