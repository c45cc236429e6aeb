#!/usr/bin/env node
/**
 * Issue 9 playground check, in a real headless Chromium (Debian's `chromium`, installed here when
 * missing, driven by playwright-core):
 *  1. builds packages/playground with vite and serves it on 127.0.0.1;
 *  2. runs a small sweep from the page (Web Worker, WebAssembly kernels) and waits for the plots;
 *  3. runs the same config with the Node CLI and compares results.csv field by field: every
 *     non-numeric field equal, every number equal within a relative TOLERANCE (reported: how many
 *     are bit-identical and the largest relative difference);
 *  4. measures how often Chromium's and Node's Math.exp/log/sin/cos/pow differ in the last bit;
 *  5. saves a 1400-px-wide screenshot (argument `--screenshot PATH`, default in the temp folder).
 * Exits 1 on any failure. Needs the packages built (`pnpm run build`).
 */
import { execFileSync, spawnSync } from "node:child_process";
import { existsSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs";
import { createServer } from "node:http";
import { tmpdir } from "node:os";
import { extname, join, normalize } from "node:path";
import { fileURLToPath } from "node:url";
import { chromium } from "playwright-core";

/**
 * Relative tolerance for numbers: Chromium and Node run the same JavaScript on the same V8 design,
 * but their libm-backed Math.exp/log/sin/cos/pow may round differently in the last bit (measured
 * below), and one such bit in a softmax moves every later digit by ~1e-16 relative.
 */
const TOLERANCE = 1e-12;
const root = fileURLToPath(new URL("..", import.meta.url));
const CHROMIUM = "/usr/bin/chromium";
const t0 = performance.now();
const ms = (t) => `${((performance.now() - t) / 1000).toFixed(1)} s`;
const args = process.argv.slice(2);
const tmp = mkdtempSync(join(tmpdir(), "randattn-playground-"));
const screenshot = args.includes("--screenshot") ? args[args.indexOf("--screenshot") + 1] : join(tmp, "playground.png");

function fail(message) {
  console.error(`check-playground: FAIL — ${message}`);
  process.exitCode = 1;
}

// 1. Chromium.
if (!existsSync(CHROMIUM)) {
  const t = performance.now();
  console.log("check-playground: installing Debian's chromium (apt-get)…");
  const opts = { stdio: "inherit", env: { ...process.env, DEBIAN_FRONTEND: "noninteractive" } };
  // Another apt-get may hold the dpkg lock: wait for it rather than fail.
  execFileSync("apt-get", ["-o", "DPkg::Lock::Timeout=600", "update", "-qq"], opts);
  execFileSync("apt-get", ["-o", "DPkg::Lock::Timeout=600", "install", "-y", "-qq", "--no-install-recommends", "chromium"], opts);
  console.log(`check-playground: chromium installed in ${ms(t)}`);
}

// 2. Build the page.
let t = performance.now();
execFileSync(process.execPath, [join(root, "node_modules/vite/bin/vite.js"), "build", "--logLevel", "error"], {
  cwd: join(root, "packages/playground"),
  stdio: "inherit",
});
console.log(`check-playground: page built in ${ms(t)}`);
const dist = join(root, "packages/playground/dist");
const TYPES = { ".html": "text/html", ".js": "text/javascript", ".css": "text/css", ".svg": "image/svg+xml", ".wasm": "application/wasm" };
const server = createServer((req, res) => {
  const path = normalize(join(dist, decodeURIComponent(new URL(req.url ?? "/", "http://x").pathname)));
  const file = path.endsWith("/") ? join(path, "index.html") : path;
  if (!file.startsWith(dist) || !existsSync(file) || !statSync(file).isFile()) {
    res.writeHead(404).end();
    return;
  }
  res.writeHead(200, { "content-type": TYPES[extname(file)] ?? "application/octet-stream" }).end(readFileSync(file));
});
await new Promise((resolve) => server.listen(0, "127.0.0.1", resolve));
const url = `http://127.0.0.1:${server.address().port}/`;

// The small sweep, as the form's fields.
const FORM = { generator: "gaussian", sizes: "64, 128", dim: "8", scale: "0.5", budgets: "8, 16, 32", trials: "2", seed: "2026" };
const METHODS = ["exact", "row-sampling", "random-features", "top-k"];

const profile = join(tmp, "profile");
const context = await chromium.launchPersistentContext(profile, {
  executablePath: CHROMIUM,
  headless: true,
  args: [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
  ],
  viewport: { width: 1400, height: 1000 },
});
try {
  const page = context.pages()[0] ?? (await context.newPage());
  const pageErrors = [];
  page.on("pageerror", (e) => pageErrors.push(String(e)));
  page.on("console", (m) => m.type() === "error" && pageErrors.push(m.text()));
  await page.goto(url);
  t = performance.now();
  await page.selectOption("#generator", FORM.generator);
  for (const id of ["sizes", "dim", "scale", "budgets", "trials", "seed"]) await page.fill(`#${id}`, FORM[id]);
  for (const m of METHODS) await page.check(`input[name="method"][value="${m}"]`);
  await page.click("#run");
  await page.waitForFunction(() => ["done", "error"].includes(window.playground.status), null, { timeout: 120_000 });
  const state = await page.evaluate(() => window.playground);
  if (state.status !== "done") throw new Error(`the page reported: ${state.message}`);
  console.log(
    `check-playground: sweep in the browser: ${(state.ms / 1000).toFixed(2)} s in the worker (${state.simd ? "WebAssembly SIMD128" : "scalar"} kernels), ${ms(t)} with page work`,
  );
  if (!state.simd) fail("the worker did not run the WebAssembly kernels");
  const figures = await page.$$eval("#plots figure svg", (svgs) => svgs.map((s) => s.querySelectorAll("path, polyline, circle").length));
  if (figures.length !== 2 || figures.some((n) => n < 4)) fail(`expected 2 drawn figures, got ${JSON.stringify(figures)} marks`);
  else console.log(`check-playground: ${figures.length} plots drawn (${figures.join(", ")} marks)`);
  if (pageErrors.length > 0) fail(`page errors: ${pageErrors.join(" | ")}`);
  const download = page.waitForEvent("download");
  await page.click("#download");
  const downloaded = readFileSync(await (await download).path(), "utf8");
  if (downloaded !== state.csv) fail("the downloaded results.csv differs from the page's results");

  // 3. The same config in Node, through the CLI.
  t = performance.now();
  const configPath = join(tmp, "playground.json");
  writeFileSync(configPath, JSON.stringify(state.config, null, 2));
  const cli = spawnSync(
    process.execPath,
    [
      join(root, "packages/experiments/dist/cli.js"),
      "run",
      configPath,
      "--out",
      join(tmp, "out"),
      "--workers",
      "0",
      "--no-report",
      "--progress",
      "none",
    ],
    { encoding: "utf8" },
  );
  if (cli.status !== 0) throw new Error(`randattn run failed: ${cli.stderr}`);
  const nodeCsv = readFileSync(join(tmp, "out/playground/results.csv"), "utf8");
  console.log(`check-playground: the same config with the Node CLI in ${ms(t)}`);
  compare(state.csv, nodeCsv);

  // 4. Last-bit differences of the math library, same inputs in both runtimes.
  const probe = () => {
    const out = {};
    const xs = Array.from({ length: 20000 }, (_, i) => ((i * 2654435761) % 1000003) / 1000003);
    const fns = {
      exp: (x) => Math.exp(40 * x - 20),
      log: (x) => Math.log(1e-6 + 1e3 * x),
      sin: (x) => Math.sin(100 * x),
      cos: (x) => Math.cos(100 * x),
      // biome-ignore lint/style/useExponentiationOperator: the probe measures Math.pow itself
      pow: (x) => Math.pow(1 + x, 7.3),
    };
    for (const [name, f] of Object.entries(fns)) out[name] = xs.map(f);
    return out;
  };
  const inBrowser = await page.evaluate(`(${probe.toString()})()`);
  const inNode = probe();
  const diffs = Object.entries(inNode).map(
    ([name, values]) => `${name} ${values.filter((v, i) => v !== inBrowser[name][i]).length}/${values.length}`,
  );
  console.log(`check-playground: Math results differing between Chromium and Node: ${diffs.join(", ")}`);

  // 5. Screenshot.
  await page.setViewportSize({ width: 1400, height: 1000 });
  await page.screenshot({ path: screenshot, fullPage: true });
  console.log(`check-playground: screenshot ${screenshot}`);
} catch (e) {
  fail(e instanceof Error ? e.message : String(e));
} finally {
  await context.close();
  server.close();
  if (!args.includes("--screenshot")) rmSync(tmp, { recursive: true, force: true });
}
console.log(`check-playground: ${process.exitCode ? "FAILED" : "ok"} in ${ms(t0)}`);

function compare(browserCsv, nodeCsv) {
  const a = browserCsv.trimEnd().split("\n");
  const b = nodeCsv.trimEnd().split("\n");
  if (a[0] !== b[0]) return fail(`headers differ:\n  browser ${a[0]}\n  node    ${b[0]}`);
  if (a.length !== b.length) return fail(`${a.length - 1} rows in the browser, ${b.length - 1} in Node`);
  let identical = 0;
  let close = 0;
  let maxRel = 0;
  const header = a[0].split(",");
  for (let r = 1; r < a.length; r++) {
    const x = a[r].split(",");
    const y = b[r].split(",");
    for (let c = 0; c < header.length; c++) {
      if (x[c] === y[c]) {
        identical++;
        continue;
      }
      const u = Number(x[c]);
      const v = Number(y[c]);
      const rel = Math.abs(u - v) / Math.max(Math.abs(u), Math.abs(v));
      if (x[c] === "" || y[c] === "" || !Number.isFinite(rel) || rel > TOLERANCE) {
        return fail(`row ${r} ${header[c]}: browser ${x[c]} vs node ${y[c]}`);
      }
      close++;
      maxRel = Math.max(maxRel, rel);
    }
  }
  console.log(
    `check-playground: results.csv ${a.length - 1} rows × ${header.length} columns: ${identical} fields identical, ${close} numbers within ${TOLERANCE} relative (max ${maxRel.toExponential(2)})`,
  );
}
