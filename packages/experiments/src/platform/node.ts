/**
 * Node built-ins reached at call time through `process.getBuiltinModule` (Node ≥ 20.16) instead
 * of static `node:` imports, so the modules that read files only when a config asks for it (the
 * `npy` generator, config files, `mathjs` for expressions) also load in a browser or Web Worker
 * (`@randattn/experiments/browser`). There, calling one of these throws a ValueError naming what
 * needed the file system.
 */
import { ValueError } from "@randattn/core";
import { builtinModule } from "./builtin.js";

function builtin<T>(id: string, argument: string): T {
  const module = builtinModule<T>(id);
  if (module === undefined) {
    throw new ValueError(argument, `Node.js ≥ 20.16 (${id}; not available in a browser)`, "a runtime without Node built-ins");
  }
  return module;
}

/** `node:fs`. @throws ValueError naming `argument` outside Node. */
export const nodeFs = (argument: string): typeof import("node:fs") => builtin("node:fs", argument);
/** `node:path`. @throws ValueError naming `argument` outside Node. */
export const nodePath = (argument: string): typeof import("node:path") => builtin("node:path", argument);
/** `node:module`. @throws ValueError naming `argument` outside Node. */
export const nodeModule = (argument: string): typeof import("node:module") => builtin("node:module", argument);

/** `node:url`. @throws ValueError naming `argument` outside Node. */
export const nodeUrl = (argument: string): typeof import("node:url") => builtin("node:url", argument);

/** Whether Node built-ins are reachable (false in a browser). */
export function hasNodeBuiltins(): boolean {
  return builtinModule("node:fs") !== undefined;
}
