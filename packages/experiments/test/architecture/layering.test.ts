/**
 * The experiments package's internal layers (docs/ARCHITECTURE.md, "experiments layers"): every
 * relative import points to the same layer or one below, and no two modules import each other
 * through any chain. The checker is tested on synthetic graphs so it can fail.
 */
import { readdirSync, readFileSync, statSync } from "node:fs";
import { join, relative, resolve, dirname } from "node:path";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";

/** Bottom to top. `cli` is src/cli.ts, src/cli/ and the barrels (index.ts, browser.ts, internal.ts). */
export const LAYERS = ["platform", "base", "registry", "metrics", "config", "plan", "output", "figures", "run", "cli"] as const;

const SRC = fileURLToPath(new URL("../../src", import.meta.url));

function sources(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const p = join(dir, name);
    return statSync(p).isDirectory() ? sources(p) : p.endsWith(".ts") ? [p] : [];
  });
}

/** Module (path relative to src, no extension) → the modules it imports (type-only imports included). */
function importGraph(): Map<string, string[]> {
  const graph = new Map<string, string[]>();
  for (const file of sources(SRC)) {
    const text = readFileSync(file, "utf8");
    const deps: string[] = [];
    for (const m of text.matchAll(/(?:from|import)\s*\(?\s*"(\.[^"]+)"/g)) {
      deps.push(relative(SRC, resolve(dirname(file), m[1])).replace(/\.js$/, ""));
    }
    graph.set(relative(SRC, file).replace(/\.ts$/, ""), deps);
  }
  return graph;
}

function layerOf(module: string): number {
  const top = module.split("/")[0];
  // cli.ts, cli/, and the barrels index.ts / browser.ts are the top.
  const i = LAYERS.indexOf((["cli", "index", "browser", "internal"].includes(top) ? "cli" : top) as (typeof LAYERS)[number]);
  return i;
}

/** Upward imports and cycles of a module graph. */
export function layeringViolations(graph: ReadonlyMap<string, readonly string[]>): string[] {
  const out: string[] = [];
  for (const [from, deps] of graph) {
    const lf = layerOf(from);
    if (lf < 0) out.push(`${from}: not in a layer (${LAYERS.join(" → ")})`);
    for (const to of deps) {
      const lt = layerOf(to);
      if (lt > lf) out.push(`upward import: ${from} (${LAYERS[lf]}) → ${to} (${LAYERS[lt]})`);
    }
  }
  // Cycles (also inside one layer): depth-first search with colours.
  const state = new Map<string, 1 | 2>();
  const stack: string[] = [];
  const visit = (m: string) => {
    state.set(m, 1);
    stack.push(m);
    for (const d of graph.get(m) ?? []) {
      if (!graph.has(d)) continue;
      if (state.get(d) === 1) out.push(`cycle: ${[...stack.slice(stack.indexOf(d)), d].join(" → ")}`);
      else if (!state.has(d)) visit(d);
    }
    stack.pop();
    state.set(m, 2);
  };
  for (const m of [...graph.keys()].sort()) if (!state.has(m)) visit(m);
  return out;
}

describe("experiments layering", () => {
  it("src/ has no upward import and no cycle", () => {
    const graph = importGraph();
    expect(graph.size).toBeGreaterThan(30);
    expect(layeringViolations(graph)).toEqual([]);
  });

  it("the checker reports an upward import and a cycle", () => {
    expect(
      layeringViolations(
        new Map([
          ["registry/x", ["run/y"]],
          ["run/y", []],
        ]),
      ),
    ).toEqual(["upward import: registry/x (registry) → run/y (run)"]);
    const cyc = layeringViolations(
      new Map([
        ["plan/a", ["plan/b"]],
        ["plan/b", ["plan/a"]],
      ]),
    );
    expect(cyc).toEqual(["cycle: plan/a → plan/b → plan/a"]);
  });
});
