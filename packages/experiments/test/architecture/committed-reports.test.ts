/**
 * A fresh clone has only the committed files: no committed report may link to a file git does
 * not track (the journal and locks are git-ignored; timings.csv is committed for that reason).
 */
import { execFileSync } from "node:child_process";
import { readFileSync } from "node:fs";
import { dirname, join, normalize } from "node:path";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";

const ROOT = fileURLToPath(new URL("../../../..", import.meta.url));

function tracked(): Set<string> | null {
  try {
    return new Set(execFileSync("git", ["ls-files"], { cwd: ROOT, encoding: "utf8" }).split("\n").filter(Boolean));
  } catch {
    return null;
  }
}

describe("committed reports", () => {
  it("link only to committed files", () => {
    const files = tracked();
    if (files === null) return; // not a git checkout (an installed package): nothing to check
    const pages = [...files].filter((f) => f.startsWith("results/") && f.endsWith(".html"));
    expect(pages.length).toBeGreaterThan(0);
    const broken: string[] = [];
    for (const page of pages) {
      const html = readFileSync(join(ROOT, page), "utf8");
      for (const m of html.matchAll(/(?:href|src)="([^"#?]+)"/g)) {
        const link = m[1];
        if (/^[a-z]+:/.test(link)) continue;
        const target = normalize(join(dirname(page), link));
        if (!files.has(target)) broken.push(`${page} → ${link}`);
      }
    }
    expect(broken).toEqual([]);
  });
});
