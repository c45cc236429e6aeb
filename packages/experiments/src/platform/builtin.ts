/**
 * Node's `process.getBuiltinModule` (Node ≥ 20.16), or undefined where there is none (a browser, a Web
 * Worker). This module imports nothing: the CLI's entry reaches `node:fs` through it (platform/bundle.ts)
 * before it has loaded anything else, and platform/node.ts builds its typed errors on it.
 */
export function builtinModule<T>(id: string): T | undefined {
  const get = (globalThis as { process?: { getBuiltinModule?: (id: string) => unknown } }).process?.getBuiltinModule;
  return typeof get === "function" ? (get(id) as T) : undefined;
}
