// What CPU a bench ran on, for its header: the ratios to NumPy and torch depend on it (an EPYC
// with AVX-512 gives OpenBLAS twice the vector width it has on one without; performance.md "Stop 21").
import { readFileSync } from "node:fs";
import { cpus } from "node:os";

/** e.g. "AMD EPYC × 2 (family 25 model 1; AVX2, no AVX-512)"; the os.cpus() model alone off Linux. */
export function hostCpu() {
  const base = `${cpus()[0]?.model ?? "?"} × ${cpus().length}`;
  try {
    const info = readFileSync("/proc/cpuinfo", "utf8");
    const field = (name) => new RegExp(`^${name}\\s*:\\s*(.*)$`, "m").exec(info)?.[1]?.trim();
    const flags = new Set((field("flags") ?? "").split(/\s+/));
    const vec = flags.has("avx512f") ? "AVX-512" : flags.has("avx2") ? "AVX2, no AVX-512" : "no AVX2";
    return `${base} (family ${field("cpu family") ?? "?"} model ${field("model") ?? "?"}; ${vec})`;
  } catch {
    return base;
  }
}
