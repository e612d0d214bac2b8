/**
 * `npm run pair`: DM pairing from the command line, on the store the bridge uses (Postgres with DATABASE_URL, else
 * SQLite in DATA_DIR), beside a running bridge.
 *   npm run pair -- <code>             approve the person who was given this code
 *   npm run pair -- --list             the codes waiting, and the people paired
 *   npm run pair -- --revoke <who>     end a person's pairing (name or user id)
 */
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { AccessGate } from '../bridge/inbound/access-gate.js';
import { accessPolicy } from '../bridge/inbound/access-wiring.js';
import { EXIT, parseFlags, UsageError } from '../cli.js';
import { type Env, environmentWithDotenv, loadConfig } from '../config/index.js';
import { describeError } from '../errors.js';
import { silentLogger } from '../log.js';
import { openStoreFrom } from '../store/index.js';

export const PAIR_USAGE = `usage: npm run pair -- <code>
       npm run pair -- --list
       npm run pair -- --revoke <name or user id>`;

export interface PairIo {
  out(text: string): void;
  err(text: string): void;
  readonly cwd?: string;
  readonly env?: Env;
  readonly clock?: () => number;
}

export async function pairMain(argv: readonly string[], io: PairIo = processIo()): Promise<number> {
  try {
    const flags = parseFlags(argv, { switches: ['--list', '--help'], values: ['--revoke'], positionals: 1 });
    if (flags.switches.has('--help')) {
      io.out(`${PAIR_USAGE}\n`);
      return EXIT.ok;
    }
    const code = flags.positionals[0];
    const revoke = flags.values.get('--revoke');
    const list = flags.switches.has('--list');
    if ([code !== undefined, revoke !== undefined, list].filter(Boolean).length !== 1) {
      throw new UsageError('give a code, --list or --revoke <name>');
    }
    const cwd = io.cwd ?? process.cwd();
    const config = loadConfig(environmentWithDotenv(cwd, io.env ?? process.env), cwd);
    const store = await openStoreFrom(config.settings, {
      dataDir: path.resolve(cwd, config.settings.DATA_DIR),
      onError: (error) => io.err(`pair: a database connection failed: ${describeError(error)}\n`),
    });
    try {
      const gate = new AccessGate({
        policy: accessPolicy(config),
        dm: config.settings.DM_POLICY,
        store: store.access,
        agents: config.agents.map((a) => a.name),
        // The person is told when they write again: the command line reaches no platform.
        tell: async () => {},
        clock: io.clock ?? Date.now,
        log: silentLogger(),
        codeMinutes: config.settings.PAIRING_CODE_MINUTES,
      });
      const args = list ? 'list' : revoke !== undefined ? `revoke ${revoke}` : (code ?? '');
      const answer = await gate.command({
        platform: 'cli',
        channel: 'cli',
        name: 'pair',
        args,
        user: { id: 'command-line', name: 'the command line' },
        isOperator: true,
      });
      io.out(`${answer}\n`);
      return /^No code |^Nobody paired /.test(answer) ? EXIT.failed : EXIT.ok;
    } finally {
      await store.close();
    }
  } catch (error) {
    if (error instanceof UsageError) {
      io.err(`pair: ${error.message}\n${PAIR_USAGE}\n`);
      return EXIT.usage;
    }
    io.err(`pair failed: ${describeError(error)}\n`);
    return EXIT.failed;
  }
}

function processIo(): PairIo {
  return { out: (text) => process.stdout.write(text), err: (text) => process.stderr.write(text) };
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  process.exitCode = await pairMain(process.argv.slice(2));
}
