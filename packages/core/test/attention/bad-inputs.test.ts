// Bad input to every public attention function is a typed error whose message names the argument,
// the expected and the actual shape or value.
import { describe, expect, it } from "vitest";
import {
  Matrix,
  NonFiniteError,
  NumericalError,
  ShapeError,
  ValueError,
  additiveMask,
  attention,
  attentionScores,
  attentionWeights,
  crossAttention,
  dotKernel,
  evaluateKernel,
  initMultiHeadWeights,
  kernelScale,
  kvHeadFor,
  multiHeadAttention,
  multiplicativeMask,
  pairwiseKernel,
  projectedAttention,
  randomMatrix,
  selfAttention,
  softmaxKernel,
  streamingAttention,
} from "@randattn/core";

type Ctor = new (...args: never[]) => Error;
function expectError(f: () => unknown, type: Ctor, ...parts: (string | RegExp)[]): void {
  let caught: unknown;
  try {
    f();
  } catch (e) {
    caught = e;
  }
  expect(caught, "did not throw").toBeInstanceOf(type);
  const msg = (caught as Error).message;
  for (const p of parts) {
    if (typeof p === "string") expect(msg).toContain(p);
    else expect(msg).toMatch(p);
  }
}

const q = randomMatrix(3, 4, {}, [32, "q"]);
const k = randomMatrix(5, 4, {}, [32, "k"]);
const v = randomMatrix(5, 2, {}, [32, "v"]);
const withNaN = (m: Matrix, i: number, j: number, x: number) => {
  const c = m.clone();
  c.set(i, j, x);
  return c;
};

const singleHead: [string, (qq: Matrix, kk: Matrix, vv: Matrix, o?: object) => unknown][] = [
  ["attention", (qq, kk, vv, o) => attention(qq, kk, vv, o)],
  ["streamingAttention", (qq, kk, vv, o) => streamingAttention(qq, kk, vv, o)],
  ["attentionWeights", (qq, kk, _vv, o) => attentionWeights(qq, kk, o)],
  ["attentionScores", (qq, kk, _vv, o) => attentionScores(qq, kk, o)],
];

describe("single-head forms", () => {
  for (const [name, run] of singleHead) {
    it(`${name}: shapes`, () => {
      expectError(() => run(q, randomMatrix(5, 3, {}, [1]), v), ShapeError, "keys: expected *×4 (cols = queries.cols = 4), got 5×3");
      expectError(() => run(new Matrix(0, 4), k, v), ShapeError, "queries: expected at least 1 row and 1 column, got 0×4");
      expectError(() => run(q, new Matrix(0, 4), new Matrix(0, 2)), ShapeError, "keys: expected at least 1 row and 1 column, got 0×4");
      expectError(() => run([[1]] as unknown as Matrix, k, v), ShapeError, "queries: expected a Matrix");
    });
    it(`${name}: NaN / ±Inf`, () => {
      expectError(() => run(withNaN(q, 1, 2, Number.NaN), k, v), NonFiniteError, "queries: expected finite entries, got NaN at [1, 2]");
      expectError(() => run(q, withNaN(k, 4, 0, Number.POSITIVE_INFINITY), v), NonFiniteError, "keys", "Infinity at [4, 0]");
    });
    it(`${name}: options`, () => {
      expectError(() => run(q, k, v, { kernel: { kind: "cosine" } }), ValueError, "options.kernel.kind", '"softmax"', '"cosine"');
      expectError(() => run(q, k, v, { kernel: { kind: "softmax", scale: 0 } }), ValueError, "options.kernel.scale", "> 0", "got 0");
      expectError(() => run(q, k, v, { kernel: { kind: "dot" } }), ValueError, "options.kernel.f", "a function");
      expectError(() => run(q, k, v, { maskForm: "both" }), ValueError, "options.maskForm", '"additive"', '"both"');
      expectError(() => run(q, k, v, { onEmptyRow: "nan" }), ValueError, "options.onEmptyRow", '"zero"', '"nan"');
      expectError(() => run(q, k, v, { mask: { kind: "window" } }), ValueError, "options.mask.kind", '"causal"', '"window"');
      expectError(() => run(q, k, v, { mask: { kind: "causal", offset: 1.5 } }), ValueError, "options.mask.offset", "integer", "1.5");
      expectError(() => run(q, k, v, { mask: { kind: "padding", keyLength: 6 } }), ValueError, "options.mask.keyLength", "[0, 5]", "6");
      expectError(() => run(q, k, v, { mask: { kind: "allowed", sets: [[0], [1]] } }), ShapeError, "options.mask.sets", "3 sets", "2 sets");
      expectError(
        () => run(q, k, v, { mask: { kind: "allowed", sets: [[0], [5], [1]] } }),
        ValueError,
        "options.mask.sets[1][0]",
        "[0, 4]",
        "5",
      );
      expectError(
        () => run(q, k, v, { mask: { kind: "dense", allowed: new Matrix(3, 4) } }),
        ShapeError,
        "options.mask.allowed",
        "3×5",
        "3×4",
      );
      expectError(
        () => run(q, k, v, { mask: { kind: "dense", allowed: Matrix.from(3, 5, () => 0.5) } }),
        ValueError,
        "entries 0 or 1",
        "0.5 at [0, 0]",
      );
      expectError(() => run(q, k, v, "fast" as never), ValueError, "options", "an options object");
    });
    it(`${name}: invalid kernel values name the query and key`, () => {
      const neg = dotKernel((s) => s, { name: "identity" });
      expectError(() => run(q, k, v, { kernel: neg }), NumericalError, "options.kernel", "identity", /at query \d+, key \d+/);
      const nan = pairwiseKernel((a) => (a[0] === q.get(1, 0) ? Number.NaN : 1), "partly-nan");
      expectError(() => run(q, k, v, { kernel: nan }), NumericalError, "partly-nan", "NaN at query 1, key 0");
    });
    it(`${name}: logits overflowing inside ⟨q,k⟩ are a NumericalError, not NaN`, () => {
      const big = Matrix.fromArray([[1e300, 1e300]]);
      const kk = Matrix.fromArray([[1e300, -1e300]]); // ⟨q,k⟩ = ∞ − ∞ = NaN
      expectError(
        () => run(big, kk, Matrix.fromArray([[1]]), { kernel: { kind: "softmax", scale: 1 } }),
        NumericalError,
        "logits",
        "query 0",
      );
    });
  }

  it("attention / streaming: values shape and finiteness", () => {
    for (const run of [attention, streamingAttention]) {
      expectError(() => run(q, k, randomMatrix(4, 2, {}, [1])), ShapeError, "values: expected 5×* (rows = keys.rows = 5), got 4×2");
      expectError(() => run(q, k, new Matrix(5, 0)), ShapeError, "values", "d_V ≥ 1", "5×0");
      expectError(() => run(q, k, withNaN(v, 0, 1, Number.NEGATIVE_INFINITY)), NonFiniteError, "values", "-Infinity at [0, 1]");
    }
  });

  it("streamingAttention: block sizes", () => {
    expectError(() => streamingAttention(q, k, v, { blockSize: 0 }), ValueError, "options.blockSize", "integer ≥ 1", "got 0");
    expectError(() => streamingAttention(q, k, v, { queryBlockSize: 2.5 }), ValueError, "options.queryBlockSize", "2.5");
  });
});

describe("projections, multi-head and helpers", () => {
  const w = { query: randomMatrix(4, 3, {}, [1]), key: randomMatrix(4, 3, {}, [2]), value: randomMatrix(4, 2, {}, [3]) };
  it("projectedAttention / selfAttention / crossAttention", () => {
    expectError(
      () => projectedAttention(q, k, randomMatrix(6, 4, {}, [1]), w),
      ShapeError,
      "xV: expected 5×* (rows = xK.rows = N_KV = 5), got 6×4",
    );
    expectError(() => selfAttention(randomMatrix(3, 5, {}, [1]), w), ShapeError, "weights.query: expected 5×*", "got 4×3");
    expectError(() => crossAttention(q, k, { ...w, key: randomMatrix(4, 2, {}, [1]) }), ShapeError, "weights.key: expected *×3", "got 4×2");
    expectError(() => crossAttention(q, withNaN(k, 0, 0, Number.NaN), w), NonFiniteError, "xK: expected finite entries");
    expectError(() => crossAttention(q, new Matrix(0, 4), w), ShapeError, "xK: expected at least 1 row");
    expectError(() => selfAttention(q, w, { algorithm: "gpu" as never }), ValueError, "options.algorithm", '"gpu"');
  });

  it("multiHeadAttention", () => {
    const mw = initMultiHeadWeights({ dIn: 4, numHeads: 4, numKvHeads: 2, headDim: 3 }, [33]);
    expectError(() => multiHeadAttention(randomMatrix(3, 5, {}, [1]), k, mw), ShapeError, "xQ: expected *×4", "got 3×5");
    expectError(() => multiHeadAttention(q, new Matrix(0, 4), mw), ShapeError, "xKV: expected at least 1 row");
    expectError(
      () => multiHeadAttention(q, k, { ...mw, values: mw.values.slice(0, 1) }),
      ShapeError,
      "weights.values",
      "2 matrices",
      "1 matrices",
    );
    expectError(() => multiHeadAttention(q, k, { ...mw, queries: [] }), ShapeError, "weights.queries", "non-empty");
    expectError(
      () => multiHeadAttention(q, k, { ...mw, output: randomMatrix(11, 4, {}, [1]) }),
      ShapeError,
      "weights.output: expected 12×*",
      "got 11×4",
    );
    expectError(
      () => multiHeadAttention(q, k, { ...mw, keys: [mw.keys[0], randomMatrix(4, 2, {}, [1])] }),
      ShapeError,
      "weights.keys[1]",
      "got 4×2",
    );
    expectError(
      () => multiHeadAttention(q, k, { ...mw, queries: [...mw.queries.slice(0, 3), randomMatrix(4, 2, {}, [1])] }),
      ShapeError,
      "weights.queries[3]",
    );
    expectError(() => multiHeadAttention(withNaN(q, 2, 1, Number.NaN), k, mw), NonFiniteError, "xQ", "NaN at [2, 1]");
    expectError(() => multiHeadAttention(q, k, mw, { rope: {} as never }), ValueError, "options.rope", "PositionalRotation");
  });

  it("kvHeadFor and initMultiHeadWeights", () => {
    expectError(() => kvHeadFor(4, 4, 2), ValueError, "head: expected an integer in [0, 3], got 4");
    expectError(() => kvHeadFor(0, 4, 8), ValueError, "numKvHeads: expected an integer in [1, 4], got 8");
    expectError(() => kvHeadFor(0, 0, 1), ValueError, "numHeads: expected an integer ≥ 1, got 0");
    expectError(() => initMultiHeadWeights({ dIn: 4, numHeads: 4, headDim: 0 }, [1]), ValueError, "init.headDim", "got 0");
    expectError(() => initMultiHeadWeights({ dIn: 4, numHeads: 4, headDim: 2, valueDim: 1.5 }, [1]), ValueError, "init.valueDim", "1.5");
  });

  it("mask builders, kernels", () => {
    expectError(() => multiplicativeMask({ kind: "causal" }, 0, 3), ValueError, "nQ: expected an integer ≥ 1, got 0");
    expectError(() => additiveMask({ kind: "padding", keyLength: 4 }, 2, 3), ValueError, "mask.keyLength", "[0, 3]", "got 4");
    expectError(() => softmaxKernel(-1), ValueError, "scale: expected a number > 0, got -1");
    expectError(() => dotKernel(3 as never), ValueError, "f: expected a function");
    expectError(() => kernelScale(undefined, 0), ValueError, "dQK", "got 0");
    expectError(
      () => evaluateKernel(undefined, new Float64Array(2), new Float64Array(3)),
      ShapeError,
      "k: expected length 2",
      "got length 3",
    );
  });
});
