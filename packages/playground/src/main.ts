/**
 * The playground page: reads the form, starts the sweep in a Web Worker, draws the figures as
 * results arrive and offers results.csv for download. `window.playground` exposes the state for
 * the headless-browser check (scripts/check-playground.mjs).
 */
import { type SweepChoice, sweepConfig } from "./sweep.js";
import type { WorkerReply } from "./worker.js";

interface PlaygroundState {
  status: "idle" | "running" | "done" | "error";
  config: unknown;
  csv: string;
  message: string;
  ms: number;
  simd: boolean;
}

const state: PlaygroundState = { status: "idle", config: null, csv: "", message: "", ms: 0, simd: false };
(window as unknown as { playground: PlaygroundState }).playground = state;

const $ = <T extends HTMLElement>(id: string) => document.getElementById(id) as T;
const numbers = (text: string) =>
  text
    .split(/[\s,]+/)
    .filter((t) => t !== "")
    .map(Number);

function choice(): SweepChoice {
  const methods = [...document.querySelectorAll<HTMLInputElement>('input[name="method"]:checked')].map(
    (i) => i.value,
  ) as SweepChoice["methods"];
  return {
    generator: $<HTMLSelectElement>("generator").value as SweepChoice["generator"],
    sizes: numbers($<HTMLInputElement>("sizes").value),
    dim: Number($<HTMLInputElement>("dim").value),
    scale: Number($<HTMLInputElement>("scale").value),
    methods,
    budgets: numbers($<HTMLInputElement>("budgets").value),
    trials: Number($<HTMLInputElement>("trials").value),
    seed: Number($<HTMLInputElement>("seed").value),
  };
}

function showConfig() {
  $("config").textContent = JSON.stringify(sweepConfig(choice()), null, 2);
}

function draw(svgs: string[]) {
  $("plots").innerHTML = svgs.map((s) => `<figure>${s}</figure>`).join("");
}

function setStatus(text: string, error = false) {
  const el = $("status");
  el.textContent = text;
  el.classList.toggle("error", error);
}

let worker: Worker | undefined;

$<HTMLFormElement>("form").addEventListener("submit", (event) => {
  event.preventDefault();
  worker?.terminate();
  const config = sweepConfig(choice());
  showConfig();
  Object.assign(state, { status: "running", config, csv: "", message: "", ms: 0 });
  $<HTMLButtonElement>("download").disabled = true;
  setStatus("Running…");
  worker = new Worker(new URL("./worker.ts", import.meta.url), { type: "module" });
  worker.onmessage = (e: MessageEvent<WorkerReply>) => {
    const m = e.data;
    if (m.type === "error") {
      Object.assign(state, { status: "error", message: m.message });
      setStatus(m.message, true);
      return;
    }
    draw(m.svgs);
    state.csv = m.csv;
    $<HTMLProgressElement>("progress").value = m.done / m.total;
    $<HTMLButtonElement>("download").disabled = false;
    const failed = m.failed > 0 ? `, ${m.failed} failed` : "";
    if (m.type === "progress") setStatus(`Running… ${m.done} of ${m.total} tasks${failed}`);
    else {
      Object.assign(state, { status: "done", ms: m.ms, simd: m.simd });
      setStatus(
        `Done: ${m.total} tasks${failed} in ${(m.ms / 1000).toFixed(2)} s on the ${m.simd ? "WebAssembly SIMD128" : "scalar JavaScript"} kernels.`,
      );
    }
  };
  worker.onerror = (e) => {
    Object.assign(state, { status: "error", message: e.message });
    setStatus(e.message, true);
  };
  worker.postMessage({ config });
});

$<HTMLButtonElement>("download").addEventListener("click", () => {
  const url = URL.createObjectURL(new Blob([state.csv], { type: "text/csv" }));
  const a = document.createElement("a");
  a.href = url;
  a.download = "results.csv";
  a.click();
  URL.revokeObjectURL(url);
});

$("form").addEventListener("input", showConfig);
showConfig();
