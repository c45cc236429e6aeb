// Issue #6, "Bad input, everywhere public": thousands of generated bad and edge-case inputs
// against every public function family of @randattn/core, through the shared invariant of
// harness.ts (finite, correctly shaped result, or a typed error naming the argument).
import { linalgEntries } from "./entries/linalg.js";
import { runSuite } from "./harness.js";

runSuite([...linalgEntries], { pkg: "core", numRuns: 150 });
