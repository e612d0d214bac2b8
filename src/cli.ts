/**
 * What every command-line entry point shares (`npm start`, `npm run check`, the Discord and Slack
 * setup scripts): exit codes, and refusing flags it does not know.
 */

/** The same situation ends with the same code in every script. */
export const EXIT = {
  /** Done, or every check passed. */
  ok: 0,
  /** Something to fix: bad configuration, a failed check, a platform or endpoint that said no. */
  failed: 1,
  /** The command line itself is wrong: an unknown flag, a missing argument. */
  usage: 2,
} as const;

/** A bad command line; the message says what is wrong, the script exits with EXIT.usage. */
export class UsageError extends Error {
  override readonly name = 'UsageError';
}

export interface FlagSpec {
  /** Flags without a value (`--json`). */
  readonly switches: readonly string[];
  /** Flags that take a value (`--request-url URL` or `--request-url=URL`). */
  readonly values?: readonly string[];
  /** How many positional arguments are allowed. */
  readonly positionals?: number;
}

export interface ParsedFlags {
  readonly switches: ReadonlySet<string>;
  readonly values: ReadonlyMap<string, string>;
  readonly positionals: readonly string[];
}

/** Parses `argv` strictly: an unknown flag, a missing value or an extra argument is a UsageError. */
export function parseFlags(argv: readonly string[], spec: FlagSpec): ParsedFlags {
  const switches = new Set<string>();
  const values = new Map<string, string>();
  const positionals: string[] = [];
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i] ?? '';
    if (arg.startsWith('-') && arg !== '-') {
      const [flag = '', inline] = arg.split(/=(.*)/s, 2);
      if (spec.switches.includes(flag)) {
        if (inline !== undefined) throw new UsageError(`${flag} takes no value`);
        switches.add(flag);
      } else if (spec.values?.includes(flag)) {
        const value = inline ?? argv[++i];
        if (value === undefined || value === '') throw new UsageError(`${flag} needs a value`);
        values.set(flag, value);
      } else {
        throw new UsageError(`unknown option ${flag}`);
      }
    } else {
      positionals.push(arg);
    }
  }
  if (positionals.length > (spec.positionals ?? 0)) {
    throw new UsageError(`unexpected argument "${positionals[spec.positionals ?? 0]}"`);
  }
  return { switches, values, positionals };
}
