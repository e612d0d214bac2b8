/**
 * Full or smoke run. A smoke run (`--smoke`, which bench/run.ts passes on) takes the same code paths with small
 * counts, so every benchmark can be run in CI in a couple of minutes; its figures are printed, not judged.
 */
export const smoke: boolean = process.argv.slice(2).includes('--smoke');

/** `full` in a full run, `small` in a smoke run. */
export function sized<T>(full: T, small: T): T {
  return smoke ? small : full;
}
