/**
 * `npm run web:invite`: the web room's people.
 *   npm run web:invite -- <name> [--operator]   a one-time sign-in link for <name> (valid for an hour, used once)
 *   npm run web:invite -- --list                everyone invited, operators marked, open sessions, last seen
 *   npm run web:invite -- --revoke <name>       ends their sessions (their open pages close) and unused links
 * It writes to the store the bridge uses (the Postgres database DATABASE_URL names, else SQLite in DATA_DIR), beside a
 * running bridge.
 */
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { EXIT, parseFlags, UsageError } from '../../src/cli.js';
import { type Config, type Env, environmentWithDotenv, loadConfig } from '../../src/config/index.js';
import { ConfigError, describeError } from '../../src/errors.js';
import { openStoreFrom, type PeoplePort } from '../../src/store/index.js';
import { personNameProblem } from './names.js';
import { digest, newSecret } from './secrets.js';

export const INVITE_USAGE = `usage: npm run web:invite -- <name> [--operator]
       npm run web:invite -- --list
       npm run web:invite -- --revoke <name>`;

/** A sign-in link lasts this long. */
const LINK_MS = 60 * 60 * 1000;

export interface InviteIo {
  out(text: string): void;
  err(text: string): void;
  readonly cwd?: string;
  readonly env?: Env;
  readonly clock?: () => number;
}

/** Where people open the room: WEB_PUBLIC_URL, else the address it listens on. */
export function roomAddress(config: Config): string {
  const { WEB_PUBLIC_URL, WEB_HOST, WEB_PORT } = config.settings;
  if (WEB_PUBLIC_URL) return WEB_PUBLIC_URL;
  if (WEB_PORT === undefined) {
    throw new ConfigError(
      'environment',
      'WEB_PORT',
      'is not set, so the web room is off (set it, and WEB_PUBLIC_URL, in .env: npm start and web:invite both read it)',
    );
  }
  if (WEB_PORT === 0) {
    throw new ConfigError(
      'environment',
      'WEB_PUBLIC_URL',
      'is needed when WEB_PORT is 0 (the port is picked at start)',
    );
  }
  const host =
    WEB_HOST === '0.0.0.0' || WEB_HOST === '::' ? 'localhost' : WEB_HOST.includes(':') ? `[${WEB_HOST}]` : WEB_HOST;
  return `http://${host}:${WEB_PORT}`;
}

/** Invites a person (a name checked already): their one-time sign-in link into the room at `address`. */
export async function inviteLink(
  people: PeoplePort,
  person: { name: string; operator: boolean },
  address: string,
  now: number,
): Promise<string> {
  const code = newSecret();
  await people.invite(person, digest(code), now, now + LINK_MS);
  return `${address}/signin/${code}`;
}

export async function inviteMain(argv: readonly string[], io: InviteIo = processIo()): Promise<number> {
  try {
    const flags = parseFlags(argv, {
      switches: ['--operator', '--list', '--help'],
      values: ['--revoke'],
      positionals: 1,
    });
    if (flags.switches.has('--help')) {
      io.out(`${INVITE_USAGE}\n`);
      return EXIT.ok;
    }
    const name = flags.positionals[0];
    const revoke = flags.values.get('--revoke');
    const list = flags.switches.has('--list');
    if ([name !== undefined, revoke !== undefined, list].filter(Boolean).length !== 1) {
      throw new UsageError('give a name, --list or --revoke <name>');
    }
    if (flags.switches.has('--operator') && name === undefined) throw new UsageError('--operator goes with a name');
    const cwd = io.cwd ?? process.cwd();
    const config = loadConfig(environmentWithDotenv(cwd, io.env ?? process.env), cwd);
    // The store the bridge opens (src/main.ts): Postgres with DATABASE_URL, else SQLite in the data folder.
    const store = await openStoreFrom(config.settings, {
      dataDir: path.resolve(cwd, config.settings.DATA_DIR),
      onError: (error) => io.err(`web:invite: a database connection failed: ${describeError(error)}\n`),
    });
    const now = (io.clock ?? Date.now)();
    try {
      if (list) {
        const people = await store.people.list(now);
        if (people.length === 0) io.out('Nobody is invited yet: npm run web:invite -- <name>\n');
        for (const p of people) {
          const seen = p.seenAt
            ? `, last seen ${new Date(p.seenAt).toISOString().slice(0, 16).replace('T', ' ')} UTC`
            : '';
          const sessions = `${p.sessions} session${p.sessions === 1 ? '' : 's'}`;
          io.out(`${p.name}${p.operator ? ' (operator)' : ''}: ${sessions}${seen}\n`);
        }
        return EXIT.ok;
      }
      if (revoke !== undefined) {
        const known = (await store.people.list(now)).find((p) => p.name.toLowerCase() === revoke.toLowerCase());
        if (!known) {
          io.err(`web:invite: nobody named "${revoke}" is invited (npm run web:invite -- --list)\n`);
          return EXIT.failed;
        }
        const ended = await store.people.revoke(known.name);
        io.out(
          `${known.name}: ${ended} session${ended === 1 ? '' : 's'} ended; their open pages close within seconds.\n`,
        );
        return EXIT.ok;
      }
      const person = name ?? '';
      const problem = personNameProblem(
        person,
        config.agents.map((a) => a.name),
      );
      if (problem) {
        io.err(`web:invite: ${problem}\n`);
        return EXIT.failed;
      }
      const operator = flags.switches.has('--operator');
      const link = await inviteLink(store.people, { name: person, operator }, roomAddress(config), now);
      io.out(`Sign-in link for ${person}${operator ? ' (operator)' : ''}, valid for one hour, once:\n${link}\n`);
      return EXIT.ok;
    } finally {
      await store.close();
    }
  } catch (error) {
    if (error instanceof UsageError) {
      io.err(`web:invite: ${error.message}\n${INVITE_USAGE}\n`);
      return EXIT.usage;
    }
    io.err(`web:invite failed: ${describeError(error)}\n`);
    return EXIT.failed;
  }
}

function processIo(): InviteIo {
  return { out: (text) => process.stdout.write(text), err: (text) => process.stderr.write(text) };
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  process.exitCode = await inviteMain(process.argv.slice(2));
}
