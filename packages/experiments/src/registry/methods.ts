/**
 * The method registry: exact methods, accounting methods, sketch adapters (sketch-adapters.ts) and,
 * when enabled, the fault-injection methods (debug.ts). Worker threads import this same module, so
 * the main thread and every worker see the same registry.
 */
import { ValueError } from "@randattn/core";
import { kvCache } from "./accounting.js";
import { debugMethods } from "./debug.js";
import { kvCacheDecode } from "./decode.js";
import { exact, exactStreaming } from "./exact.js";
import { latentOnline } from "./latent-online.js";
import { sketchMethods } from "./sketch-adapters.js";
import type { MethodDefinition } from "./types.js";

const METHODS = new Map<string, MethodDefinition>();

/**
 * Adds a method to the registry (the registration point for sketch adapters).
 * @throws ValueError when the name is taken or not kebab-case.
 */
export function registerMethod(def: MethodDefinition): void {
  if (!/^[a-z][a-z0-9-]*$/.test(def.name)) throw new ValueError("method.name", "a kebab-case name", JSON.stringify(def.name));
  if (METHODS.has(def.name)) throw new ValueError("method.name", "a name not yet registered", JSON.stringify(def.name));
  METHODS.set(def.name, def);
}

for (const def of [exact, exactStreaming, kvCache, kvCacheDecode, latentOnline, ...sketchMethods(), ...debugMethods()]) registerMethod(def);

/**
 * The method registered as `name`.
 * @throws ValueError listing the registered names.
 */
export function getMethod(name: string, argument = "method"): MethodDefinition {
  const def = METHODS.get(name);
  if (!def) throw new ValueError(argument, `one of ${[...METHODS.keys()].join(", ")}`, JSON.stringify(name));
  return def;
}

/** All registered methods, by name. */
export function listMethods(): MethodDefinition[] {
  return [...METHODS.values()].sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
}
