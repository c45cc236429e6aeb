// Issue #6, "Bad input, everywhere public": thousands of generated bad and edge-case inputs
// against every public function family of @randattn/sketch, through core's shared invariant
// (finite, correctly shaped result, or a typed error naming the argument).
import { runSuite } from "../../../core/test/reliability/harness.js";
import { sketchEntries } from "./entries.js";

runSuite(sketchEntries, { pkg: "sketch", numRuns: 1500 });
