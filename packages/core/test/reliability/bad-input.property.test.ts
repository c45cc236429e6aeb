// Issue #6, "Bad input, everywhere public": thousands of generated bad and edge-case inputs
// against every public function family of @randattn/core, through the shared invariant of
// harness.ts (finite, correctly shaped result, or a typed error naming the argument).
import { attentionEntries } from "./entries/attention.js";
import { fastEntries } from "./entries/fast.js";
import { latentEntries } from "./entries/latent.js";
import { linalgEntries } from "./entries/linalg.js";
import { modelEntries } from "./entries/model.js";
import { runSuite } from "./harness.js";

runSuite([...linalgEntries, ...attentionEntries, ...latentEntries, ...modelEntries, ...fastEntries], { pkg: "core", numRuns: 800 });
