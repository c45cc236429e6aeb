import { execFileSync } from "node:child_process";
import { fileURLToPath } from "node:url";
import { ValueError, getKernelBackend, setKernelBackend } from "@randattn/core";
import { AUTO_MIN_WORK, kernelBackendFor } from "@randattn/core/internal";
import { afterAll, describe, expect, it } from "vitest";

const previous = getKernelBackend();
afterAll(() => {
  setKernelBackend(previous);
});

describe("kernel backend selection", () => {
  it("auto: scalar for tiny or single-row/column products, WebAssembly otherwise", () => {
    setKernelBackend("auto");
    expect(kernelBackendFor(2, 2, 2)).toBe("scalar");
    expect(kernelBackendFor(1, 1024, 1024)).toBe("scalar");
    expect(kernelBackendFor(1024, 1024, 1)).toBe("scalar");
    expect(kernelBackendFor(64, 64, 64)).toBe("wasm");
    expect(64 ** 3).toBeGreaterThanOrEqual(AUTO_MIN_WORK);
  });

  it("forcing either path overrides the size rule; set returns the previous setting", () => {
    expect(setKernelBackend("scalar")).toBe("auto");
    expect(kernelBackendFor(512, 512, 512)).toBe("scalar");
    expect(setKernelBackend("wasm")).toBe("scalar");
    expect(kernelBackendFor(1, 1, 1)).toBe("wasm");
    expect(getKernelBackend()).toBe("wasm");
  });

  it("rejects an unknown backend, naming the argument, expected and actual", () => {
    expect(() => setKernelBackend("gpu" as never)).toThrow(ValueError);
    expect(() => setKernelBackend("gpu" as never)).toThrow(/backend: expected one of "scalar", "wasm", "auto", got gpu/);
  });

  it("reads RANDATTN_KERNEL_BACKEND at start-up (compiled build)", () => {
    const gemm = fileURLToPath(new URL("../../dist/kernels/gemm.js", import.meta.url));
    const script = `import(${JSON.stringify(gemm)}).then((g) => console.log(g.getKernelBackend(), g.kernelBackendFor(512, 512, 512)))`;
    const run = (value: string) =>
      execFileSync(process.execPath, ["-e", script], {
        env: { ...process.env, RANDATTN_KERNEL_BACKEND: value },
        encoding: "utf8",
        stdio: ["ignore", "pipe", "pipe"],
      }).trim();
    expect(run("scalar")).toBe("scalar scalar");
    expect(run("")).toBe("auto wasm");
    expect(() => run("fast")).toThrow(/RANDATTN_KERNEL_BACKEND: expected one of/);
  });
});
