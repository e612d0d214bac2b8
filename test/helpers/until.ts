/** Polls a condition that the bridge or a fake makes true, instead of sleeping a fixed time (bounded by the test timeout). */
export async function until(predicate: () => boolean | Promise<boolean>): Promise<void> {
  while (!(await predicate())) await new Promise((resolve) => setTimeout(resolve, 5));
}
