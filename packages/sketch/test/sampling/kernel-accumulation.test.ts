// sampledAttention's query-free schemes and sampledValueProduct's query-free branch compute
// out = Σ_t coef_t · V[j_t, :] with `sampledProduct` (sampling/accumulate.ts): on the WebAssembly
// GEMM when that reproduces the sequential loop's bits (s ≤ GEMM_KC), in the loop otherwise.
// Checked against that loop written out here on the draw the call reports (indices, weights) and
// the scores of the sampled keys, bit for bit: s below, at and above GEMM_KC (the last takes the
// loop), and with zero coefficients (a ReLU dot kernel zeroes about half the scores; the loop skips
// them, the kernel adds 0 · v = ±0).
import { attentionScores, attentionWeights, getKernelBackend, randomMatrix, selectRows, setKernelBackend } from "@randattn/core";
import { GEMM_KC } from "@randattn/core/internal";
import { type SamplingDesign, sampledAttention, sampledValueProduct } from "@randattn/sketch";
import { afterAll, describe, expect, it } from "vitest";

const previous = getKernelBackend();
afterAll(() => {
  setKernelBackend(previous);
});

describe("sampledAttention (estimated normalizer): the accumulation's bits are the sequential loop's", () => {
  const [nQ, n, d, dV] = [37, 300, 16, 20];
  const q = randomMatrix(nQ, d, { scale: 0.7 }, ["acc", "Q"]);
  const k = randomMatrix(n, d, { scale: 0.7 }, ["acc", "K"]);
  const v = randomMatrix(n, dV, {}, ["acc", "V"]);
  const relu = { kind: "dot" as const, f: (x: number) => Math.max(0, x), name: "relu" };

  const cases: [number, "uniform" | "value-norm", "softmax" | "relu", SamplingDesign][] = [];
  for (const s of [8, 100, GEMM_KC, GEMM_KC + 1, 400])
    for (const scheme of ["uniform", "value-norm"] as const) cases.push([s, scheme, "softmax", "with-replacement"]);
  cases.push(
    [64, "uniform", "relu", "with-replacement"],
    [64, "value-norm", "relu", "horvitz-thompson"],
    [200, "uniform", "softmax", "des-raj"],
  );

  for (const backend of ["wasm", "auto"] as const) {
    for (const [samples, scheme, kernelName, design] of cases) {
      it(`${backend}: s = ${samples}, ${scheme}, ${kernelName} kernel, ${design}`, () => {
        setKernelBackend(backend);
        const kernel = kernelName === "relu" ? relu : undefined;
        const r = sampledAttention(q, k, v, { samples, scheme, kernel, design }, ["acc", samples, scheme, design]);
        const s = r.indices.length;
        const { scores } = attentionScores(q, selectRows(k, r.indices), { kernel, onEmptyRow: "zero" });
        const sv = selectRows(v, r.indices);
        let zeros = 0;
        const ref = new Float64Array(nQ * dV);
        for (let i = 0; i < nQ; i++) {
          let zhat = 0;
          for (let t = 0; t < s; t++) {
            const coef = r.weights[t] * scores.data[i * s + t];
            if (coef === 0) {
              zeros++;
              continue;
            }
            zhat += coef;
            for (let c = 0; c < dV; c++) ref[i * dV + c] += coef * sv.data[t * dV + c];
          }
          for (let c = 0; c < dV; c++) ref[i * dV + c] *= 1 / zhat;
        }
        if (kernelName === "relu") expect(zeros).toBeGreaterThan(nQ * s * 0.3);
        expect(r.output.data.every((x, i) => Object.is(x, ref[i]))).toBe(true);
      });
    }
  }
});

describe("sampledValueProduct (query-free schemes, normalize none): the sequential loop's bits", () => {
  const [nQ, n, d, dV] = [29, 280, 8, 24];
  const q = randomMatrix(nQ, d, {}, ["svp", "Q"]);
  const k = randomMatrix(n, d, {}, ["svp", "K"]);
  const v = randomMatrix(n, dV, {}, ["svp", "V"]);
  const w = attentionWeights(q, k);
  for (const backend of ["wasm", "auto"] as const) {
    for (const samples of [16, GEMM_KC, GEMM_KC + 40]) {
      for (const scheme of ["uniform", "value-norm", "optimal"] as const) {
        it(`${backend}: s = ${samples}, ${scheme}`, () => {
          setKernelBackend(backend);
          const r = sampledValueProduct(w, v, { samples, scheme }, ["svp", samples, scheme]);
          const s = r.indices.length;
          const ref = new Float64Array(nQ * dV);
          for (let i = 0; i < nQ; i++) {
            for (let t = 0; t < s; t++) {
              const coef = r.weights[t] * w.data[i * n + r.indices[t]];
              for (let c = 0; c < dV; c++) ref[i * dV + c] += coef * v.data[r.indices[t] * dV + c];
            }
          }
          expect(r.output.data.every((x, i) => Object.is(x, ref[i]))).toBe(true);
        });
      }
    }
  }
});
