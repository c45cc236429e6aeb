import { readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";

/** Bytes of a committed fixture (written by NumPy, see fixtures/make_fixtures.py). */
export function fixture(name: string): Uint8Array {
  return new Uint8Array(readFileSync(fixturePath(name)));
}

export function fixturePath(name: string): string {
  return fileURLToPath(new URL(`./fixtures/${name}`, import.meta.url));
}

/** The fixtures' grid: a[i, j] = (i·cols + j) / 7 − 0.5 (make_fixtures.py `grid`). */
export function grid(rows: number, cols: number): number[] {
  const out: number[] = [];
  for (let i = 0; i < rows; i++) for (let j = 0; j < cols; j++) out.push((i * cols + j) / 7 - 0.5);
  return out;
}

/** The fixtures' stack: s[h, i, j] = h·100 + i·10 + j + 0.5 (heads × N × d). */
export function stack(heads: number, rows: number, cols: number): number[] {
  const out: number[] = [];
  for (let h = 0; h < heads; h++) for (let i = 0; i < rows; i++) for (let j = 0; j < cols; j++) out.push(h * 100 + i * 10 + j + 0.5);
  return out;
}
