import { execFileSync } from "node:child_process";
import { mkdtempSync, readdirSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { npyToMatrix, randomMatrix } from "@randattn/core";
import { readNpyFile, readNpzFile, writeNpyFile, writeNpzFile } from "@randattn/core/node";
import { fixturePath, grid } from "./helpers.js";

function hasNumpy(): boolean {
  try {
    execFileSync("python3", ["-c", "import numpy"], { stdio: "ignore" });
    return true;
  } catch {
    return false;
  }
}

const dir = mkdtempSync(join(tmpdir(), "randattn-npy-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe("readNpyFile / writeNpyFile / npz files", () => {
  it("writes and reads back files, leaving no temporary files behind", () => {
    const m = randomMatrix(6, 4, {}, [2, "file"]);
    writeNpyFile(join(dir, "m.npy"), m);
    expect(npyToMatrix(readNpyFile(join(dir, "m.npy"))).data).toEqual(m.data);
    writeNpzFile(join(dir, "qk.npz"), { q: m, k: [m, m] }, { compress: true });
    expect(readNpzFile(join(dir, "qk.npz")).get("k")!.shape).toEqual([2, 6, 4]);
    expect(readdirSync(dir).sort()).toEqual(["m.npy", "qk.npz"]);
    expect(Array.from(readNpyFile(fixturePath("f8_3x4.npy")).data)).toEqual(grid(3, 4));
  });

  it("names the file in errors", () => {
    const path = fixturePath("object.npy");
    expect(() => readNpyFile(path)).toThrow(new RegExp(`${path.replace(/[.*+?^${}()|[\]\\]/g, "\\$&")} descr: expected a numeric dtype`));
    expect(() => readNpyFile("")).toThrow(/path: expected a non-empty file path/);
    expect(() => readNpyFile(join(dir, "missing.npy"))).toThrow(/ENOENT/);
  });

  it.skipIf(!hasNumpy())("NumPy reads what RandAttn writes (f4, f8, npz)", () => {
    const m = randomMatrix(3, 5, {}, [9, "numpy"]);
    writeNpyFile(join(dir, "a8.npy"), m);
    writeNpyFile(join(dir, "a4.npy"), m, { dtype: "<f4" });
    writeNpzFile(join(dir, "z.npz"), { a: m }, { compress: true });
    const script = [
      "import json, sys, numpy as np",
      "d = sys.argv[1]",
      "a8 = np.load(d + '/a8.npy'); a4 = np.load(d + '/a4.npy'); z = np.load(d + '/z.npz')['a']",
      "print(json.dumps({'a8': a8.tolist(), 'a4': a4.astype('f8').tolist(), 'z': z.tolist(), 'dt': [str(a8.dtype), str(a4.dtype)]}))",
    ].join("\n");
    const out = JSON.parse(execFileSync("python3", ["-c", script, dir], { encoding: "utf8" }));
    expect(out.dt).toEqual(["float64", "float32"]);
    expect(out.a8.flat()).toEqual(Array.from(m.data));
    expect(out.z.flat()).toEqual(Array.from(m.data));
    expect(out.a4.flat()).toEqual(Array.from(m.data, Math.fround));
  });
});
