/**
 * `npm run mcp`: the bridge's rooms over MCP for an operator's coding agent.
 *   npm run mcp                               serves them over stdio, passing everything to the running bridge's
 *                                             /mcp (ROUNDTABLE_MCP_TOKEN; --url <bridge>/mcp, else the web room's)
 *   npm run mcp -- --new-token <name>         a token for a web room operator (shown once; the store keeps a digest)
 *   npm run mcp -- --revoke-token <name>      deletes every token of <name> (their clients are refused at once)
 * Tokens are written to the store the bridge uses (the Postgres database DATABASE_URL names, else SQLite in DATA_DIR).
 */
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { EXIT, parseFlags, UsageError } from '../../src/cli.js';
import { type Env, environmentWithDotenv, loadConfig } from '../../src/config/index.js';
import { describeError } from '../../src/errors.js';
import { proxyStdio, tryToken } from '../../src/mcp-serve/stdio-proxy.js';
import { issueToken } from '../../src/mcp-serve/tokens.js';
import { openStoreFrom } from '../../src/store/index.js';
import { roomAddress } from './invite-cli.js';

export const MCP_USAGE = `usage: npm run mcp [-- --url <bridge>/mcp]   (with ROUNDTABLE_MCP_TOKEN set)
       npm run mcp -- --new-token <name>
       npm run mcp -- --revoke-token <name>`;

/** The environment variable `npm run mcp` reads its token from. */
export const TOKEN_VARIABLE = 'ROUNDTABLE_MCP_TOKEN';

export interface McpIo {
  out(text: string): void;
  err(text: string): void;
  readonly cwd?: string;
  readonly env?: Env;
  readonly stdin?: NodeJS.ReadableStream;
  readonly stdout?: NodeJS.WritableStream;
  readonly clock?: () => number;
}

export async function mcpMain(argv: readonly string[], io: McpIo = processIo()): Promise<number> {
  try {
    const flags = parseFlags(argv, { switches: ['--help'], values: ['--new-token', '--revoke-token', '--url'] });
    if (flags.switches.has('--help')) {
      io.out(`${MCP_USAGE}\n`);
      return EXIT.ok;
    }
    const issue = flags.values.get('--new-token');
    const revoke = flags.values.get('--revoke-token');
    const url = flags.values.get('--url');
    if ([issue, revoke, url].filter((v) => v !== undefined).length > 1) {
      throw new UsageError('give one of --new-token, --revoke-token or --url');
    }
    const cwd = io.cwd ?? process.cwd();
    const env = environmentWithDotenv(cwd, io.env ?? process.env);
    if (issue === undefined && revoke === undefined) return await serve(io, env, cwd, url);
    const config = loadConfig(env, cwd);
    const store = await openStoreFrom(config.settings, {
      dataDir: path.resolve(cwd, config.settings.DATA_DIR),
      onError: (error) => io.err(`mcp: a database connection failed: ${describeError(error)}\n`),
    });
    try {
      const now = (io.clock ?? Date.now)();
      if (revoke !== undefined) {
        const gone = await store.people.revokeTokens(revoke);
        io.out(`${revoke}: ${gone} token${gone === 1 ? '' : 's'} revoked; their clients are refused from now on.\n`);
        return EXIT.ok;
      }
      const made = await issueToken(store.people, issue ?? '', now);
      if ('problem' in made) {
        io.err(`mcp: ${made.problem}\n`);
        return EXIT.failed;
      }
      io.out(
        `MCP token for ${made.person.name} (shown once; npm run mcp -- --revoke-token ${made.person.name} ends it):\n` +
          `${made.token}\n`,
      );
      return EXIT.ok;
    } finally {
      await store.close();
    }
  } catch (error) {
    if (error instanceof UsageError) {
      io.err(`mcp: ${error.message}\n${MCP_USAGE}\n`);
      return EXIT.usage;
    }
    io.err(`mcp failed: ${describeError(error)}\n`);
    return EXIT.failed;
  }
}

/** Serves over stdio once the token is known to work; resolves when the client closes. */
async function serve(io: McpIo, env: Env, cwd: string, url: string | undefined): Promise<number> {
  const token = env[TOKEN_VARIABLE]?.trim();
  if (!token) {
    io.err(`mcp: ${TOKEN_VARIABLE} is not set: make a token with npm run mcp -- --new-token <your name>\n`);
    return EXIT.usage;
  }
  const endpoint = new URL(url ?? `${roomAddress(loadConfig(env, cwd))}/mcp`);
  try {
    await tryToken(endpoint, token);
  } catch (error) {
    io.err(`mcp: ${endpoint.href} refused ${TOKEN_VARIABLE} or cannot be reached: ${describeError(error)}\n`);
    return EXIT.failed;
  }
  await proxyStdio({
    url: endpoint,
    token,
    ...(io.stdin ? { stdin: io.stdin } : {}),
    ...(io.stdout ? { stdout: io.stdout } : {}),
    say: (line) => io.err(`${line}\n`),
  });
  return EXIT.ok;
}

function processIo(): McpIo {
  return { out: (text) => process.stdout.write(text), err: (text) => process.stderr.write(text) };
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  process.exitCode = await mcpMain(process.argv.slice(2));
}
