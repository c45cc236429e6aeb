/** Bad inputs to every public function of features/: typed errors naming argument, expected, actual. */
import { Matrix, NonFiniteError, ShapeError, ValueError, randomMatrix } from "@randattn/core";
import { describe, expect, it } from "vitest";
import { drawProjection, featureDimension, randomFeatureAttention, randomFeatures, resolveKernel } from "../../src/features/index.js";

function caught(f: () => unknown): { name: string; argument: string; expected: string; actual: string } {
  try {
    f();
  } catch (e) {
    return e as never;
  }
  throw new Error("did not throw");
}

describe("features/ argument validation", () => {
  const q = randomMatrix(4, 3, {}, [1]);
  const k = randomMatrix(5, 3, {}, [2]);
  const v = randomMatrix(5, 2, {}, [3]);

  it("drawProjection", () => {
    expect(caught(() => drawProjection(0, 3, {}, [1]))).toMatchObject({ argument: "numFrequencies", actual: "0" });
    expect(caught(() => drawProjection(2, 1.5, {}, [1]))).toMatchObject({ argument: "dim", actual: "1.5" });
    expect(caught(() => drawProjection(2, 2, { projection: "qr" as never }, [1]))).toMatchObject({ argument: "options.projection" });
    const e = caught(() => drawProjection(2, 2, { projection: "orthogonal", distribution: "cauchy" }, [1]));
    expect(e).toBeInstanceOf(ValueError);
    expect(e.argument).toBe("options.distribution");
  });

  it("randomFeatures", () => {
    const w = randomMatrix(4, 3, {}, [4]);
    expect(caught(() => randomFeatures(q, randomMatrix(4, 2, {}, [4])))).toMatchObject({
      argument: "omega",
      expected: "*×3 (cols = x.cols)",
      actual: "4×2",
    });
    const bad = q.clone();
    bad.set(1, 2, Number.NaN);
    const e = caught(() => randomFeatures(bad, w));
    expect(e).toBeInstanceOf(NonFiniteError);
    expect(e.actual).toContain("[1, 2]");
    expect(caught(() => randomFeatures(q, w, { shift: "max" as never }))).toMatchObject({ argument: "options.shift" });
    expect(caught(() => randomFeatures(q, w, { kernel: { kind: "softmax", scale: -1 } }))).toMatchObject({
      argument: "options.kernel.scale",
    });
    expect(caught(() => randomFeatures(q, w, { kernel: { kind: "gaussian", bandwidth: 0 } }))).toMatchObject({
      argument: "options.kernel.bandwidth",
    });
    expect(caught(() => randomFeatures([[1]] as never, w))).toBeInstanceOf(ShapeError);
  });

  it("featureDimension / resolveKernel", () => {
    expect(featureDimension("trig", 5)).toBe(10);
    expect(featureDimension("positive", 5)).toBe(5);
    expect(caught(() => featureDimension("cos" as never, 5))).toMatchObject({ argument: "features" });
    expect(caught(() => resolveKernel({ kind: "poly" } as never, "trig", 3))).toMatchObject({ argument: "options.kernel.kind" });
  });

  it("randomFeatureAttention", () => {
    expect(caught(() => randomFeatureAttention(q, randomMatrix(5, 2, {}, [5]), v, { numFrequencies: 4 }, [1]))).toMatchObject({
      name: "ShapeError",
      argument: "keys",
      expected: "*×3 (cols = queries.cols)",
      actual: "5×2",
    });
    expect(caught(() => randomFeatureAttention(q, k, randomMatrix(4, 2, {}, [6]), { numFrequencies: 4 }, [1]))).toMatchObject({
      argument: "values",
      actual: "4×2",
    });
    expect(caught(() => randomFeatureAttention(q, k, v, { numFrequencies: 0 }, [1]))).toMatchObject({
      argument: "options.numFrequencies",
      actual: "0",
    });
    expect(caught(() => randomFeatureAttention(q, k, v, { numFrequencies: 2, mask: { kind: "dense" } as never }, [1]))).toMatchObject({
      argument: "options.mask.kind",
    });
    expect(
      caught(() => randomFeatureAttention(q, k, v, { numFrequencies: 2, mask: { kind: "padding", keyLength: 9 } }, [1])),
    ).toMatchObject({
      argument: "options.mask.keyLength",
      actual: "9",
    });
    expect(caught(() => randomFeatureAttention(q, k, v, { numFrequencies: 2, blockSize: 0 }, [1]))).toMatchObject({
      argument: "options.blockSize",
    });
    expect(
      caught(() => randomFeatureAttention(q, k, v, { numFrequencies: 2, onNonPositiveNormalizer: "eps" as never }, [1])),
    ).toMatchObject({
      argument: "options.onNonPositiveNormalizer",
    });
    expect(caught(() => randomFeatureAttention(q, k, v, { numFrequencies: 2, omega: new Matrix(3, 3) }, [1]))).toMatchObject({
      argument: "options.omega",
      expected: "2×3 (numFrequencies × queries.cols)",
      actual: "3×3",
    });
    const bad = v.clone();
    bad.set(0, 0, Number.POSITIVE_INFINITY);
    expect(caught(() => randomFeatureAttention(q, k, bad, { numFrequencies: 2 }, [1]))).toBeInstanceOf(NonFiniteError);
    expect(caught(() => randomFeatureAttention(q, k, v, null as never, [1]))).toMatchObject({ argument: "options" });
    const laplacian = {
      numFrequencies: 4,
      features: "trig",
      kernel: { kind: "laplacian", bandwidth: 1 },
      onNonPositiveNormalizer: "keep",
    } as const;
    expect(caught(() => randomFeatureAttention(q, k, v, { ...laplacian, projection: "orthogonal" }, [1]))).toMatchObject({
      argument: "options.projection",
    });
    expect(randomFeatureAttention(q, k, v, laplacian, [1]).output.shape).toBe("4×2"); // defaults to i.i.d. Cauchy
  });
});
