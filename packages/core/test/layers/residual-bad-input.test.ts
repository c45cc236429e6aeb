import { describe, expect, it } from "vitest";
import { Matrix, ShapeError, ValueError, initLayerNorm, initSublayerNorms, residualBlock, sliceCols } from "@randattn/core";

describe("residualBlock rejects bad input", () => {
  const x = Matrix.from(3, 4, (i, j) => i - j);
  const id = (h: Matrix) => h;
  it("sublayer output shape ≠ x shape", () => {
    expect(() => residualBlock(x, (h) => sliceCols(h, 0, 2), "pre", initSublayerNorms("pre", "layer", 4))).toThrow(ShapeError);
    expect(() => residualBlock(x, (h) => sliceCols(h, 0, 2), "pre", initSublayerNorms("pre", "layer", 4))).toThrow(
      "sublayer(x): expected 3×4 (the shape of x, for the skip connection), got 3×2",
    );
  });
  it("missing or extra norms for the placement, bad placement, wrong width", () => {
    expect(() => residualBlock(x, id, "peri", { before: initLayerNorm(4) })).toThrow(
      'norms.after: expected norm parameters (placement "peri" uses it), got undefined',
    );
    expect(() => residualBlock(x, id, "post", { before: initLayerNorm(4), after: initLayerNorm(4) })).toThrow(
      'norms.before: expected undefined (placement "post" has no before-norm), got layer norm parameters',
    );
    expect(() => residualBlock(x, id, "sandwich" as never, {})).toThrow(ValueError);
    expect(() => residualBlock(x, id, "pre", { before: initLayerNorm(5) })).toThrow(
      "norms.before.gain: expected length 4 (the model width), got length 5",
    );
  });
});
