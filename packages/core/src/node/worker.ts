/**
 * Worker-thread entry of `parallel.ts` and `parallel-attention.ts`: receives a `HeadTask` (heads of
 * multi-head attention) or a `RowTask` (a block of query rows of one attention call) — plain data
 * and SharedArrayBuffers — sets the same kernel backend and GEMM arithmetic as the caller, computes
 * into the shared output and replies. Imports only kernel, mask and linalg modules (not the package barrel), so it
 * starts quickly.
 */
import { parentPort } from "node:worker_threads";
import { RandAttnError } from "../errors.js";
import { type KernelBackend, setKernelArithmetic, setKernelBackend } from "../kernels/gemm.js";
import { type HeadReply, type HeadTask, runHeadTask } from "./parallel.js";
import { type RowTask, runRowTask } from "./row-task.js";

const port = parentPort;
if (port) {
  port.on("message", (task: HeadTask | RowTask) => {
    let reply: HeadReply;
    try {
      setKernelBackend(task.backend as KernelBackend);
      setKernelArithmetic(task.arithmetic);
      if (task.kind === "rows") reply = { id: task.id, fused: runRowTask(task) };
      else {
        runHeadTask(task);
        reply = { id: task.id };
      }
    } catch (e) {
      const err = e instanceof Error ? e : new Error(String(e));
      reply = {
        id: task.id,
        error:
          err instanceof RandAttnError
            ? { name: err.name, argument: err.argument, expected: err.expected, actual: err.actual, message: err.message }
            : { name: err.name, message: err.message },
      };
    }
    port.postMessage(reply);
  });
}
