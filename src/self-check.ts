/**
 * `npm start -- --check` (`npm run check`): validates everything the bridge needs without starting
 * it, one line per item, ✓ or ✗. Each probe is a function returning its lines, so the platform
 * and Docker probes live with their adapters and main.ts wires them in.
 */

export interface CheckResult {
  readonly ok: boolean;
  /** What was checked: `environment`, `Docker engine`, `Discord @data`, ... */
  readonly item: string;
  readonly detail: string;
}

export type Probe = () => Promise<readonly CheckResult[]>;

export function formatCheck(result: CheckResult): string {
  return `${result.ok ? '✓' : '✗'} ${result.item}: ${result.detail}`;
}

/**
 * Runs the probes in order, printing each line as it comes; a probe that throws is one ✗ line,
 * never the end of the check. Resolves true when every line is ✓.
 */
export async function runChecks(
  probes: ReadonlyArray<{ readonly item: string; readonly probe: Probe }>,
  write: (line: string) => void,
): Promise<boolean> {
  let failures = 0;
  let total = 0;
  for (const { item, probe } of probes) {
    let results: readonly CheckResult[];
    try {
      results = await probe();
    } catch (error) {
      results = [{ ok: false, item, detail: error instanceof Error ? error.message : String(error) }];
    }
    for (const result of results) {
      total += 1;
      if (!result.ok) failures += 1;
      write(formatCheck(result));
    }
  }
  write(failures === 0 ? `All ${total} checks passed.` : `${failures} of ${total} checks failed.`);
  return failures === 0;
}
