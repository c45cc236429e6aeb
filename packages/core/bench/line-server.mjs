// A child process that answers one line on stdout for each request line on stdin — the benchmarks'
// NumPy and torch sides (numpy_attention.py here, scripts/models/bench_torch.py) — so a benchmark
// can alternate its own calls with the child's, call by call, on a host whose speed drifts.
import { spawn } from "node:child_process";
import { createInterface } from "node:readline";

/**
 * Starts `exe args` with `env` and waits for its first line. Resolves with
 * { hello, request(line) → Promise<answer line>, close(), pid }, or with { error } when the child exits
 * or fails to start before that line. A request pending when the child dies rejects with the exit
 * and the child's last stderr line.
 * @returns {Promise<{hello: string, request: (line: string) => Promise<string>, close: () => void, pid: number} | {error: string}>}
 */
export function startLineServer(exe, args, env) {
  const child = spawn(exe, args, { env, stdio: ["pipe", "pipe", "pipe"] });
  let stderr = "";
  child.stderr.on("data", (b) => {
    stderr += b;
  });
  const waiting = [];
  const fail = (why) => {
    const last = stderr.trim().split("\n").pop();
    for (const w of waiting.splice(0)) w.reject(new Error(last ? `${why}: ${last}` : why));
  };
  child.on("error", (e) => fail(e.message));
  child.on("exit", (code) => fail(`${exe} exited (${code})`));
  createInterface({ input: child.stdout }).on("line", (line) => waiting.shift()?.resolve(line));
  const next = () => new Promise((resolve, reject) => waiting.push({ resolve, reject }));
  const close = () => {
    child.stdin.end();
    child.kill();
  };
  const request = (line) => {
    const answer = next();
    child.stdin.write(`${line}\n`);
    return answer;
  };
  return next().then(
    (hello) => ({ hello, request, close, pid: child.pid }),
    (e) => {
      close();
      return { error: e.message };
    },
  );
}
