// Rewrites src/config/validators.generated.ts: ajv's standalone code for the config schema and every
// registered params schema (see src/config/standalone.ts), from the built package:
//   npx tsc -b packages/experiments && node packages/experiments/scripts/gen-validators.mjs
// then rebuild (the generated module is compiled with the rest of src).
import { writeFileSync } from "node:fs";
import { GENERATED_VALIDATORS_PATH, validatorsModuleSource } from "../dist/config/standalone.js";

const target = new URL(`../${GENERATED_VALIDATORS_PATH}`, import.meta.url);
const source = validatorsModuleSource();
writeFileSync(target, source);
console.log(`wrote ${GENERATED_VALIDATORS_PATH} (${source.length} characters)`);
