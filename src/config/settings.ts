import { isIP } from 'node:net';
import { homedir, hostname } from 'node:os';
import path from 'node:path';
import { z } from 'zod';
import { ConfigError } from '../errors.js';
import { redact } from '../secrets.js';
import { endpointUrl } from './endpoint-url.js';
import { diskLimitBytes, IMAGE_REFERENCE, MIN_MEMORY_BYTES, NETWORK_MODE, sizeInBytes } from './sandbox-values.js';

/** True for a time zone this Node knows (IANA names such as UTC, Europe/Paris). */
function isTimeZone(value: string): boolean {
  try {
    new Intl.DateTimeFormat('en-US', { timeZone: value });
    return true;
  } catch {
    return false;
  }
}

/** The process environment, or a test's stand-in for it. */
export type Env = Readonly<Record<string, string | undefined>>;

const list = z
  .string()
  .optional()
  .transform((value) =>
    (value ?? '')
      .split(/[\s,]+/)
      .map((item) => item.trim())
      .filter((item) => item.length > 0),
  );

const int = (fallback: number, min = 0, max = Number.MAX_SAFE_INTEGER) =>
  z.coerce.number().int().min(min).max(max).default(fallback);
/** A web room's name: it is part of the room's address (`/room/<name>`). */
const ROOM_NAME = /^[a-z0-9][a-z0-9_-]{0,39}$/i;
/** Seconds that end up in a timer: Node's timers hold at most 2^31-1 ms (about 24.8 days). */
const MAX_TIMER_S = 2_147_483;
/** A Postgres connection URL (libpq's form); what else is wrong with one, connecting tells (naming the variable). */
const databaseUrl = z
  .string()
  .regex(/^postgres(?:ql)?:\/\//i, 'expected a URL that starts with postgres:// or postgresql://')
  // A password with an unencoded "/" (or ":" after an "@") makes no URL at all; the driver would only say "Invalid URL".
  .refine(
    (value) => URL.canParse(value),
    'is not a valid URL: percent-encode the user name and password (@ as %40, : as %3A, / as %2F, # as %23, ' +
      `? as %3F, % as %25; node -p "encodeURIComponent(process.argv[1])" 'the password' prints it)`,
  );

/**
 * A file or folder path. A shell expands `~` before a program sees it, but .env and compose do not: `~` and `~/...` are
 * the home folder here too (else a folder named `~` appears); `~name` is refused rather than guessed.
 */
const filePath = z
  .string()
  .refine((value) => !/^~[^/]/.test(value), 'only ~ and ~/ (your home folder) are expanded: write the full path')
  .transform((value) => (value === '~' || value.startsWith('~/') ? path.join(homedir(), value.slice(1)) : value));

const bool = (fallback: boolean) =>
  z
    .enum(['1', '0', 'true', 'false', 'yes', 'no', 'on', 'off'])
    .default(fallback ? 'true' : 'false')
    .transform((value) => ['1', 'true', 'yes', 'on'].includes(value));

/**
 * Every global setting the bridge reads from the environment (and `.env`).
 * `.env.example` documents each one; keep the two in step.
 */
const settingsSchema = z.object({
  AGENTS_DIR: filePath.default('./agents'),
  DATA_DIR: filePath.default('./data'),
  // The store: SQLite in DATA_DIR unless a Postgres database is named (several bridges may share one later).
  DATABASE_URL: databaseUrl.optional(),
  // Bridges sharing DATABASE_URL (replicas): this one's name (default: host name and process id), and how long it
  // holds a room before another may take it, renewed well before then.
  REPLICA_ID: z
    .string()
    .regex(/^[\w.:@-]{1,100}$/, 'expected up to 100 letters, digits and . _ - : @')
    .optional(),
  ROOM_LEASE_S: int(15, 3, 3600),
  OPENAI_BASE_URL: endpointUrl.default('https://api.openai.com/v1'),
  OPENAI_API_KEY: z.string().optional(),
  TURN_LIMIT: int(20, 1),
  OPERATORS: list,
  // Who may wake the agents (docs/trust.md): user ids, roles or user groups, `group:<name>` of ACCESS_GROUPS; empty =
  // everyone the platform lets in. Channels they answer in (ids or #names); empty = every channel the bots are in.
  ACCESS_USERS: list,
  ACCESS_ROLES: list,
  ACCESS_CHANNELS: list,
  // Named lists reused across settings and agent files: `team=U1 U2;oncall=123`
  ACCESS_GROUPS: z
    .string()
    .optional()
    .transform((value, ctx) => {
      const groups = new Map<string, string[]>();
      for (const part of (value ?? '').split(';')) {
        if (part.trim() === '') continue;
        const match = /^\s*([a-z0-9_-]+)\s*=(.*)$/i.exec(part);
        if (!match?.[1]) {
          ctx.addIssue({ code: 'custom', message: 'expected name=id id;name=id, e.g. team=U1 U2;oncall=123' });
          return z.NEVER;
        }
        groups.set(
          match[1].toLowerCase(),
          (match[2] ?? '').split(/[\s,]+/).filter((id) => id.length > 0),
        );
      }
      return groups;
    }),
  // Direct messages: pair (a first DM gets a code an operator approves), allow (the access lists decide), off
  DM_POLICY: z.enum(['pair', 'allow', 'off']).default('pair'),
  PAIRING_CODE_MINUTES: int(60, 1, 10_080),
  // Approvals (an agent file's approvals:): how long a card waits before it is a denial
  APPROVAL_TIMEOUT_S: int(1800, 1, MAX_TIMER_S),
  // An agent posting elsewhere or DMing for someone only where they could themselves, else an operator approves (on)
  ACTING_CHECK: z.enum(['on', 'off']).default('on'),
  LOG_LEVEL: z.enum(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']).default('info'),
  LOG_FILE: filePath.optional(),
  LOG_FORMAT: z.enum(['json', 'pretty']).optional(),
  // Traces (exported when an OTEL_EXPORTER_OTLP_* endpoint is set; the SDK reads the OTEL_* variables itself)
  TRACE_CONTENT: z.enum(['off', 'on']).default('off'),
  MAX_TOOL_ROUNDS: int(25, 1),
  LLM_TIMEOUT_S: int(60, 1, MAX_TIMER_S),
  LLM_MAX_RETRIES: int(3, 0),
  LLM_STREAM: bool(false),
  HISTORY_LIMIT: int(50, 1),
  MODEL_CONTEXT_TOKENS: int(32_768, 1024),
  ANSWER_RESERVE_TOKENS: int(4096, 0),
  // Retrieval of relevant older messages (seed 002): one embeddings model for the bridge; unset = no retrieval.
  EMBEDDINGS_MODEL: z.string().optional(),
  EMBEDDINGS_BASE_URL: endpointUrl.optional(),
  // Every stored message is embedded in the background: inputs per call, and calls at once
  EMBEDDINGS_BATCH: int(64, 1, 2048),
  EMBEDDINGS_CONCURRENCY: int(2, 1, 16),
  // Spending limits (USD per day; unset = no limit) and the day they count in
  SPEND_LIMIT_USD_DAY: z.coerce.number().positive().optional(),
  ROOM_SPEND_LIMIT_USD_DAY: z.coerce.number().positive().optional(),
  // A call a limit refuses: refused (refuse), or held on a card for an operator (ask) who may let it through
  SPEND_AT_LIMIT: z.enum(['refuse', 'ask']).default('refuse'),
  SPEND_TZ: z.string().refine(isTimeZone, 'expected an IANA time zone such as UTC or Europe/Paris').default('UTC'),
  EMBEDDINGS_PRICE: z.coerce.number().min(0).optional(),
  // Summaries of history blocks that left the agents' windows: one model for the bridge, on OPENAI_BASE_URL; unset = none
  SUMMARY_MODEL: z.string().optional(),
  // Its price, USD per million tokens: input,output or input,cached,output
  SUMMARY_PRICE: z
    .string()
    .regex(/^\d+(\.\d+)?(,\d+(\.\d+)?){1,2}$/, 'expected input,output or input,cached,output in USD per million tokens')
    .optional()
    .transform((value) => {
      if (value === undefined) return undefined;
      const [input = 0, second = 0, third] = value.split(',').map(Number);
      return third === undefined ? { input, cached: input, output: second } : { input, cached: second, output: third };
    }),
  // Batched turns (seed 004): observers of one message asked in one structured call per endpoint and model.
  BATCHING: z.enum(['off', 'on']).default('off'),
  BATCH_TICK_MS: int(1000, 10, 2_147_483_647),
  BATCH_RESERVE_TOKENS: int(5000, 0),
  // Sandbox (one Docker container per channel)
  SANDBOX_IMAGE: z
    .string()
    .regex(IMAGE_REFERENCE, 'expected a Docker image reference such as roundtable-sandbox:latest')
    .default('roundtable-sandbox:latest'),
  SANDBOX_MEMORY: z
    .string()
    .refine(
      (value) => (sizeInBytes(value) ?? 0) >= MIN_MEMORY_BYTES,
      'expected a size of at least 6m such as 512m or 1g',
    )
    .default('512m'),
  SANDBOX_CPUS: z.coerce.number().positive().max(1024).default(1),
  SANDBOX_PIDS: int(256, 8),
  SANDBOX_NETWORK: z
    .string()
    .regex(NETWORK_MODE, 'expected none, bridge, host, container:<name> or the name of a Docker network')
    .default('none'),
  SANDBOX_TIMEOUT_S: int(30, 1, MAX_TIMER_S),
  SANDBOX_IDLE_MINUTES: int(30, 0),
  SANDBOX_TEMPLATE_DIR: filePath.optional(),
  SANDBOX_KEEP_ON_EXIT: bool(false),
  SANDBOX_DISK: z
    .string()
    .refine((value) => diskLimitBytes(value) !== undefined, 'expected a size such as 1g or 500m, or 0 for none')
    .default('1g'),
  // Files and folders in each channel's workspace; 0 = no limit.
  SANDBOX_FILES: int(100_000, 0),
  // Where each room's workspace lives: a DATA_DIR folder bind-mounted (bind) or a named Docker volume (volume).
  SANDBOX_WORKSPACES: z.enum(['bind', 'volume']).default('bind'),
  // The Docker engine, by Docker's own conventions (the docker CLI reads the same variables).
  DOCKER_HOST: z
    .string()
    .regex(/^(unix|tcp):\/\//, 'expected unix:///path/to/docker.sock or tcp://host:port')
    .optional(),
  DOCKER_TLS_VERIFY: bool(false),
  DOCKER_CERT_PATH: filePath.optional(),
  // Reliability: a reply's posts at most (the rest attached as a file), messages fetched per room after a restart
  MAX_REPLY_POSTS: int(5, 1, 100),
  CATCHUP_MAX: int(1000, 0),
  // Messages and commands held in memory, over every room, while the store cannot write (past it: read again at start)
  HELD_MESSAGES_MAX: int(1000, 1),
  // Discord
  DISCORD_API_URL: z.string().url().optional(),
  DISCORD_ALLOWED_BOTS: list,
  DISCORD_GUILD_ID: z.string().optional(),
  DISCORD_STREAM: z.enum(['off', 'edit']).default('off'),
  DISCORD_MAX_FILE_MB: int(20, 0, 1024),
  // Slack
  SLACK_API_URL: z.string().url().optional(),
  SLACK_ALLOWED_BOTS: list,
  SLACK_REPLY_IN_THREAD: bool(true),
  SLACK_PORT: z.coerce.number().int().min(0).max(65535).optional(),
  SLACK_STREAM: z.enum(['off', 'update']).default('off'),
  SLACK_MAX_FILE_MB: int(20, 0, 1024),
  // Collaboration
  REPLY_TIMEOUT_S: int(600, 1, MAX_TIMER_S),
  CHAT_REQUEST_TIMEOUT_S: int(600, 1, MAX_TIMER_S),
  PRIVACY: z.enum(['off', 'mentions']).default('off'),
  PRIVACY_ROOMS: list,
  PRIVATE_CHAT_LOG: filePath.optional(),
  // Platform messages
  EDIT_WAKE_MINUTES: int(5, 0, MAX_TIMER_S),
  // Health and metrics (off unless HEALTH_PORT is set)
  HEALTH_PORT: z.coerce.number().int().min(0).max(65535).optional(),
  HEALTH_HOST: z.string().default('127.0.0.1'),
  // The web room and operator console (off unless WEB_PORT is set)
  WEB_PORT: z.coerce.number().int().min(0).max(65535).optional(),
  WEB_HOST: z.string().default('127.0.0.1'),
  WEB_PUBLIC_URL: z
    .string()
    .url()
    .refine((value) => /^https?:\/\//i.test(value), 'expected an http:// or https:// address')
    .transform((value) => value.replace(/\/+$/, ''))
    .optional(),
  WEB_ROOMS: list
    .refine((rooms) => rooms.every((room) => ROOM_NAME.test(room)), {
      message: 'expected room names of letters, digits, _ and - (at most 40 characters each)',
    })
    .transform((rooms) => (rooms.length > 0 ? [...new Set(rooms.map((room) => room.toLowerCase()))] : ['general'])),
  WEB_SESSION_DAYS: int(30, 1, 3650),
  WEB_SESSION_IDLE_HOURS: int(72, 1, 87_600),
  WEB_MAX_FILE_MB: int(20, 0, 1024),
  WEB_TRUST_PROXY: list.refine((addresses) => addresses.every((address) => isIP(address) !== 0), {
    message: 'expected the addresses of reverse proxies (e.g. 127.0.0.1), comma separated',
  }),
});

export type Settings = z.output<typeof settingsSchema>;

/** Every variable name the bridge reads (docs tests check each is documented). */
export const SETTING_NAMES = Object.keys(settingsSchema.shape) as Array<keyof Settings>;

/** Letters to change, add or drop to turn one name into the other (Levenshtein). */
function distance(a: string, b: string): number {
  let row = Array.from({ length: b.length + 1 }, (_, i) => i);
  for (let i = 1; i <= a.length; i++) {
    const next = [i];
    for (let j = 1; j <= b.length; j++) {
      const cost = a[i - 1] === b[j - 1] ? 0 : 1;
      next.push(Math.min((row[j] ?? 0) + 1, (next[j - 1] ?? 0) + 1, (row[j - 1] ?? 0) + cost));
    }
    row = next;
  }
  return row[b.length] ?? 0;
}

/** `SANDBOX_*` variables `npm run sandbox:build` reads, not the bridge. */
const OTHER_SANDBOX_VARIABLES = new Set(['SANDBOX_MIRROR', 'SANDBOX_SUITE']);

/**
 * `SANDBOX_*` variables that are no setting (`SANDBOX_MEMROY`): not read, so the real one keeps its default without
 * a word. One warning each, with the nearest setting's name when it is close.
 */
export function misspeltSettings(env: Env): string[] {
  const known = SETTING_NAMES as readonly string[];
  return Object.keys(env)
    .filter((name) => name.startsWith('SANDBOX_') && !known.includes(name) && !OTHER_SANDBOX_VARIABLES.has(name))
    .sort()
    .map((name) => {
      const nearest = known
        .filter((setting) => setting.startsWith('SANDBOX_'))
        .map((setting) => ({ setting, far: distance(name, setting) }))
        .sort((x, y) => x.far - y.far)[0];
      const hint = nearest && nearest.far <= 3 ? `did you mean ${nearest.setting}? ` : '';
      return `${name} is not a setting, so it is not read (${hint}.env.example lists them all)`;
    });
}

/** Reads the global settings; an invalid value names the variable. */
export function readSettings(env: Env): Settings {
  const present: Record<string, string> = {};
  for (const key of Object.keys(settingsSchema.shape)) {
    const value = env[key];
    if (value !== undefined && value.trim() !== '') present[key] = value.trim();
  }
  const parsed = settingsSchema.safeParse(present);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    const field = String(issue?.path[0] ?? '?');
    throw new ConfigError(
      'environment',
      field,
      `${issue?.message ?? 'invalid'} (got ${JSON.stringify(present[field] && redact(present[field]))})`,
    );
  }
  refuseBindOnRemoteEngine(parsed.data);
  return parsed.data;
}

/** A remote engine resolves bind mounts on its own host, where DATA_DIR is not: its workspaces must be volumes. */
function refuseBindOnRemoteEngine(settings: Settings): void {
  const host = settings.DOCKER_HOST;
  if (settings.SANDBOX_WORKSPACES !== 'bind' || !host?.startsWith('tcp://')) return;
  throw new ConfigError(
    'environment',
    'SANDBOX_WORKSPACES',
    `bind cannot work with DOCKER_HOST=${host}: a remote engine cannot mount this machine's DATA_DIR; ` +
      'set SANDBOX_WORKSPACES=volume',
  );
}

/** This bridge's name among those sharing DATABASE_URL: REPLICA_ID, else the host name and the process id. */
export function replicaId(settings: Pick<Settings, 'REPLICA_ID'>): string {
  return settings.REPLICA_ID ?? `${hostname()}-${process.pid}`;
}
