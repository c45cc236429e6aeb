/** Parsing config text (YAML or JSON) with bounded size and aliases, before any validation. */
import { FormatError } from "@randattn/core";
import { parseDocument } from "yaml";
import { ConfigError } from "./errors.js";

/** Largest config file accepted (bytes). */
export const MAX_CONFIG_BYTES = 256 * 1024;
/** Most YAML alias expansions accepted (yaml's maxAliasCount; guards against "billion laughs"). */
export const MAX_YAML_ALIASES = 64;

/**
 * Parses config text. YAML: one document, core schema (no custom tags such as `!!js/function`),
 * no `<<` merge keys, unique keys, at most MAX_YAML_ALIASES alias expansions.
 * @param format "yaml" or "json".
 * @throws FormatError for unparseable text, ConfigError for an alias bomb.
 */
export function parseConfigText(text: string, format: "yaml" | "json", source = "<inline>"): unknown {
  if (text.length > MAX_CONFIG_BYTES)
    throw new FormatError(source, `a config of at most ${MAX_CONFIG_BYTES} bytes`, `${text.length} bytes`);
  if (format === "json") {
    try {
      return JSON.parse(text);
    } catch (e) {
      throw new FormatError(source, "valid JSON", (e as Error).message);
    }
  }
  const doc = parseDocument(text, { schema: "core", merge: false, uniqueKeys: true, prettyErrors: true, strict: true });
  // Warnings are errors here: an unresolved tag such as `!!js/function` must not silently become a string.
  const problems = [...doc.errors, ...doc.warnings];
  if (problems.length > 0) {
    throw new FormatError(source, "valid YAML", problems.map((e) => e.message.split("\n")[0]).join("; "));
  }
  try {
    return doc.toJS({ maxAliasCount: MAX_YAML_ALIASES });
  } catch (e) {
    const msg = (e as Error).message;
    if (/alias/i.test(msg)) {
      throw new ConfigError(source, [
        { path: "config", expected: `at most ${MAX_YAML_ALIASES} YAML alias expansions (anchors/aliases are bounded)`, actual: msg },
      ]);
    }
    throw new FormatError(source, "valid YAML", msg);
  }
}
