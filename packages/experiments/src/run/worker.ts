/**
 * Worker-thread entry: runs tasks sent by the pool (run/pool.ts) one at a time and posts the
 * outcomes back. The registries are imported here too, so workers see the same methods.
 */
import { parentPort } from "node:worker_threads";
import { executeTask, type TaskSpec } from "./execute.js";

parentPort?.on("message", (message: { id: number; spec: TaskSpec }) => {
  const outcome = executeTask(message.spec);
  parentPort?.postMessage({ id: message.id, outcome });
});
