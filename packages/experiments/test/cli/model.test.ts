import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { parseSafetensors } from "@randattn/core";
import { readNpyFile } from "@randattn/core/node";
import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { buildProgram } from "../../src/cli/program.js";
import { cli, requireBuild, tempDir } from "../helpers.js";

const FIXTURES = fileURLToPath(new URL("../../../core/test/fixtures/pretrained/", import.meta.url));

/** A .npy file of integer ids (`<i8` or `<i4`), written by hand: encodeNpy writes floats only. */
function idsNpy(path: string, ids: number[], dtype: "<i8" | "<i4" | "<f8" = "<i8"): string {
  let header = `{'descr': '${dtype}', 'fortran_order': False, 'shape': (${ids.length},), }`;
  header += " ".repeat(63 - ((10 + header.length) % 64)) + "\n";
  const size = dtype === "<i4" ? 4 : 8;
  const body = new Uint8Array(ids.length * size);
  const view = new DataView(body.buffer);
  ids.forEach((v, i) => {
    if (dtype === "<i8") view.setBigInt64(8 * i, BigInt(v), true);
    else if (dtype === "<i4") view.setInt32(4 * i, v, true);
    else view.setFloat64(8 * i, v, true);
  });
  const pre = new Uint8Array([0x93, 0x4e, 0x55, 0x4d, 0x50, 0x59, 1, 0, header.length & 255, header.length >> 8]);
  writeFileSync(path, Buffer.concat([pre, Buffer.from(header, "latin1"), body]));
  return path;
}

function ref(name: string) {
  return parseSafetensors(readFileSync(join(FIXTURES, name, "reference.safetensors"))).tensors;
}

describe("randattn model", () => {
  it("has forward, generate and info with the contract's flags", () => {
    const model = buildProgram().commands.find((c) => c.name() === "model")!;
    const help = (n: string) => model.commands.find((c) => c.name() === n)!.helpInformation();
    for (const f of ["--model <dir>", "--tokens <ids.npy>", "--out <dir>", "--dump <tensors>", "--layers <list>"])
      expect(help("forward")).toContain(f);
    for (const f of ["--prompt <text>", "--max-new-tokens <n>", "--tokens <ids.npy>"]) expect(help("generate")).toContain(f);
    expect(help("info")).toContain("--model <dir>");
  });

  it("forward writes logits.npy equal to torch's and per-layer dumps of the documented shapes", () => {
    requireBuild();
    const name = "deepseek-dense-qlora";
    const r = ref(name);
    const ids = Array.from(r.get("ids")!.data);
    const dir = tempDir();
    const out = join(dir, "out");
    const res = cli([
      "model",
      "forward",
      "--model",
      join(FIXTURES, name),
      "--tokens",
      idsNpy(join(dir, "ids.npy"), ids),
      "--out",
      out,
      "--dump",
      "q,k,v,weights,latent",
      "--layers",
      "1",
    ]);
    expect(res.stderr).toBe("");
    expect(res.status).toBe(0);
    const logits = readNpyFile(join(out, "logits.npy"));
    expect(logits.dtype).toBe("<f8");
    expect(logits.shape).toEqual([8, 64]);
    const want = r.get("logits")!.data;
    const scale = Math.max(...want.map(Math.abs));
    expect(Math.max(...logits.data.map((v, i) => Math.abs(v - want[i]))) / scale).toBeLessThan(1e-12);
    expect(readNpyFile(join(out, "layer1.q.npy")).shape).toEqual([4, 8, 12]);
    expect(readNpyFile(join(out, "layer1.k.npy")).shape).toEqual([4, 8, 12]);
    expect(readNpyFile(join(out, "layer1.v.npy")).shape).toEqual([4, 8, 6]);
    expect(readNpyFile(join(out, "layer1.weights.npy")).shape).toEqual([4, 8, 8]);
    expect(readNpyFile(join(out, "layer1.latent.npy")).shape).toEqual([8, 16]);
    expect(readNpyFile(join(out, "layer1.rotaryKey.npy")).shape).toEqual([8, 4]);
    expect(() => readNpyFile(join(out, "layer0.q.npy"))).toThrow();
  });

  it("generate --tokens --json continues like torch; info prints sizes and the cache per token", () => {
    requireBuild();
    const name = "llama-tied-llama3";
    const r = ref(name);
    const dir = tempDir();
    const g = cli([
      "model",
      "generate",
      "--model",
      join(FIXTURES, name),
      "--tokens",
      idsNpy(join(dir, "ids.npy"), Array.from(r.get("ids")!.data), "<i4"),
      "--max-new-tokens",
      "6",
      "--json",
    ]);
    expect(g.status).toBe(0);
    expect(JSON.parse(g.stdout).new_ids).toEqual(Array.from(r.get("greedy")!.data));
    const info = cli(["model", "info", "--model", join(FIXTURES, name), "--json"]);
    const j = JSON.parse(info.stdout);
    expect(j.architecture).toBe("LlamaForCausalLM");
    expect(j.attention).toBe("GQA");
    expect(j.parameters).toBe(17568);
    expect(j.storedParameters).toBe(17568);
    expect(j.kvFloatsPerTokenPerLayer).toBe(2 * 2 * 8);
  });

  it("generate --cache: a covering window equals the exact cache and reports its floats; KIVI takes --cache-bits; bad caches exit 2", () => {
    requireBuild();
    const model = fileURLToPath(new URL("../../../../models/llama-gqa-fortunes", import.meta.url));
    const base = ["model", "generate", "--model", model, "--prompt", "Love is", "--max-new-tokens", "8", "--json"];
    const exact = JSON.parse(cli(base).stdout);
    const window = JSON.parse(cli([...base, "--cache", "sliding-window", "--cache-budget", "64"]).stdout);
    expect(window.new_ids).toEqual(exact.new_ids);
    // 4 layers × 2 KV heads × (16 + 16) floats per cached token (the 8th token is never appended).
    expect(window.cache).toEqual({
      name: "sliding-window",
      floats_stored: 4 * 2 * 32 * (exact.prompt_ids.length + 7),
      bits_stored: 64 * window.cache.floats_stored,
    });
    const kivi = JSON.parse(cli([...base, "--cache", "kivi", "--cache-bits", "2", "--seed", "3"]).stdout);
    expect(kivi.new_ids).toHaveLength(8);
    expect(kivi.cache.name).toBe("kivi");
    const bad = cli([...base, "--cache", "nope"]);
    expect(bad.status).toBe(2);
    expect(bad.stderr).toContain("--cache");
  });

  // (a missing folder, a missing tokenizer.json and the other bad inputs are tested on the API in core)
  it("bad input exits 2 with a typed message naming the field", () => {
    requireBuild();
    const dir = tempDir();
    const model = join(FIXTURES, "gpt2-sharded");
    const run = (ids: number[], dtype?: "<f8") =>
      cli(["model", "forward", "--model", model, "--tokens", idsNpy(join(dir, "t.npy"), ids, dtype), "--out", join(dir, "o")]);
    const oov = run([1, 64]);
    expect(oov.status).toBe(2);
    expect(oov.stderr).toContain("ids[1]: expected a token id in [0, 64)");
    const floats = run([1, 2], "<f8");
    expect(floats.status).toBe(2);
    expect(floats.stderr).toContain("dtype: expected integer token ids");
  });
});
