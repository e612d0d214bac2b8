import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { type ApprovalRules, approvalRules } from '../access/approval-rules.js';
import type { AccessRule } from '../access/policy.js';
import { ConfigError } from '../errors.js';
import { rememberSecrets, urlSecrets } from '../secrets.js';
import { agentRule, globalRule } from './access.js';
import { type FrontMatter, KNOWN_TOOLS, parseAgentFile, RESERVED_NAMES, type ToolName } from './agent-file.js';
import { readDotenv } from './dotenv.js';
import { agentFiles } from './folders.js';
import { type McpServerConfig, mcpServersOf } from './mcp-servers.js';
import { type Env, misspeltSettings, readSettings, type Settings } from './settings.js';

/** seed 004: how an agent's context budget is shared, in percent (they add up to 100). */
export interface Allocations {
  readonly knowledge: number;
  readonly recentActions: number;
  readonly rooms: number;
}

export const DEFAULT_ALLOCATIONS: Allocations = { knowledge: 30, recentActions: 10, rooms: 60 };

/** US dollars per million tokens; cached input costs `input` when no cached price is given. */
export interface Price {
  readonly input: number;
  readonly cached: number;
  readonly output: number;
}

export interface AgentConfig {
  /** The agent is `@name` in every room. */
  readonly name: string;
  /** The file it was read from (for error messages). */
  readonly file: string;
  readonly model: string;
  readonly endpoint: string;
  readonly apiKey: string | undefined;
  readonly activation: 'always' | 'mention';
  readonly tools: readonly ToolName[];
  readonly temperature: number | undefined;
  readonly systemPrompt: string;
  /** Tokens the model takes, question and answer together: `context_tokens`, default MODEL_CONTEXT_TOKENS. */
  readonly contextTokens: number;
  readonly allocations: Allocations;
  /** For the cost estimate in /status and the spending limits. */
  readonly price?: Price | undefined;
  /** `spend_limit_usd_day`: the most this agent may spend in a day, in US dollars. */
  readonly spendLimitUsdDay?: number | undefined;
  /** `max_output_tokens` (default ANSWER_RESERVE_TOKENS): every call's output cap, sent as `max_tokens`. */
  readonly maxOutputTokens: number;
  readonly prompts: {
    readonly observe?: string | undefined;
    readonly requested?: string | undefined;
    readonly direct?: string | undefined;
  };
  /** `approvals:`, `bash_allow:`, `bash_deny:`: which of its actions wait for a person's approval (docs/trust.md). */
  readonly approvals?: ApprovalRules | undefined;
  /** `mcp:`: the MCP servers whose tools join its own (docs/mcp.md). */
  readonly mcp?: readonly McpServerConfig[] | undefined;
  /** `access:`: who may wake this agent, narrowing ACCESS_USERS / ACCESS_ROLES / ACCESS_CHANNELS (docs/trust.md). */
  readonly access?: AccessRule | undefined;
  readonly discord?: { readonly token: string; readonly control: boolean };
  readonly slack?: {
    readonly botToken: string;
    readonly appToken: string | undefined;
    readonly signingSecret: string | undefined;
    readonly control: boolean;
  };
}

export interface Config {
  readonly settings: Settings;
  /** Agents in configured order: agent files sorted by file name. */
  readonly agents: readonly AgentConfig[];
  /**
   * Every secret value read (API keys, tokens, signing secrets, credentials inside URLs); loading the
   * configuration makes them known to redaction (src/secrets.ts).
   */
  readonly secrets: readonly string[];
  /** What the operator should know of the configuration read (files it found and did not read). */
  readonly warnings?: readonly string[];
}

/** Reads `.env` (if present) under the real environment, which wins. */
export function environmentWithDotenv(cwd: string, env: Env = process.env): Env {
  const file = path.join(cwd, '.env');
  if (!existsSync(file)) return env;
  return { ...readDotenv(file), ...env };
}

function secretFrom(env: Env, variable: string, file: string, field: string): string {
  const value = env[variable]?.trim();
  if (!value) throw new ConfigError(file, field, `names ${variable}, which is not set`);
  return value;
}

/** `memory_allocations`: given keys replace the defaults, rooms takes what the other two leave unless given. */
function allocationsOf(file: string, given: FrontMatter['memory_allocations']): Allocations {
  const knowledge = given?.knowledge ?? DEFAULT_ALLOCATIONS.knowledge;
  const recentActions = given?.recent_actions ?? DEFAULT_ALLOCATIONS.recentActions;
  const rooms = given?.rooms ?? 100 - knowledge - recentActions;
  const sum = knowledge + recentActions + rooms;
  if (Math.abs(sum - 100) > 0.001) {
    throw new ConfigError(
      file,
      'memory_allocations',
      `knowledge + recent_actions + rooms must add up to 100 (got ${sum})`,
    );
  }
  if (rooms < 10) throw new ConfigError(file, 'memory_allocations.rooms', 'must be at least 10 (the room history)');
  return { knowledge, recentActions, rooms };
}

/** The agent's context budget; it must leave room beside the answer's reserve. */
function contextTokensOf(file: string, given: number | undefined, settings: Settings): number {
  const tokens = given ?? settings.MODEL_CONTEXT_TOKENS;
  if (tokens < settings.ANSWER_RESERVE_TOKENS + 1024) {
    const problem = `must be at least ANSWER_RESERVE_TOKENS (${settings.ANSWER_RESERVE_TOKENS}) + 1024 (got ${tokens})`;
    throw given !== undefined
      ? new ConfigError(file, 'context_tokens', problem)
      : new ConfigError('environment', 'MODEL_CONTEXT_TOKENS', problem);
  }
  return tokens;
}

/** Settings that decide which of the bridge's own calls (embeddings, summaries) need a price under a shared limit. */
export type PricedSettings = Pick<
  Settings,
  'EMBEDDINGS_MODEL' | 'EMBEDDINGS_PRICE' | 'SUMMARY_MODEL' | 'SUMMARY_PRICE'
>;

/** Something a bridge's or room's limit applies to that has no price: an agent, or an unpriced model of the bridge's. */
export interface Unpriced {
  readonly agent?: AgentConfig;
  /** The setting that would price it (`EMBEDDINGS_PRICE`, `SUMMARY_PRICE`); none for an agent. */
  readonly setting?: 'EMBEDDINGS_PRICE' | 'SUMMARY_PRICE';
}

/**
 * What a bridge's or a room's limit could not count, as start-up and `/budget` check it alike: the agents without
 * `price`, and embeddings or summaries in use without theirs.
 */
export function unpricedUnderSharedLimit(settings: PricedSettings, agents: readonly AgentConfig[]): Unpriced[] {
  const found: Unpriced[] = agents.filter((agent) => !agent.price).map((agent) => ({ agent }));
  if (settings.EMBEDDINGS_MODEL && settings.EMBEDDINGS_PRICE === undefined) found.push({ setting: 'EMBEDDINGS_PRICE' });
  if (settings.SUMMARY_MODEL && settings.SUMMARY_PRICE === undefined) found.push({ setting: 'SUMMARY_PRICE' });
  return found;
}

/**
 * A spending limit needs prices: every agent a limit applies to has `price` (the bridge's and each room's limits
 * apply to every agent), and embeddings and summaries are priced when they are used under one of those.
 */
function checkSpendLimits(settings: Settings, agents: readonly AgentConfig[]): void {
  const shared = settings.SPEND_LIMIT_USD_DAY !== undefined || settings.ROOM_SPEND_LIMIT_USD_DAY !== undefined;
  const which = settings.SPEND_LIMIT_USD_DAY !== undefined ? 'SPEND_LIMIT_USD_DAY' : 'ROOM_SPEND_LIMIT_USD_DAY';
  const limited = agents.find((agent) => !agent.price && agent.spendLimitUsdDay !== undefined);
  if (limited) {
    throw new ConfigError(
      limited.file,
      'price',
      'spend_limit_usd_day needs a price (input and output, USD per million tokens)',
    );
  }
  if (!shared) return;
  const [first] = unpricedUnderSharedLimit(settings, agents);
  if (first?.agent) {
    throw new ConfigError(
      first.agent.file,
      'price',
      `${which} applies to @${first.agent.name}, so it needs a price (input and output, USD per million tokens)`,
    );
  }
  if (first?.setting === 'EMBEDDINGS_PRICE') {
    throw new ConfigError(
      'environment',
      'EMBEDDINGS_PRICE',
      `${which} applies to embeddings too, so EMBEDDINGS_MODEL needs a price (USD per million tokens)`,
    );
  }
  if (first?.setting === 'SUMMARY_PRICE') {
    throw new ConfigError(
      'environment',
      'SUMMARY_PRICE',
      `${which} applies to summaries too, so SUMMARY_MODEL needs a price (input,output in USD per million tokens)`,
    );
  }
}

/** Where a platform token was read from. */
interface TokenSource {
  readonly file: string;
  readonly variable: string;
  readonly field: string;
}

/**
 * Each agent is its own bot: two agents on one token would be one identity answering as both (every message
 * received twice, each post under the same name). The second file is refused, naming the first.
 */
function sameToken(seen: Map<string, TokenSource>, token: string, source: TokenSource, what: string): void {
  const other = seen.get(token);
  if (!other) {
    seen.set(token, source);
    return;
  }
  const portal =
    what === 'bot' ? 'one application per agent in the developer portal' : 'create one per agent at api.slack.com/apps';
  throw new ConfigError(
    source.file,
    source.field,
    `${source.variable} holds the same ${what} token as ${other.variable} of ${other.file}: each agent is its own ` +
      `${what}, with its own token (${portal})`,
  );
}

/** Loads and validates everything; the first problem found throws a ConfigError naming file and field. */
export function loadConfig(env: Env, cwd = process.cwd()): Config {
  const settings = readSettings(env);
  globalRule(settings); // a group ACCESS_GROUPS does not define names the setting now, not at the first message
  const agentsDir = path.resolve(cwd, settings.AGENTS_DIR);
  const { files, nested } = agentFiles(agentsDir);
  if (files.length === 0) {
    const below = nested.length > 0 ? ` (only in subfolders, which are not read: ${nested.join(', ')})` : '';
    throw new ConfigError(agentsDir, undefined, `no agent files (*.md) found${below}`);
  }
  const warnings = [
    ...misspeltSettings(env),
    ...(nested.length > 0
      ? [
          `agent files in subfolders of ${settings.AGENTS_DIR} are not read: ${nested.join(', ')} (move them up to use them)`,
        ]
      : []),
  ];

  const agents: AgentConfig[] = [];
  const secrets: string[] = [];
  const seen = new Map<string, string>();
  const botTokens = new Map<string, TokenSource>();
  for (const fileName of files) {
    const file = path.join(settings.AGENTS_DIR, fileName);
    const { front, body } = parseAgentFile(file, readFileSync(path.join(agentsDir, fileName), 'utf8'));
    const key = front.name.toLowerCase();
    const reserved = Object.hasOwn(RESERVED_NAMES, key) ? RESERVED_NAMES[key] : undefined;
    if (reserved) {
      throw new ConfigError(
        file,
        'name',
        `"${front.name}" is reserved: ${reserved}, so an agent of that name could not be told apart`,
      );
    }
    const other = seen.get(key);
    if (other) throw new ConfigError(file, 'name', `"${front.name}" is already used by ${other}`);
    seen.set(key, file);
    for (const [index, tool] of front.tools.entries()) {
      if (!(KNOWN_TOOLS as readonly string[]).includes(tool)) {
        throw new ConfigError(file, `tools.${index}`, `unknown tool "${tool}" (known: ${KNOWN_TOOLS.join(', ')})`);
      }
    }
    if (!body) throw new ConfigError(file, 'body', 'the system prompt (text after the front matter) is empty');
    const apiKey = front.api_key_env
      ? secretFrom(env, front.api_key_env, file, 'api_key_env')
      : settings.OPENAI_API_KEY;
    if (apiKey) secrets.push(apiKey);

    const mcp = mcpServersOf(file, front.mcp, env, secrets);

    let discord: AgentConfig['discord'];
    if (front.discord) {
      const token = secretFrom(env, front.discord.token_env, file, 'discord.token_env');
      secrets.push(token);
      sameToken(botTokens, token, { file, variable: front.discord.token_env, field: 'discord.token_env' }, 'bot');
      discord = { token, control: front.discord.control ?? front.control ?? false };
    }
    let slack: AgentConfig['slack'];
    if (front.slack) {
      const botToken = secretFrom(env, front.slack.bot_token_env, file, 'slack.bot_token_env');
      const appToken = front.slack.app_token_env
        ? secretFrom(env, front.slack.app_token_env, file, 'slack.app_token_env')
        : undefined;
      const signingSecret = front.slack.signing_secret_env
        ? secretFrom(env, front.slack.signing_secret_env, file, 'slack.signing_secret_env')
        : undefined;
      if (!appToken && !signingSecret) {
        throw new ConfigError(file, 'slack', 'needs app_token_env (Socket Mode) or signing_secret_env (HTTP mode)');
      }
      secrets.push(botToken, ...[appToken, signingSecret].filter((s): s is string => Boolean(s)));
      sameToken(
        botTokens,
        botToken,
        { file, variable: front.slack.bot_token_env, field: 'slack.bot_token_env' },
        'Slack app',
      );
      slack = { botToken, appToken, signingSecret, control: front.slack.control ?? front.control ?? false };
    }

    agents.push({
      name: front.name,
      file,
      model: front.model,
      endpoint: front.endpoint ?? settings.OPENAI_BASE_URL,
      apiKey,
      activation: front.activation,
      tools: front.tools as ToolName[],
      temperature: front.temperature,
      systemPrompt: body,
      contextTokens: contextTokensOf(file, front.context_tokens, settings),
      allocations: allocationsOf(file, front.memory_allocations),
      ...(front.price
        ? {
            price: {
              input: front.price.input,
              cached: front.price.cached ?? front.price.input,
              output: front.price.output,
            },
          }
        : {}),
      ...(front.spend_limit_usd_day !== undefined ? { spendLimitUsdDay: front.spend_limit_usd_day } : {}),
      maxOutputTokens: front.max_output_tokens ?? Math.max(1, settings.ANSWER_RESERVE_TOKENS),
      prompts: front.prompts ?? {},
      ...(front.access ? { access: agentRule(settings, file, front.access) } : {}),
      mcp,
      ...(front.approvals || front.bash_allow || front.bash_deny || front.spend_threshold_usd !== undefined
        ? {
            approvals: approvalRules(
              file,
              front,
              mcp.map((server) => server.name),
            ),
          }
        : {}),
      ...(discord ? { discord } : {}),
      ...(slack ? { slack } : {}),
    });
  }
  checkSpendLimits(settings, agents);
  const urls = [
    settings.OPENAI_BASE_URL,
    settings.DISCORD_API_URL,
    settings.SLACK_API_URL,
    ...agents.map((a) => a.endpoint),
  ];
  for (const url of urls) if (url) secrets.push(...urlSecrets(url));
  if (settings.DATABASE_URL) secrets.push(...urlSecrets(settings.DATABASE_URL, { userIsSecret: false }));
  rememberSecrets(secrets);
  return { settings, agents, secrets: [...new Set(secrets)], warnings };
}
