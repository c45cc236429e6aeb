/**
 * Core's layering (issue 9, docs/ARCHITECTURE.md): every import points DOWN the list below, and no
 * module imports itself through a cycle. A layer is a top-level folder of src/ (or a root file).
 * Imports inside one folder are free, but the file graph must still be acyclic.
 *
 * Parsed with TypeScript's `preProcessFile` (static imports, re-exports, `import()` and
 * `import type` alike — a type-only arrow is still a dependency of the design).
 */
import { readFileSync, readdirSync } from "node:fs";
import { dirname, join, relative, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import ts from "typescript";
import { describe, expect, it } from "vitest";

const SRC = fileURLToPath(new URL("../src/", import.meta.url));

/** Bottom → top. A layer may import only layers listed BEFORE it (and its own folder). */
export const LAYERS: readonly (readonly string[])[] = [
  ["errors"],
  ["matrix"],
  ["validate"],
  ["scratch"], // work buffers reused between calls (issue 14: fresh arrays cost their page faults)
  ["kernels"], // WebAssembly kernels (GEMM, SIMD exp, fused softmax), below linalg
  ["linalg"], // products (dispatching to kernels/), float32 products, row/column ops
  ["norm"], // LayerNorm / RMSNorm (below latent/, whose MLA latent norm is an RMSNorm)
  ["random"],
  ["accounting"],
  ["attention"], // exact attention, incl. the float32/float64 fast drivers (attention/fast.ts)
  ["position"],
  ["latent"],
  ["cache"],
  ["tokens"],
  ["layers"],
  ["model"],
  ["io"],
  ["checkpoint"], // safetensors, HF configs (bytes only)
  ["pretrained"], // HF causal LMs built from the core's pieces
  ["node"], // @randattn/core/node: everything that needs Node built-ins (files, zip, worker pool)
  ["index", "internal"], // the barrels
];

function sourceFiles(dir: string): string[] {
  const out: string[] = [];
  for (const e of readdirSync(dir, { withFileTypes: true })) {
    const p = join(dir, e.name);
    if (e.isDirectory()) out.push(...sourceFiles(p));
    else if (p.endsWith(".ts") && !p.endsWith(".d.ts")) out.push(p);
  }
  return out;
}

/** The layer of a src-relative path: its top folder, or the root file's name. */
export function layerOf(rel: string): string {
  return rel.includes("/") ? rel.split("/")[0] : rel.replace(/\.ts$/, "");
}

/** Relative imports of every file: src-relative path → src-relative targets. */
export function importGraph(files: readonly string[], read: (file: string) => string, root: string): Map<string, string[]> {
  const graph = new Map<string, string[]>();
  for (const f of files) {
    const rel = relative(root, f);
    const targets: string[] = [];
    for (const { fileName } of ts.preProcessFile(read(f), true, true).importedFiles) {
      if (!fileName.startsWith(".")) continue; // packages (node:, ml-matrix, …)
      targets.push(relative(root, resolve(dirname(f), fileName)).replace(/\.js$/, ".ts"));
    }
    graph.set(rel, targets);
  }
  return graph;
}

/** Upward (or sideways across layers of one rank) imports, and unknown layers. */
export function layeringViolations(graph: Map<string, string[]>, layers: readonly (readonly string[])[]): string[] {
  const rank = new Map<string, number>();
  layers.forEach((group, i) => {
    for (const l of group) rank.set(l, i);
  });
  const problems: string[] = [];
  for (const [from, targets] of graph) {
    const a = layerOf(from);
    if (!rank.has(a)) problems.push(`${from}: layer "${a}" is not in LAYERS (add it where it belongs)`);
    for (const to of targets) {
      const b = layerOf(to);
      if (a === b) continue;
      if (!rank.has(b)) continue; // reported as its own file
      if (rank.get(b)! >= rank.get(a)!) problems.push(`${from} → ${to}: "${a}" may not import "${b}" (not below it)`);
    }
  }
  return problems;
}

/** Every import cycle of the file graph, each once (as a path a → … → a). */
export function importCycles(graph: Map<string, string[]>): string[] {
  const state = new Map<string, "active" | "done">();
  const stack: string[] = [];
  const cycles: string[] = [];
  const visit = (n: string) => {
    state.set(n, "active");
    stack.push(n);
    for (const m of graph.get(n) ?? []) {
      if (!graph.has(m)) continue;
      if (state.get(m) === "active") cycles.push([...stack.slice(stack.indexOf(m)), m].join(" → "));
      else if (!state.has(m)) visit(m);
    }
    stack.pop();
    state.set(n, "done");
  };
  for (const n of [...graph.keys()].sort()) if (!state.has(n)) visit(n);
  return cycles;
}

describe("core layering", () => {
  const files = sourceFiles(SRC);
  const graph = importGraph(files, (f) => readFileSync(f, "utf8"), SRC);

  it("parses the real import graph (sanity: known arrows are seen)", () => {
    expect(graph.get("linalg/matmul.ts")).toContain("kernels/gemm.ts");
    expect(graph.get("validate.ts")).toContain("matrix.ts");
    expect(graph.get("attention/rows.ts")).toContain("attention/fast.ts");
  });

  it("every import points down the layer list", () => {
    expect(layeringViolations(graph, LAYERS)).toEqual([]);
  });

  it("no import cycle", () => {
    expect(importCycles(graph)).toEqual([]);
  });

  it("the checks fail on an upward import and on a cycle (the test can fail)", () => {
    const upward = new Map(graph);
    upward.set("linalg/matmul.ts", [...graph.get("linalg/matmul.ts")!, "attention/fast.ts"]);
    expect(layeringViolations(upward, LAYERS)).toEqual([
      'linalg/matmul.ts → attention/fast.ts: "linalg" may not import "attention" (not below it)',
    ]);
    const cyclic = new Map(graph);
    cyclic.set("attention/fast.ts", [...graph.get("attention/fast.ts")!, "attention/rows.ts"]);
    expect(importCycles(cyclic)).toEqual(["attention/rows.ts → attention/fast.ts → attention/rows.ts"]);
  });
});
