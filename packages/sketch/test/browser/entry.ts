/**
 * What the browser-bundle test runs in a context with only browser globals (bundle.test.ts), and
 * in Node for the reference: exact attention on the WebAssembly kernels and on the scalar
 * kernels, and the main sketch entry points. Every result is returned as plain numbers so the two
 * runs can be compared exactly.
 */
import { attention, multiHeadAttention, randomMatrix, setKernelBackend, wasmSimdAvailable } from "@randattn/core";
import { createSketch, gaussianSketch, randomFeatureAttention, randomizedSvd, sampledAttention } from "@randattn/sketch";

export function run(): Record<string, number[] | boolean> {
  const q = randomMatrix(48, 16, {}, [11, "q"]);
  const k = randomMatrix(64, 16, {}, [11, "k"]);
  const v = randomMatrix(64, 8, {}, [11, "v"]);
  const previous = setKernelBackend("wasm");
  try {
    const wasm = Array.from(attention(q, k, v).data);
    setKernelBackend("scalar");
    const scalar = Array.from(attention(q, k, v).data);
    setKernelBackend("auto");
    const w = (r: number, c: number, t: string) => randomMatrix(r, c, { scale: 1 / Math.sqrt(r) }, [12, t]);
    const mha = multiHeadAttention(q, q, {
      queries: [w(16, 4, "q0"), w(16, 4, "q1")],
      keys: [w(16, 4, "k0"), w(16, 4, "k1")],
      values: [w(16, 4, "v0"), w(16, 4, "v1")],
      output: w(8, 16, "o"),
    });
    const rf = randomFeatureAttention(q, k, v, { numFrequencies: 32 }, [13, "rf"]);
    const sampled = sampledAttention(q, k, v, { samples: 16 }, [14, "s"]);
    const svd = randomizedSvd(randomMatrix(40, 24, {}, [15, "a"]), { rank: 4 }, [15, "svd"]);
    const sketched = createSketch(gaussianSketch(8, 64), [16]).sketchLeft(v);
    return {
      simd: wasmSimdAvailable(),
      wasm,
      scalar,
      multiHead: Array.from(mha.data),
      randomFeatures: Array.from(rf.output.data),
      sampled: Array.from(sampled.output.data),
      singularValues: Array.from(svd.S),
      sketch: Array.from(sketched.data),
    };
  } finally {
    setKernelBackend(previous);
  }
}
