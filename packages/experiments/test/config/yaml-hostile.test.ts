import { describe, expect, it } from "vitest";
import { FormatError } from "@randattn/core";
import { ConfigError, MAX_YAML_ALIASES, parseConfigText } from "@randattn/experiments/internal";
import { catchError } from "../helpers.js";

describe("hostile YAML is refused before anything runs", () => {
  it("a billion-laughs alias bomb is rejected quickly, not expanded", () => {
    const lines = ['a: &a ["lol","lol","lol","lol","lol","lol","lol","lol","lol"]'];
    const names = "abcdefghij";
    for (let i = 1; i < names.length; i++) {
      const prev = names[i - 1];
      lines.push(`${names[i]}: &${names[i]} [${Array(9).fill(`*${prev}`).join(",")}]`);
    }
    const t0 = performance.now();
    const e = catchError(() => parseConfigText(lines.join("\n"), "yaml", "bomb.yaml"));
    expect(performance.now() - t0).toBeLessThan(2000);
    expect(e).toBeInstanceOf(ConfigError);
    expect(e.message).toContain(`at most ${MAX_YAML_ALIASES} YAML alias expansions`);
  });

  it("a few aliases are fine", () => {
    expect(parseConfigText("p: &p {d: 4}\nq: *p\n", "yaml")).toEqual({ p: { d: 4 }, q: { d: 4 } });
  });

  it("custom tags (e.g. !!js/function) are rejected", () => {
    const e = catchError(() => parseConfigText('x: !!js/function "function () { return process }"', "yaml", "tag.yaml"));
    expect(e).toBeInstanceOf(FormatError);
    expect(e.message).toContain("tag.yaml: expected valid YAML");
  });

  it("duplicate keys are rejected rather than silently overwritten", () => {
    expect(catchError(() => parseConfigText("trials: 1\ntrials: 100000\n", "yaml", "dup.yaml")).message).toMatch(
      /dup\.yaml: expected valid YAML, got .*unique/i,
    );
  });

  it("merge keys (<<) are not expanded", () => {
    expect(parseConfigText("base: &b {d: 4}\nx:\n  <<: *b\n", "yaml")).toEqual({ base: { d: 4 }, x: { "<<": { d: 4 } } });
  });

  it("oversized configs are rejected", () => {
    const e = catchError(() => parseConfigText(`x: "${"a".repeat(300 * 1024)}"`, "yaml", "big.yaml"));
    expect(e.message).toContain("big.yaml: expected a config of at most 262144 bytes");
  });
});
