/**
 * An agent file's `mcp:` list: the MCP servers whose tools join the agent's (docs/mcp.md). A stdio server
 * (`command`, `args`, `env`, `run: sandbox` by default or `run: host`) or a Streamable HTTP one (`url`, `headers`).
 * Values of the form `${VAR}` in `env` and `headers` are read from the bridge's environment: secrets stay out of the
 * file, as `api_key_env` keeps keys out of it.
 */
import { z } from 'zod';
import { ConfigError } from '../errors.js';
import type { Env } from './settings.js';

/** A server's name: the prefix of its tools' names (`name__tool`), so a plain identifier without `__`. */
const serverName = z
  .string()
  .regex(/^[A-Za-z][A-Za-z0-9_-]{0,31}$/, 'must be a letter then up to 31 letters, digits, "_" or "-"')
  .refine((name) => !name.includes('__'), 'must not hold "__" (it separates the server from the tool in names)');

const values = z.record(z.string().regex(/^[A-Za-z0-9_.-]+$/, 'must be a plain name'), z.coerce.string());
const timeout = z.number().positive().max(3600).optional();
const price = z.number().nonnegative().max(1000).optional();

const stdioSchema = z
  .object({
    name: serverName,
    command: z.string().trim().min(1),
    args: z.array(z.coerce.string()).default([]),
    env: values.default({}),
    run: z.enum(['sandbox', 'host']).default('sandbox'),
    timeout_s: timeout,
    price_usd_per_call: price,
  })
  .strict();

const httpSchema = z
  .object({
    name: serverName,
    url: z.url({ protocol: /^https?$/, error: 'must be an http:// or https:// URL' }),
    headers: values.default({}),
    timeout_s: timeout,
    price_usd_per_call: price,
  })
  .strict();

interface ServerBase {
  readonly name: string;
  /** `timeout_s` in ms; absent: the command timeout (SANDBOX_TIMEOUT_S). */
  readonly timeoutMs?: number | undefined;
  /** `price_usd_per_call`: each call held and counted against the spending limits like a model call. */
  readonly priceUsdPerCall?: number | undefined;
}
export interface StdioServer extends ServerBase {
  readonly kind: 'stdio';
  readonly command: string;
  readonly args: readonly string[];
  readonly env: Readonly<Record<string, string>>;
  /** `sandbox`: inside the room's sandbox (the default); `host`: on the bridge's host, an explicit opt-in. */
  readonly run: 'sandbox' | 'host';
}
export interface HttpServer extends ServerBase {
  readonly kind: 'http';
  readonly url: string;
  readonly headers: Readonly<Record<string, string>>;
}
export type McpServerConfig = StdioServer | HttpServer;

/** The front matter's shape: a list of mappings, each read by `mcpServersOf`. */
export const mcpListSchema = z.array(z.record(z.string(), z.unknown())).optional();

const REFERENCE = /\$\{([^}]*)\}/g;
const ENV_NAME = /^[A-Za-z_][A-Za-z0-9_]*$/;

/** A value with each `${VAR}` replaced by the variable's value; every value read is a secret. */
function resolved(value: string, env: Env, file: string, field: string, secrets: string[]): string {
  return value.replace(REFERENCE, (_whole, variable: string) => {
    if (!ENV_NAME.test(variable)) throw new ConfigError(file, field, `"\${${variable}}" is not a variable name`);
    const found = env[variable]?.trim();
    if (!found) throw new ConfigError(file, field, `names ${variable}, which is not set`);
    secrets.push(found);
    return found;
  });
}

function resolvedAll(
  record: Readonly<Record<string, string>>,
  env: Env,
  file: string,
  field: string,
  secrets: string[],
): Record<string, string> {
  return Object.fromEntries(
    Object.entries(record).map(([key, value]) => [key, resolved(value, env, file, `${field}.${key}`, secrets)]),
  );
}

function issueOf(file: string, at: string, error: z.ZodError): ConfigError {
  const issue = error.issues[0];
  const keys = issue?.code === 'unrecognized_keys' ? issue.keys : [];
  const path = [at, ...(issue?.path ?? []).map(String), ...keys.slice(0, 1)].join('.');
  const problem = issue?.code === 'unrecognized_keys' ? 'unknown key' : (issue?.message ?? 'invalid');
  return new ConfigError(file, path, problem);
}

/** The servers of an agent file, checked and with their `${VAR}` values read; the secrets read go to `secrets`. */
export function mcpServersOf(
  file: string,
  list: ReadonlyArray<Record<string, unknown>> | undefined,
  env: Env,
  secrets: string[],
): McpServerConfig[] {
  const servers: McpServerConfig[] = [];
  const names = new Set<string>();
  for (const [index, entry] of (list ?? []).entries()) {
    const at = `mcp.${index}`;
    const isHttp = 'url' in entry;
    if (isHttp && 'command' in entry) throw new ConfigError(file, at, 'has both url and command: a server is one');
    if (!isHttp && !('command' in entry)) {
      throw new ConfigError(file, at, 'needs command (a stdio server) or url (a Streamable HTTP server)');
    }
    const timeoutOf = (s?: number) => (s === undefined ? {} : { timeoutMs: Math.round(s * 1000) });
    const priceOf = (usd?: number) => (usd === undefined ? {} : { priceUsdPerCall: usd });
    let server: McpServerConfig;
    if (isHttp) {
      const parsed = httpSchema.safeParse(entry);
      if (!parsed.success) throw issueOf(file, at, parsed.error);
      const { name, url, headers, timeout_s, price_usd_per_call } = parsed.data;
      server = {
        kind: 'http',
        name,
        url,
        headers: resolvedAll(headers, env, file, `${at}.headers`, secrets),
        ...timeoutOf(timeout_s),
        ...priceOf(price_usd_per_call),
      };
    } else {
      const parsed = stdioSchema.safeParse(entry);
      if (!parsed.success) throw issueOf(file, at, parsed.error);
      const { name, command, args, env: given, run, timeout_s, price_usd_per_call } = parsed.data;
      server = {
        kind: 'stdio',
        name,
        command,
        args,
        env: resolvedAll(given, env, file, `${at}.env`, secrets),
        run,
        ...timeoutOf(timeout_s),
        ...priceOf(price_usd_per_call),
      };
    }
    const key = server.name.toLowerCase();
    if (names.has(key)) throw new ConfigError(file, `${at}.name`, `"${server.name}" is already a server of this agent`);
    names.add(key);
    servers.push(server);
  }
  return servers;
}
