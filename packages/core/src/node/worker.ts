/**
 * Worker-thread entry of `parallel.ts`: receives a `HeadTask` (SharedArrayBuffers + plain data),
 * sets the same kernel backend as the caller, computes its heads into the shared concat buffer and
 * replies. Imports only fast/ and linalg/ modules (not the package barrel), so it starts quickly.
 */
import { parentPort } from "node:worker_threads";
import { RandAttnError } from "../errors.js";
import { type KernelBackend, setKernelBackend } from "../kernels/gemm.js";
import { type HeadReply, type HeadTask, runHeadTask } from "./parallel.js";

const port = parentPort;
if (port) {
  port.on("message", (task: HeadTask) => {
    let reply: HeadReply;
    try {
      setKernelBackend(task.backend as KernelBackend);
      runHeadTask(task);
      reply = { id: task.id };
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
