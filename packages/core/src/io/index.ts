/**
 * io/ — `.npy` / `.npz` read and write: bring Q, K, V or weights dumped from NumPy/PyTorch into
 * RandAttn and send results back. Byte-level `.npy` functions here; `.npz` (zlib) and the fs
 * helpers are in `@randattn/core/node`.
 */
export * from "./npy.js";
