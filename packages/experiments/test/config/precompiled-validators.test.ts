/**
 * The validators compiled ahead of time (src/config/standalone.ts → validators.generated.ts) are
 * current, are the ones `validatorFor` hands out, and behave as ajv's run-time compile of the same
 * schema with the same options: the same verdict, the same defaults written into the data and the
 * same error objects (path, keyword, params, message, schema, parentSchema, data), on the shipped
 * configs, on seeded mutations of them, and on every registered params schema.
 */
import { readdirSync, readFileSync } from "node:fs";
import { Ajv, type ValidateFunction } from "ajv";
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { canonicalJson } from "../../src/base/canonical.js";
import { AJV_OPTIONS, parseConfigText, validateConfigObject, validatorFor } from "../../src/config/load.js";
import { CONFIG_SCHEMA } from "../../src/config/schema.js";
import {
  GENERATED_VALIDATORS_PATH,
  REGENERATE_VALIDATORS,
  precompiledSchemas,
  validatorsModuleSource,
} from "../../src/config/standalone.js";
import { PRECOMPILED_VALIDATORS } from "../../src/config/validators.generated.js";
import { catchError } from "../helpers.js";

const PACKAGE = new URL("../../", import.meta.url);
const runtime = new Ajv({ ...AJV_OPTIONS });
const precompiled = new Map(PRECOMPILED_VALIDATORS as unknown as [string, ValidateFunction][]);

/** Both validators on structured clones of `data`: verdict, the data afterwards (defaults), errors. */
function compare(schema: object, data: unknown): void {
  const id = (schema as { $id?: string }).$id;
  const fresh = (id === undefined ? undefined : runtime.getSchema(id)) ?? runtime.compile(schema);
  const ahead = precompiled.get(canonicalJson(schema));
  expect(ahead, "a precompiled validator for this schema").toBeTypeOf("function");
  const a = structuredClone(data);
  const b = structuredClone(data);
  const okFresh = fresh(a);
  const okAhead = ahead!(b);
  expect(okAhead).toBe(okFresh);
  expect(b).toEqual(a);
  expect(ahead!.errors ?? null).toEqual(fresh.errors ?? null);
}

const shipped = readdirSync(new URL("configs/", PACKAGE))
  .filter((f) => f.endsWith(".yaml"))
  .sort()
  .map((f) => ({ name: f, raw: parseConfigText(readFileSync(new URL(`configs/${f}`, PACKAGE), "utf8"), "yaml", f) as object }));

/** Every (path, value) leaf and branch of a JSON value, as key paths. */
function paths(v: unknown, at: (string | number)[] = []): (string | number)[][] {
  const out: (string | number)[][] = [at];
  if (v && typeof v === "object") for (const [k, x] of Object.entries(v)) out.push(...paths(x, [...at, Array.isArray(v) ? Number(k) : k]));
  return out;
}

function setAt(root: unknown, path: (string | number)[], value: unknown, remove: boolean): unknown {
  if (path.length === 0) return value;
  const copy = structuredClone(root) as Record<string | number, unknown>;
  let node = copy;
  for (const key of path.slice(0, -1)) node = node[key] as Record<string | number, unknown>;
  const last = path[path.length - 1];
  if (remove && !Array.isArray(node)) delete node[last];
  else node[last] = value;
  return copy;
}

/** Values that hit the schema's keywords: wrong types, bounds, patterns, enums, lengths (astral characters count once). */
const hostile = fc.oneof(
  fc.constantFrom(-1, 0, 1, 1.5, 1e9, -1e-300, Number.MAX_SAFE_INTEGER + 2, "", "x", "Bad Name", "softmax", "causal", "dot", true, null),
  fc.constantFrom([], [1], ["a", "a"], {}, { kind: "softmax" }, { kind: "dot" }, { from: 1, to: 0 }, { unknown: 1 }),
  fc.constantFrom("😀".repeat(2100), "😀".repeat(31), "a".repeat(61), "a".repeat(4001)),
  fc.jsonValue({ maxDepth: 2 }),
);

describe("the precompiled validators (validators.generated.ts)", () => {
  it(`are current (else regenerate: ${REGENERATE_VALIDATORS})`, () => {
    const committed = readFileSync(new URL(GENERATED_VALIDATORS_PATH, PACKAGE), "utf8");
    expect(committed === validatorsModuleSource(), `${GENERATED_VALIDATORS_PATH} is stale: ${REGENERATE_VALIDATORS}`).toBe(true);
  });

  it("are what validatorFor returns for the config schema and every registered params schema", () => {
    const schemas = precompiledSchemas();
    expect(schemas[0]).toBe(CONFIG_SCHEMA);
    expect(schemas.length).toBe(PRECOMPILED_VALIDATORS.length);
    for (const s of schemas) expect(validatorFor(s)).toBe(precompiled.get(canonicalJson(s)));
    // A schema it does not hold is compiled at run time, and still works.
    const other = validatorFor({ type: "object", properties: { q: { type: "integer", default: 3 } }, additionalProperties: false });
    expect([...precompiled.values()]).not.toContain(other);
    const data: Record<string, unknown> = {};
    expect(other(data)).toBe(true);
    expect(data).toEqual({ q: 3 });
  });

  it("agree with a run-time compile on every shipped config", () => {
    expect(shipped.length).toBeGreaterThan(10);
    for (const { raw } of shipped) compare(CONFIG_SCHEMA, raw);
  });

  it("agree with a run-time compile on mutated configs (a key set to a hostile value, removed, or added)", () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 0, max: shipped.length - 1 }),
        fc.nat(),
        hostile,
        fc.constantFrom("set", "remove", "add"),
        (c, pick, value, how) => {
          const raw = shipped[c].raw;
          const all = paths(raw);
          const path = all[pick % all.length];
          const node = path.reduce<unknown>((n, k) => (n as Record<string | number, unknown>)[k], raw);
          const isObject = node !== null && typeof node === "object" && !Array.isArray(node);
          const mutated =
            how === "add" && isObject ? setAt(raw, [...path, "extraKey"], value, false) : setAt(raw, path, value, how === "remove");
          compare(CONFIG_SCHEMA, mutated);
        },
      ),
      { numRuns: 300, seed: 20261206 },
    );
  });

  it("count a string's length in code points, as ajv does (ucs2length, the one run-time helper the code imports)", () => {
    const base = shipped.find((c) => c.name === "quickstart.yaml")!.raw as Record<string, unknown>;
    // description: maxLength 4000. 2100 astral characters are 4200 UTF-16 units but 2100 code points.
    for (const n of [2100, 4000, 4001]) {
      const config = { ...base, description: "😀".repeat(n) };
      compare(CONFIG_SCHEMA, config);
      expect(validatorFor(CONFIG_SCHEMA)(structuredClone(config))).toBe(n <= 4000);
    }
    // …and the error says so in the same unit.
    const e = catchError(() => validateConfigObject({ ...base, description: "😀".repeat(4001) }));
    expect(e.message).toContain("description: expected at most 4000 character(s), got 4001 characters");
  });

  it("agree with a run-time compile on every params schema (defaults filled in, hostile values per param)", () => {
    const schemas = precompiledSchemas().slice(1);
    expect(schemas.length).toBeGreaterThan(50);
    for (const s of schemas) {
      compare(s, {});
      const props = (s as { properties?: Record<string, unknown> }).properties;
      // A params schema: one param (or an unknown key, where it has none) set to the value; a
      // param's own schema (an axis' values): the value itself.
      const keys = props ? Object.keys(props) : [];
      fc.assert(
        fc.property(hostile, fc.constantFrom(...(keys.length > 0 ? keys : ["unknownParam"])), (value, key) => {
          compare(s, props ? { [key]: value } : value);
        }),
        { numRuns: 12, seed: 14 },
      );
    }
  });
});
