/**
 * io/ — `.npy` / `.npz` read and write: bring Q, K, V or weights dumped from NumPy/PyTorch into
 * RandAttn and send results back. Byte-level functions plus thin fs helpers.
 */
export * from "./npy.js";
export * from "./npz.js";
export * from "./files.js";
export { crc32 } from "./zip.js";
