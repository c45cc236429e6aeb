/**
 * Compatibility re-export: `Matrix` lives in `src/matrix.ts`, below `validate.ts` (issue 9
 * layering: errors → matrix → validate → kernels → linalg → …). Import `../matrix.js` in new code;
 * this path is kept only so branches written before the move still compile.
 */
export { Matrix, type MatrixLike, asMatrix } from "../matrix.js";
