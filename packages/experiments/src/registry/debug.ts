/**
 * Fault-injection methods for the reliability tests (issue 6). Registered only when the
 * environment variable RANDATTN_DEBUG_METHODS=1, so shipped configs can never name them.
 */
import { NumericalError } from "@randattn/core";
import { exactAttention, exactCost } from "./exact.js";
import type { MethodDefinition } from "./types.js";

/** Whether the debug methods are registered in this process (and its workers). Never in a browser. */
export function debugMethodsEnabled(): boolean {
  // `globalThis.process`: there is no `process` in a browser or Web Worker (@randattn/experiments/browser).
  const env = (globalThis as { process?: { env?: Record<string, string | undefined> } }).process?.env;
  return env?.RANDATTN_DEBUG_METHODS === "1";
}

function sleep(ms: number): void {
  if (ms > 0) Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, ms);
}

/** A debug method that runs `inject` on trial `onTrial` (every trial when -1), else exact attention. */
function onTrialMethod(name: string, description: string, inject: () => void): MethodDefinition {
  return {
    name,
    description,
    family: "debug",
    paramsSchema: {
      type: "object",
      properties: { onTrial: { type: "integer", minimum: -1, maximum: 1_000_000, default: -1, description: "-1: every trial" } },
      additionalProperties: false,
    },
    exposesWeights: false,
    estimateCost: (problem) => exactCost(problem, true),
    run(problem, params, context, seed) {
      const trial = seed[seed.length - 1];
      if (params.onTrial === -1 || params.onTrial === trial) inject();
      return exactAttention(problem, context.wantWeights);
    },
  };
}

/** The debug methods (empty unless enabled). */
export function debugMethods(): MethodDefinition[] {
  if (!debugMethodsEnabled()) return [];
  return [
    {
      name: "debug-sleep",
      description: "Exact attention after sleeping `ms` milliseconds (slow cells for kill tests).",
      family: "debug",
      paramsSchema: {
        type: "object",
        properties: { ms: { type: "integer", minimum: 0, maximum: 60_000, default: 20 } },
        additionalProperties: false,
      },
      exposesWeights: true,
      estimateCost: (problem) => exactCost(problem, true),
      run(problem, params, context, _seed) {
        sleep(params.ms as number);
        return exactAttention(problem, context.wantWeights, context.weightsBuffer);
      },
    },
    onTrialMethod("debug-fail", "Throws a NumericalError on trial `onTrial` (every trial when -1).", () => {
      throw new NumericalError("debug-fail", "no failure", "an injected failure");
    }),
    onTrialMethod("debug-crash", "Kills its worker thread (process.exit inside the worker) on trial `onTrial` — a crash mid-cell.", () =>
      process.exit(70),
    ),
  ];
}
