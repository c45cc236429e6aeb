// The benches' core pinning (bench/affinity.mjs): both sides of a one-thread comparison on one core.
// Pinning runs in a child process (it changes the calling thread's CPUs; the test runner's own
// threads stay as they are).
import { spawnSync } from "node:child_process";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
// @ts-expect-error a bench script (plain .mjs, no declarations)
import { allowedCpus, parseCpuList } from "../../bench/affinity.mjs";

const affinity = fileURLToPath(new URL("../../bench/affinity.mjs", import.meta.url));
const cpus: number[] | null = allowedCpus();

describe("bench affinity", () => {
  it("reads taskset's CPU lists, ranges included, and rejects anything else", () => {
    expect(parseCpuList("0-3,5")).toEqual([0, 1, 2, 3, 5]);
    expect(parseCpuList("1")).toEqual([1]);
    expect(parseCpuList(" 0,2-2 ")).toEqual([0, 2]);
    expect(parseCpuList("")).toBeNull();
    expect(parseCpuList("0-1,x")).toBeNull();
  });

  it.skipIf(cpus === null || cpus.length < 2)(
    "pins the calling thread; a chooser on one allowed core chooses nothing and calibrates nothing",
    () => {
      const script = `
      const { allowedCpus, pinThread, coreChooser } = await import(${JSON.stringify(affinity)});
      const all = allowedCpus();
      pinThread([all.at(-1)]);
      const pinned = allowedCpus();
      let calls = 0;
      const chooser = coreChooser(() => { calls++; let x = 0; for (let i = 0; i < 1e5; i++) x += Math.sqrt(i); return x; });
      const chosen = chooser.choose();
      console.log(JSON.stringify({ all, pinned, chosen, calls, describe: chooser.describe() }));
    `;
      const r = spawnSync(process.execPath, ["--input-type=module", "-e", script], { encoding: "utf8" });
      expect(r.status, r.stderr).toBe(0);
      const out = JSON.parse(r.stdout.trim());
      expect(out.pinned).toEqual([out.all.at(-1)]);
      // The chooser starts from the thread's allowed CPUs (here the one pinned), so it has nothing to choose.
      expect(out.chosen).toBeNull();
      expect(out.describe).toMatch(/not pinned \(one core allowed/);
      expect(out.calls).toBe(0);
    },
  );

  it.skipIf(cpus === null || cpus.length < 2)("puts the thread on the core its calibration found faster, then releases it", () => {
    const script = `
      const { allowedCpus, coreChooser } = await import(${JSON.stringify(affinity)});
      const all = allowedCpus();
      const chooser = coreChooser(() => {});
      const chosen = chooser.choose();
      const afterChoice = allowedCpus();
      chooser.release();
      console.log(JSON.stringify({ all, chosen, afterChoice, released: allowedCpus(), picks: chooser.picks.length, describe: chooser.describe() }));
    `;
    const r = spawnSync(process.execPath, ["--input-type=module", "-e", script], { encoding: "utf8" });
    expect(r.status, r.stderr).toBe(0);
    const out = JSON.parse(r.stdout.trim());
    expect(out.all).toContain(out.chosen);
    expect(out.afterChoice).toEqual([out.chosen]);
    expect(out.released).toEqual(out.all);
    expect(out.picks).toBe(1);
    expect(out.describe).toMatch(new RegExp(`vCPU ${out.chosen} ×1`));
  });
});
